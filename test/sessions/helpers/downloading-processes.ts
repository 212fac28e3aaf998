/**
 * Service processes for tests of the download rule across restarts: each a real SessionManager on
 * the SQLite store of a data folder, whose scripted model calls a shell tool that records what a
 * command downloads as run_command does (recordDownloads) without running anything, so a later
 * command running a downloaded file must wait for a person — in this process or the next one.
 */
import type { Logger } from "pino";
import { z } from "zod";
import { defineTool, ok } from "../../../src/core/tool.js";
import type { ThreadTarget } from "../../../src/core/thread-target.js";
import type { SessionManager } from "../../../src/sessions/session-manager.js";
import type { Store } from "../../../src/store/store.js";
import { recordDownloads } from "../../../src/tools/shell/downloads.js";
import { ToolRegistry } from "../../../src/tools/registry.js";
import { RecordingOutputs } from "../../support/recording-output.js";
import { type ScriptedStep, ScriptedProvider } from "../../support/scripted-provider.js";
import { buildSessionManager, engineFactory } from "../../support/session-stack.js";
import { ANA, message, openStore } from "./harness.js";

/** What a process runs with. */
export interface DownloadingProcessSetup {
  /** The model's steps, in order. */
  readonly steps: readonly ScriptedStep[];
  /** The folder the shell tool records downloads relative to. */
  readonly downloadRoot: string;
  /** The workspace's root (default: the data folder). */
  readonly workspaceRoot?: string;
  readonly logger?: Logger;
}

/** A started process: its manager, what it showed, the shell commands it ran, and its store. */
export interface DownloadingProcess {
  readonly manager: SessionManager;
  readonly outputs: RecordingOutputs;
  readonly ran: string[];
  readonly store: Store;
}

/** The processes a test started; `stopAll` (in afterEach) drains and closes what is still running. */
export class DownloadingProcesses {
  private running: DownloadingProcess[] = [];

  /** Open the SQLite store in `dataDir` and start a process on it. */
  async start(dataDir: string, setup: DownloadingProcessSetup): Promise<DownloadingProcess> {
    const store = await openStore(dataDir);
    const ran: string[] = [];
    const registry = new ToolRegistry();
    registry.register(
      defineTool({
        name: "shell",
        description: "run a shell command (test): records what it downloads, as run_command does",
        inputSchema: z.object({ command: z.string() }),
        category: "exec",
        risk: "high",
        grantKey: "command",
        concurrent: false,
        async execute(args, ctx) {
          ran.push(args.command);
          await recordDownloads(args.command, setup.downloadRoot, ctx.facts);
          return ok("done");
        },
      }),
    );
    const manager = buildSessionManager({
      store,
      createEngine: engineFactory(new ScriptedProvider(setup.steps), registry),
      dataDir,
      workspaceRoot: setup.workspaceRoot,
      model: "test-model",
      provider: "scripted",
      maxSessionsInMemory: 50,
      logger: setup.logger,
    });
    const outputs = new RecordingOutputs();
    manager.registerOutput("slack", outputs.factory);
    const process = { manager, outputs, ran, store };
    this.running.push(process);
    await manager.start();
    return process;
  }

  /** Stop one process (its sessions drained, its store closed). */
  async stop(process: DownloadingProcess): Promise<void> {
    this.running = this.running.filter((running) => running !== process);
    await process.manager.drain(0);
    await process.store.close();
  }

  /** Stop every process still running. */
  async stopAll(): Promise<void> {
    for (const process of [...this.running]) await this.stop(process);
  }
}

/** `text` sent in `target`; resolves once a card asks a person or the turn ends. */
export async function asksOrEnds(
  process: DownloadingProcess,
  text: string,
  target: ThreadTarget,
): Promise<"asked" | "ended"> {
  const output = process.outputs.for(target);
  const cards = output.cards.length;
  const turns = output.closedTurns.length;
  await process.manager.receive(message(text, { target }));
  return process.outputs.until(
    () => (output.cards.length > cards ? "asked" : output.closedTurns.length > turns ? "ended" : undefined),
    "a card or the turn's end",
  );
}

/**
 * Open a session in `target` with a first message ("hello", the model's first step answering it)
 * and put it in auto mode as its owner (Ana, in her DM), where only the download rule still asks.
 */
export async function inAutoMode(process: DownloadingProcess, target: ThreadTarget): Promise<void> {
  await process.manager.receive(message("hello", { target }));
  await process.manager.idle();
  await process.manager.command(target, ANA, "mode", ["auto"]);
}
