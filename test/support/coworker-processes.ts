/**
 * Test support: several real Coworker processes (`node dist/cli.js start`, child processes of the
 * test) on one real redis-server, against the fake Slack (one Socket Mode connection per process,
 * each known by its label), the fake Telegram and the fake OpenAI on 127.0.0.1. Each process gets
 * COWORKER_STORE_URL=redis://…, COWORKER_OPS_PORT=0, one shared data dir and workspace (a shared
 * volume, as in docker-compose) and its JSON log lines kept for waits. The tests kill (-9), freeze
 * (SIGSTOP) and resume processes; `close` ends every child it started.
 *
 * `store: "sqlite"` runs without Redis (one process; the scale bench's baseline).
 * Needs `npm run build` first (npm test builds before vitest, so dist/ exists in CI).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeHandler, type FakeOpenAI, startFakeOpenAI } from "../fakes/fake-openai.js";
import { type FakeSlack, type FakeSlackOptions, startFakeSlack } from "../fakes/fake-slack/index.js";
import {
  type FakeTelegram,
  type FakeTelegramOptions,
  startFakeTelegram,
} from "../fakes/fake-telegram/fake-telegram.js";
import { type RedisServer, startRedisServer } from "./redis-server.js";
import { REPO_ROOT } from "./repo-root.js";

const CLI = join(REPO_ROOT, "dist", "cli.js");

/** One pino JSON log line of a process. */
// biome-ignore lint/suspicious/noExplicitAny: arbitrary log fields, read by tests without ceremony
export type LogLine = { level: number; msg: string; [field: string]: any };

/** One running `coworker start` child. */
export interface CoworkerProcess {
  /** Its name: the fake Slack connection label, and its place in the tests' messages. */
  readonly label: string;
  readonly child: ChildProcess;
  /** Resolves with the exit code (or the signal's name) once the child is gone. */
  readonly exited: Promise<number | string>;
  /** Its JSON log lines so far. */
  logs(): LogLine[];
  /** What it wrote to stderr (the banner, start-up failures). */
  stderr(): string;
  /** The first log line `predicate` accepts (waiting for it); rejects when the process exits first. */
  waitForLog(
    predicate: (line: LogLine) => boolean,
    description: string,
    timeoutMs?: number,
  ): Promise<LogLine>;
  /** The ops server URL from the banner. */
  opsUrl(): Promise<string>;
  signal(signal: NodeJS.Signals): void;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>;
}

export interface ClusterOptions {
  /** How many processes `startCoworkers` starts (more can be added with `cluster.start`). */
  readonly count: number;
  /** The fake model's behaviour. */
  readonly model: FakeHandler;
  /** Run the Slack channel (Socket Mode) against a fake Slack with these options. */
  readonly slack?: FakeSlackOptions;
  /** Run the Telegram channel (long polling) against a fake Telegram with these options. */
  readonly telegram?: FakeTelegramOptions;
  /** Appended to every process's coworker.yaml. */
  readonly yaml?: string;
  /** More environment for every process. */
  readonly env?: Readonly<Record<string, string>>;
  /** "sqlite": no Redis, the default SQLite file in the data dir (one process only). Default "redis". */
  readonly store?: "redis" | "sqlite";
  /** Node options for every process (e.g. `--cpu-prof`, which NODE_OPTIONS does not accept). */
  readonly nodeArgs?: readonly string[];
}

/** The processes, the services they share and the fakes they talk to. */
export interface CoworkerCluster {
  /** The shared redis-server (undefined on SQLite). */
  readonly redis: RedisServer | undefined;
  readonly openai: FakeOpenAI;
  readonly slack: FakeSlack | undefined;
  readonly telegram: FakeTelegram | undefined;
  readonly workspace: string;
  readonly dataDir: string;
  /** Every process started so far, killed ones included. */
  readonly processes: CoworkerProcess[];
  /** Processes that have not exited. */
  alive(): CoworkerProcess[];
  /** Start one more process and wait until it is connected. */
  start(label?: string): Promise<CoworkerProcess>;
  /** Stop every process (SIGKILL after a grace), the fakes and Redis; removes the temp dirs. */
  close(): Promise<void>;
}

const READY_TIMEOUT_MS = 30_000;
const everyChild = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of everyChild) child.kill("SIGKILL");
});

