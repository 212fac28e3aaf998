/**
 * Drives `coworker start` in-process as the CLI runs it (runCli with the default assembly) on
 * piped stdin / stdout, with an injectable signal source, a temp data dir and workspace, the ops
 * server on port 0 and the model at a fake OpenAI server. Waits are on output conditions.
 */
import { EventEmitter } from "node:events";
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Writable } from "node:stream";
import type { CliIo } from "../../src/cli/cli-io.js";
import { runCli } from "../../src/cli/run-cli.js";
import type { Env } from "../../src/config/env-overrides.js";
import { testIo } from "../cli/io.js";

/** A temp project: its data dir and workspace, and a config with the ops server on port 0. */
export interface Project {
  readonly dir: string;
  readonly dataDir: string;
  readonly workspace: string;
  readonly configPath: string;
}

/** Create a project; `yaml` is appended to the config (after the `ops:` and `server:` settings). */
export function makeProject(yaml = "", graceS = 5): Project {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "coworker-app-")));
  const dataDir = join(dir, "data");
  const workspace = join(dir, "workspace");
  mkdirSync(workspace);
  const configPath = join(dir, "coworker.yaml");
  writeFileSync(configPath, `ops:\n  port: 0\nserver:\n  shutdown_grace_s: ${graceS}\n${yaml}`);
  return { dir, dataDir, workspace, configPath };
}

/** One running `coworker start`. */
export interface RunningCoworker {
  readonly stdin: Writable;
  readonly signals: EventEmitter;
  /** The exit code `coworker start` returned. */
  readonly exited: Promise<number>;
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout contains `text` (searched from `from`); rejects if the run exits first. */
  waitForStdout(text: string, from?: number): Promise<void>;
  /** The ops server URL from the banner. */
  opsUrl(): Promise<string>;
}

function waitFor(
  stream: NodeJS.EventEmitter,
  read: () => string,
  test: (text: string) => boolean,
  exited: Promise<number>,
  what: string,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (!test(read())) return;
      stream.off("data", onData);
      resolve();
    };
    // Listeners run in registration order: the TestIo collector has already appended the chunk.
    const onData = (): void => check();
    stream.on("data", onData);
    check();
    void exited.then((code) => {
      stream.off("data", onData);
      if (!test(read())) reject(new Error(`coworker exited (${code}) before ${what}; stdout:\n${read()}`));
    });
  });
}

/**
 * `coworker start` on `project`, with `env` besides the project's paths (and `io` hooks): its IO,
 * signal source and exit.
 */
export function startCoworker(project: Project, env: Env = {}, io: Partial<CliIo> = {}) {
  const signals = new EventEmitter();
  const t = testIo(
    project.dir,
    {
      COWORKER_CONFIG: project.configPath,
      COWORKER_DATA_DIR: project.dataDir,
      COWORKER_WORKSPACE: project.workspace,
      ...env,
    },
    { signals, ...io },
  );
  return { t, signals, exited: runCli(["start"], t.io) };
}

/** Start `coworker start` on `project` against the model at `baseURL`. */
export function runCoworker(project: Project, baseURL: string): RunningCoworker {
  const { t, signals, exited } = startCoworker(project, { OPENAI_BASE_URL: baseURL });
  return {
    stdin: t.stdin,
    signals,
    exited,
    stdout: t.stdout,
    stderr: t.stderr,
    waitForStdout: (text, from = 0) =>
      waitFor(t.io.stdout, t.stdout, (out) => out.indexOf(text, from) >= 0, exited, `"${text}"`),
    opsUrl: async () => {
      const pattern = /ops {7}(http:\/\/127\.0\.0\.1:\d+)/;
      await waitFor(t.io.stderr, t.stderr, (err) => pattern.test(err), exited, "the banner");
      return pattern.exec(t.stderr())?.[1] ?? "";
    },
  };
}

/** The value of one sample in Prometheus exposition text (undefined when absent). */
export function sample(
  metrics: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const line of metrics.split("\n")) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[2] ?? "").matchAll(/([a-z_]+)="([^"]*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) return Number(match[3]);
  }
  return undefined;
}
