/**
 * run_command {command, timeout_s?}: `bash -c` in the workspace, inside the configured sandbox
 * (bubblewrap unless explicitly off), under per-command resource limits, in its own process
 * group, with a clean environment. Live output lines become tool-output events; the result keeps
 * the head and tail of the output with an omission marker and reports the exit code. A timeout or
 * an interrupt stops the whole group (SIGTERM, then SIGKILL). Downloads (downloads.ts: curl, wget,
 * aria2c, HTTPie, xh, clones and extractions, and what the command added to the folders they fill)
 * are recorded in the facts. When the sandbox cannot run here, the tool answers "shell
 * unavailable: …". In the sandbox, uploads/ shows only the calling conversation's folders
 * (conversation-uploads.ts), and the steering files (`.coworker/`, AGENTS.md) are read-only
 * (steering-mounts.ts) — and so is each folder holding a link on the way to one (the workspace
 * root, when `.coworker` or AGENTS.md is a link) but for its files and folders, which a failed
 * command's result then says; unsandboxed, none of it holds.
 */
import { settlesWithin } from "../../core/settles-within.js";
import { type ChildProcessByStdio, type StdioPipe, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { z } from "zod";
import type { WorkspacePaths } from "../files/workspace-paths.js";
import { DEFAULT_TOOL_OUTPUT_CHARS, HeadTailBuffer } from "../output-cap.js";
import { defineTool, labelText, type ToolContext, type ToolResult } from "../../core/tool.js";
import { threadTargetOf } from "../session-target.js";
import { cleanEnv } from "./clean-env.js";
import { uploadsMask } from "./conversation-uploads.js";
import { bubblewrapBackend } from "./bubblewrap-backend.js";
import { listDownloadFolders, recordDownloads } from "./downloads.js";
import { killProcessGroup } from "./process-group.js";
import { DEFAULT_RESOURCE_LIMITS, limitedBashArgv, type ResourceLimits } from "./resource-limits.js";
import {
  PLAN_INPUT_FD,
  type SandboxBackend,
  type SandboxRequest,
  type SandboxStatus,
} from "./sandbox-backend.js";
import { steeringMounts } from "./steering-mounts.js";

/** The tool's name; its label (the command) speaks for itself in status lines. */
export const RUN_COMMAND = "run_command";

/** What a confining sandbox hides or keeps read-only of the roots for one command. */
type Confinement = Pick<SandboxRequest, "masked" | "readOnly">;

/** Limits and environment of run_command (config: tools.run_command). */
export interface RunCommandOptions {
  readonly paths: WorkspacePaths;
  /** Default 120 s. */
  readonly defaultTimeoutS?: number;
  /** Longer requested timeouts are cut to this (default 600 s). */
  readonly maxTimeoutS?: number;
  /** Output kept for the model: head + tail (default 30,000 characters). */
  readonly outputMaxChars?: number;
  /** Between SIGTERM and SIGKILL (default 2000 ms). */
  readonly killGraceMs?: number;
  /** After the shell exits, how long background processes may keep the output open (default 500 ms). */
  readonly drainMs?: number;
  /** Live output lines sent as events before they are summarised (default 1000). */
  readonly maxLiveLines?: number;
  /** Extra variables for the command's environment (never copied from the service's own). */
  readonly env?: Readonly<Record<string, string>>;
  /** Where commands run (default: bubblewrap, no network, nothing hidden beyond its defaults). */
  readonly sandbox?: SandboxBackend;
  /** Per-command limits (default DEFAULT_RESOURCE_LIMITS). */
  readonly limits?: ResourceLimits;
}

const runCommandSchema = z.object({
  command: z.string().min(1).describe("A bash command line, run in the workspace directory"),
  timeout_s: z.number().positive().optional().describe("Seconds before the command is stopped (default 120)"),
});

const MAX_LIVE_LINE_CHARS = 1000;

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stoppedBackground: boolean;
}

/**
 * Feed a child's output into the capped buffer (as chunks, so one endless line costs bounded
 * memory) and report complete lines for live display, each cut to MAX_LIVE_LINE_CHARS.
 */
function forwardOutput(stream: Readable, output: HeadTailBuffer, onLine: (line: string) => void): void {
  let partial = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    output.push(chunk);
    const lines = (partial + chunk).split("\n");
    partial = (lines.pop() ?? "").slice(0, MAX_LIVE_LINE_CHARS);
    for (const line of lines) onLine(line.replace(/\r$/, "").slice(0, MAX_LIVE_LINE_CHARS));
  });
  stream.on("end", () => {
    if (partial !== "") onLine(partial);
  });
}