/** Start Redis, the fakes and `options.count` Coworker processes, each connected before this resolves. */
export async function startCoworkers(options: ClusterOptions): Promise<CoworkerCluster> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  const redis = options.store === "sqlite" ? undefined : await startRedisServer();
  const openai = await startFakeOpenAI(options.model);
  const slack = options.slack ? await startFakeSlack(options.slack) : undefined;
  const telegram = options.telegram ? await startFakeTelegram(options.telegram) : undefined;
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "coworker-procs-")));
  const workspace = join(dir, "workspace");
  const dataDir = join(dir, "data");
  mkdirSync(workspace);
  const configPath = join(dir, "coworker.yaml");
  writeFileSync(configPath, `server:\n  shutdown_grace_s: 2\n${options.yaml ?? ""}`);
  const processes: CoworkerProcess[] = [];

  const env = (label: string): Record<string, string> => ({
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: dir,
    COWORKER_CONFIG: configPath,
    COWORKER_DATA_DIR: dataDir,
    COWORKER_WORKSPACE: workspace,
    ...(redis ? { COWORKER_STORE_URL: redis.url } : {}),
    COWORKER_OPS_PORT: "0",
    COWORKER_SHELL_SANDBOX: "off",
    OPENAI_API_KEY: "sk-test",
    COWORKER_MODEL: "fake-model",
    OPENAI_BASE_URL: openai.baseURL,
    ...(slack
      ? {
          SLACK_BOT_TOKEN: slack.state.botToken,
          SLACK_APP_TOKEN: slack.state.appToken,
          SLACK_API_URL: slack.apiUrlFor(label),
        }
      : {}),
    ...(telegram ? { TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot } : {}),
    ...options.env,
  });

  const start = async (label = `p${processes.length + 1}`): Promise<CoworkerProcess> => {
    const running = spawnCoworker(label, env(label), dir, options.nodeArgs ?? []);
    processes.push(running);
    await running.opsUrl();
    if (slack) {
      await Promise.race([
        slack.waitFor(
          () => slack.socket.labels.includes(label),
          `${label}'s Socket Mode connection`,
          READY_TIMEOUT_MS,
        ),
        running.exited.then((code) => {
          throw new Error(`${label} exited (${code}) before connecting:\n${running.stderr()}`);
        }),
      ]);
    }
    if (telegram) await running.waitForLog((line) => line.msg === "telegram started", "telegram started");
    return running;
  };

  await Promise.all(Array.from({ length: options.count }, (_, i) => start(`p${i + 1}`)));
  const alive = () => processes.filter((p) => p.child.exitCode === null && p.child.signalCode === null);
  return {
    redis,
    openai,
    slack,
    telegram,
    workspace,
    dataDir,
    processes,
    alive,
    start,
    async close() {
      for (const running of alive()) running.signal("SIGCONT");
      await Promise.all(
        alive().map(async (running) => {
          const killer = setTimeout(() => running.signal("SIGKILL"), 5_000);
          await running.stop();
          clearTimeout(killer);
        }),
      );
      await slack?.close();
      await telegram?.close();
      await openai.close();
      await redis?.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function spawnCoworker(
  label: string,
  env: Record<string, string>,
  cwd: string,
  nodeArgs: readonly string[],
): CoworkerProcess {
  const child = spawn(process.execPath, [...nodeArgs, CLI, "start"], {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  everyChild.add(child);
  const lines: LogLine[] = [];
  const listeners = new Set<() => void>();
  let partial = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    partial += chunk.toString();
    const complete = partial.split("\n");
    partial = complete.pop() ?? "";
    for (const text of complete) {
      if (!text.startsWith("{")) continue;
      try {
        lines.push(JSON.parse(text) as LogLine);
      } catch {
        // a line that is not JSON is not a log line
      }
    }
    for (const listener of listeners) listener();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
    for (const listener of listeners) listener();
  });
  const exited = new Promise<number | string>((resolve) =>
    child.once("exit", (code, signal) => {
      everyChild.delete(child);
      for (const listener of listeners) listener();
      resolve(code ?? signal ?? "unknown");
    }),
  );
  const gone = () => child.exitCode !== null || child.signalCode !== null;

  const waitUntil = <T>(find: () => T | undefined, description: string, timeoutMs: number): Promise<T> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const found = find();
        if (found !== undefined) {
          done();
          resolve(found);
        } else if (gone()) {
          done();
          reject(new Error(`${label} exited before ${description}; stderr:\n${stderr}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${label}: timed out waiting for ${description}; stderr:\n${stderr.slice(-2_000)}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });

  const opsPattern = /ops {7}(http:\/\/127\.0\.0\.1:\d+)/;
  return {
    label,
    child,
    exited,
    logs: () => lines,
    stderr: () => stderr,
    waitForLog: (predicate, description, timeoutMs = READY_TIMEOUT_MS) =>
      waitUntil(() => lines.find(predicate), description, timeoutMs),
    opsUrl: () => waitUntil(() => opsPattern.exec(stderr)?.[1], "the banner", READY_TIMEOUT_MS),
    signal: (signal) => {
      if (!gone()) child.kill(signal);
    },
    stop: async () => {
      if (gone()) return;
      child.kill("SIGTERM");
      await exited;
    },
  };
}