function statusLine(outcome: Outcome, stop: "timeout" | "interrupt" | undefined, timeoutS: number): string {
  if (stop === "timeout")
    return `[timed out after ${timeoutS} s; the command and its child processes were stopped]`;
  if (stop === "interrupt") return "[interrupted; the command and its child processes were stopped]";
  if (outcome.code !== null) return `[exit code ${outcome.code}]`;
  return `[killed by ${outcome.signal ?? "a signal"}]`;
}

/**
 * Write a plan's input to the pipe its program reads it on and close it. A program that exits
 * before reading all of it breaks the pipe: its exit status reports that, not this write. What
 * comes back on the pipe (nothing, from bwrap) is read and dropped, so the pipe ends and closes.
 */
function passInput(pipe: Writable & Readable, input: string): void {
  pipe.on("error", () => undefined);
  pipe.resume();
  pipe.end(input);
}

/** The status-line reason of a failed run: "exit 1", "timed out after 120 s", "killed by SIGKILL". */
function failureSummary(
  outcome: Outcome,
  stop: "timeout" | "interrupt" | undefined,
  timeoutS: number,
): string {
  if (stop === "timeout") return `timed out after ${timeoutS} s`;
  if (stop === "interrupt") return "interrupted";
  if (outcome.code !== null) return `exit ${outcome.code}`;
  return `killed by ${outcome.signal ?? "a signal"}`;
}

/** The answer to the model when the sandbox cannot run here. */
function unavailable(status: Extract<SandboxStatus, { kind: "unavailable" }>): ToolResult {
  return {
    ok: false,
    output: `shell unavailable: ${status.reason}. Commands cannot run until an operator fixes this (${status.fix}).`,
    summary: "shell unavailable",
  };
}

/** What an approval card adds about confinement: only the exceptions are worth a person's eye. */
function cardNote(status: SandboxStatus): string {
  if (status.kind === "unsandboxed")
    return " — UNSANDBOXED: it can read and change everything this service can";
  if (status.kind === "unavailable") return ` — the shell is unavailable (${status.reason})`;
  return "";
}

/** Build the run_command tool. */
export function createRunCommandTool(options: RunCommandOptions) {
  const defaultTimeoutS = options.defaultTimeoutS ?? 120;
  const maxTimeoutS = options.maxTimeoutS ?? 600;
  const outputMaxChars = options.outputMaxChars ?? DEFAULT_TOOL_OUTPUT_CHARS;
  const killGraceMs = options.killGraceMs ?? 2000;
  const drainMs = options.drainMs ?? 500;
  const maxLiveLines = options.maxLiveLines ?? 1000;
  const sandbox = options.sandbox ?? bubblewrapBackend();
  const limits = options.limits ?? DEFAULT_RESOURCE_LIMITS;

  const run = async (
    command: string,
    timeoutS: number,
    context: ToolContext,
    confinement: Confinement,
  ): Promise<ToolResult> => {
    const cwd = options.paths.root;
    const output = new HeadTailBuffer(Math.floor(outputMaxChars / 2), Math.ceil(outputMaxChars / 2));
    let liveLines = 0;
    const onLine = (line: string) => {
      liveLines += 1;
      if (liveLines <= maxLiveLines) context.emitOutput(line.slice(0, MAX_LIVE_LINE_CHARS));
      else if (liveLines === maxLiveLines + 1)
        context.emitOutput("… (more output; the result will show its end)");
    };
    const roots = await options.paths.realRoots().catch(() => [cwd]);
    // Before it runs, so what it adds where it downloads under a name the line does not give is
    // recorded (a best effort: the folders themselves are recorded whatever happens here).
    const listed = await listDownloadFolders(command, cwd, context.facts).catch(() => []);
    // The real path: the sandbox binds the roots at their real paths only.
    const plan = await sandbox.plan({
      argv: limitedBashArgv(command, limits),
      cwd: roots[0] ?? cwd,
      env: cleanEnv(options.env),
      roots,
      ...confinement,
    });
    // stdout and stderr are pipes either way; a plan with input gets a pipe after them for it.
    const input: StdioPipe[] = plan.input === undefined ? [] : ["pipe"];
    const child = spawn(plan.file, plan.args, {
      cwd: plan.cwd,
      env: plan.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe", ...input],
    }) as ChildProcessByStdio<null, Readable, Readable>;
    if (plan.input !== undefined) passInput(child.stdio[PLAN_INPUT_FD] as Writable & Readable, plan.input);
    const exited = new Promise<Outcome>((resolve) =>
      child.once("exit", (code, signal) => resolve({ code, signal, stoppedBackground: false })),
    );
    const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
    const spawnError = await new Promise<Error | undefined>((resolve) => {
      child.once("spawn", () => resolve(undefined));
      child.on("error", resolve);
    });
    if (spawnError)
      return {
        ok: false,
        output: `could not start bash in ${cwd}: ${spawnError.message}`,
        summary: "could not start",
      };
    const pgid = child.pid as number;
    forwardOutput(child.stdout, output, onLine);
    forwardOutput(child.stderr, output, onLine);

    let stop: "timeout" | "interrupt" | undefined;
    let killing: Promise<boolean> | undefined;
    const terminate = (reason: "timeout" | "interrupt") => {
      stop ??= reason;
      killing ??= killProcessGroup(pgid, killGraceMs);
    };
    const timer = setTimeout(() => terminate("timeout"), timeoutS * 1000);
    const onAbort = () => terminate("interrupt");
    if (context.signal.aborted) onAbort();
    else context.signal.addEventListener("abort", onAbort, { once: true });

    try {
      const outcome = await exited;
      const drained = await settlesWithin(closed, drainMs);
      if (!drained) {
        outcome.stoppedBackground = true;
        killing ??= killProcessGroup(pgid, killGraceMs);
        child.stdout.destroy();
        child.stderr.destroy();
      }
      await killing;
      await recordDownloads(command, cwd, context.facts, listed);
      const text = output.receivedChars === 0 ? "(no output)" : output.toString().replace(/\n$/, "");
      const notes = [statusLine(outcome, stop, timeoutS)];
      if (outcome.stoppedBackground && !stop) {
        notes.push("[background processes still holding the output were stopped]");
      }
      const ok = !stop && outcome.code === 0;
      const result = { ok, output: `${text}\n${notes.join("\n")}` };
      return ok ? result : { ...result, summary: failureSummary(outcome, stop, timeoutS) };
    } finally {
      clearTimeout(timer);
      context.signal.removeEventListener("abort", onAbort);
    }
  };

  return defineTool({
    name: RUN_COMMAND,
    description:
      "Run a bash command in the workspace directory and return its output and exit code. " +
      "No interactive input; the environment holds no credentials. Long output is shortened to " +
      `its start and end. Stopped after timeout_s seconds (default ${defaultTimeoutS}, at most ${maxTimeoutS}).`,
    inputSchema: runCommandSchema,
    category: "exec",
    risk: "high",
    concurrent: false,
    grantKey: "command",
    label: (args) => labelText(args.command),
    async execute(args, context) {
      const status = await sandbox.status();
      if (status.kind === "unavailable") return unavailable(status);
      const requested = args.timeout_s ?? defaultTimeoutS;
      const timeoutS = Math.min(requested, maxTimeoutS);
      // Only a sandbox can hide the other conversations' uploads and keep the steering files
      // read-only: nothing is made on the host for them otherwise.
      const sandboxed = status.kind === "sandboxed";
      const masked = sandboxed
        ? await uploadsMask(options.paths, threadTargetOf(context.request))
        : undefined;
      const steering = sandboxed ? await steeringMounts(options.paths, masked) : undefined;
      if (steering?.refusal !== undefined)
        return { ok: false, output: steering.refusal, summary: "too many entries to lock" };
      let result: ToolResult;
      try {
        result = await run(args.command, timeoutS, context, { masked, readOnly: steering?.readOnly });
      } finally {
        steering?.release();
      }
      // A failure may come from a locked folder (steering-mounts.ts): say so.
      if (!result.ok && steering?.note !== undefined)
        result = { ...result, output: `${result.output}\n${steering.note}` };
      if (requested <= maxTimeoutS) return result;
      return {
        ...result,
        output: `[timeout_s ${requested} is above the maximum; using ${maxTimeoutS} s]\n${result.output}`,
      };
    },
    async preview(args) {
      const timeout =
        args.timeout_s === undefined ? "" : ` (timeout ${Math.min(args.timeout_s, maxTimeoutS)} s)`;
      return {
        summary: `Run a command in the workspace${timeout}${cardNote(await sandbox.status())}`,
        detail: { kind: "code", text: args.command },
      };
    },
  });
}
