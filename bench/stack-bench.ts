/**
 * Stack benchmark: the session layer without a platform — SessionManager → TurnEngine with an
 * instant in-process model, on the in-memory store and on the default SQLite store. Each of 1, 50
 * or 200 concurrent loops sends its next message when the previous turn's renderer closes, in one
 * of two shapes: "chat" (one growing session per loop, as in a Telegram private chat) or "thread"
 * (every message starts a new thread and session, as top-level Slack posts do). Reports finished
 * turns per second, and what one turn costs in store calls (counted by a wrapper) and in promises
 * created (async_hooks), both on a separate pass so counting never slows the timed runs: counts do
 * not swing with a shared host's load the way rates do. Writes bench/results/stack.json and stack.md.
 *
 * `node .bench-build/bench/stack-bench.js <memory|sqlite> <chat|thread> <loops> [messages]` (after
 * `npx tsc -p tsconfig.bench.json`) runs one measurement of the compiled code and prints it —
 * handy under `node --cpu-prof`.
 */
import { createHook } from "node:async_hooks";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import type { ThreadOutput } from "../src/core/thread-output.js";
import type { ThreadTarget } from "../src/core/thread-target.js";
import type { KeyValueSpace, SpaceEntry, Store, StoreNamespace } from "../src/store/store.js";
import type { SessionManager } from "../src/sessions/session-manager.js";
import { WrappedStore } from "../test/support/wrapped-store.js";
import { instantStack } from "./support/instant.js";
import { hostLine, writeResults } from "./support/report.js";

const LEVELS = [1, 50, 200] as const;
type Level = (typeof LEVELS)[number];
const MESSAGES_PER_LEVEL: Readonly<Record<Level, number>> = { 1: 1_000, 50: 2_000, 200: 2_000 };
const WARMUP_MESSAGES = 300;
const ROUNDS = 3;
const COUNTED_THREADS = 20;
const COUNTED_TURNS_PER_THREAD = 5;
const STORES = { memory: "memory:", sqlite: undefined } as const;
type StoreKind = keyof typeof STORES;
const SHAPES = ["chat", "thread"] as const;
type Shape = (typeof SHAPES)[number];
const SUBJECTS = (Object.keys(STORES) as StoreKind[]).flatMap((kind) =>
  SHAPES.map((shape) => ({ kind, shape, name: `${kind}/${shape}` })),
);

type OpName = "get" | "set" | "setMany" | "delete" | "setIfAbsent";
/** What one turn costs: store calls by operation, and promises created. */
type TurnCost = Record<OpName, number> & { readonly promises: number };

/** Counts every store call by operation (the wrapped store does the work). */
class CountingStore extends WrappedStore {
  readonly counts: Record<OpName, number> = { get: 0, set: 0, setMany: 0, delete: 0, setIfAbsent: 0 };

  protected wrap(_namespace: StoreNamespace, inner: KeyValueSpace): KeyValueSpace {
    const count = <R>(op: OpName, call: () => R): R => {
      this.counts[op] += 1;
      return call();
    };
    return {
      get: (key) => count("get", () => inner.get(key)),
      set: (key, value, ttl) => count("set", () => inner.set(key, value, ttl)),
      ...(inner.setMany
        ? { setMany: (entries: readonly SpaceEntry[]) => count("setMany", () => inner.setMany!(entries)) }
        : {}),
      delete: (key) => count("delete", () => inner.delete(key)),
      setIfAbsent: (key, value, ttl) => count("setIfAbsent", () => inner.setIfAbsent(key, value, ttl)),
      replaceIf: (key, expected, value, ttlMs) => inner.replaceIf(key, expected, value, ttlMs),
      deleteIf: (key, expected) => inner.deleteIf(key, expected),
    };
  }
}

interface Subject {
  readonly manager: SessionManager;
  readonly store: Store;
  /** Resolves when the next turn in `channel` has finished rendering. */
  readonly turnEnded: (channel: string) => Promise<void>;
  close(): Promise<void>;
}

async function openSubject(kind: StoreKind, wrap: (store: Store) => Store = (s) => s): Promise<Subject> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "stack-bench-"));
  const { store, manager } = await instantStack(STORES[kind], dataDir, wrap);
  const waiting = new Map<string, () => void>();
  const output = (target: ThreadTarget): ThreadOutput => ({
    beginTurn: () => ({
      handle: async () => undefined,
      close: async () => {
        const done = waiting.get(target.channel);
        waiting.delete(target.channel);
        done?.();
      },
    }),
    postCard: async () => ({ messageId: "card" }),
    updateCard: async () => undefined,
    postText: async () => undefined,
  });
  manager.registerOutput("bench", output);
  await manager.start();
  return {
    manager,
    store,
    turnEnded: (channel) => new Promise<void>((resolve) => waiting.set(channel, resolve)),
    close: async () => {
      await manager.drain(2_000);
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

let sequence = 0;

/** Run `threads` closed loops until `total` turns have finished; returns turns per second. */
async function drive(
  subject: Subject,
  shape: Shape,
  threads: number,
  total: number,
  prefix: string,
): Promise<number> {
  let sent = 0;
  const loop = async (thread: number) => {
    const channel = `${prefix}-${thread}`;
    while (sent < total) {
      sent += 1;
      sequence += 1;
      const target: ThreadTarget =
        shape === "chat"
          ? { platform: "bench", workspace: "w", channel }
          : { platform: "bench", workspace: "w", channel, thread: String(sequence) };
      const ended = subject.turnEnded(channel);
      const result = await subject.manager.receive({
        dedupeKeys: [`bench:${sequence}`],
        target,
        user: { id: `u${thread}`, name: `person ${thread}` },
        text: `message ${sequence}`,
        files: [],
        sentAt: new Date().toISOString(),
      });
      if (result.status !== "started" && result.status !== "queued")
        throw new Error(`unexpected receive result ${JSON.stringify(result)}`);
      await ended;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: threads }, (_, thread) => loop(thread)));
  return Math.round(total / ((performance.now() - started) / 1_000));
}

/** Warm up, then measure every level once on a fresh subject. */
async function measure(kind: StoreKind, shape: Shape): Promise<number[]> {
  const subject = await openSubject(kind);
  try {
    await drive(subject, shape, 50, WARMUP_MESSAGES, "warm");
    const figures: number[] = [];
    for (const threads of LEVELS)
      figures.push(await drive(subject, shape, threads, MESSAGES_PER_LEVEL[threads], `l${threads}`));
    return figures;
  } finally {
    await subject.close();
  }
}

/**
 * Counts the promises created until the returned function is called (async_hooks): the async hops
 * a turn takes, the same on a quiet host and a busy one.
 */
function countPromises(): () => number {
  let created = 0;
  const hook = createHook({
    init: (_id, type) => {
      if (type === "PROMISE") created += 1;
    },
  }).enable();
  return () => {
    hook.disable();
    return created;
  };
}

/** What a turn costs, on a fresh store: new sessions' first turns and later turns alike. */
async function countOps(kind: StoreKind, shape: Shape): Promise<TurnCost> {
  let counting: CountingStore | undefined;
  const subject = await openSubject(kind, (store) => {
    counting = new CountingStore(store);
    return counting;
  });
  try {
    const before = { ...counting!.counts };
    const turns = COUNTED_THREADS * COUNTED_TURNS_PER_THREAD;
    const promisesCreated = countPromises();
    await drive(subject, shape, COUNTED_THREADS, turns, "count");
    const promises = promisesCreated();
    const per = (op: OpName) => Number(((counting!.counts[op] - before[op]) / turns).toFixed(2));
    return {
      get: per("get"),
      set: per("set"),
      setMany: per("setMany"),
      delete: per("delete"),
      setIfAbsent: per("setIfAbsent"),
      promises: Math.round(promises / turns),
    };
  } finally {
    await subject.close();
  }
}

function medianOf(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function markdown(
  generatedAt: string,
  results: Record<string, number[]>,
  ops: Record<string, TurnCost>,
): string {
  const rows = SUBJECTS.map(
    ({ name }) => `| ${name} | ${LEVELS.map((_, i) => results[name]![i]).join(" | ")} |`,
  );
  const opRows = SUBJECTS.map(({ name }) => {
    const o = ops[name]!;
    return `| ${name} | ${o.get} | ${o.set} | ${o.setMany} | ${o.setIfAbsent} | ${o.delete} | ${o.promises} |`;
  });
  return [
    "# Stack benchmark (session layer, no platform)",
    "",
    hostLine(generatedAt),
    "",
    "SessionManager → TurnEngine with an instant in-process model, on the in-memory and the default SQLite",
    "store. Each loop sends its next message when the previous turn's renderer closes: **chat** keeps one",
    "growing session per loop (Telegram private chat), **thread** starts a new thread and session with every",
    `message (top-level Slack posts). Subjects run in turn, ${ROUNDS} rounds on fresh stores; each figure is the`,
    "median round (the host is shared).",
    "",
    `| store/shape | ${LEVELS.map((n) => `turns/s @${n}`).join(" | ")} |`,
    `|---|${LEVELS.map(() => "---").join("|")}|`,
    ...rows,
    "",
    `What one turn costs (${COUNTED_THREADS} loops × ${COUNTED_TURNS_PER_THREAD} turns): store calls (a setMany is one call,`,
    "however many keys) and promises created (async_hooks; the bench's own driver and instant model included).",
    "",
    "| store/shape | get | set | setMany | setIfAbsent | delete | promises |",
    "|---|---|---|---|---|---|---|",
    ...opRows,
    "",
  ].join("\n");
}

/** Run the stack benchmark, write bench/results/stack.{json,md}, and return the figures. */
export async function run(): Promise<Record<string, unknown>> {
  const rounds: Record<string, number[][]> = Object.fromEntries(SUBJECTS.map(({ name }) => [name, []]));
  for (let round = 0; round < ROUNDS; round += 1)
    for (const { kind, shape, name } of SUBJECTS) rounds[name]!.push(await measure(kind, shape));
  const results = Object.fromEntries(
    SUBJECTS.map(({ name }) => [name, LEVELS.map((_, i) => medianOf(rounds[name]!.map((r) => r[i]!)))]),
  );
  const ops: Record<string, TurnCost> = {};
  for (const { kind, shape, name } of SUBJECTS) ops[name] = await countOps(kind, shape);
  const generatedAt = new Date().toISOString();
  const json = {
    generatedAt,
    node: process.version,
    levels: LEVELS,
    turnsPerSecond: results,
    rounds,
    storeCallsPerTurn: ops,
  };
  await writeResults("stack", json, markdown(generatedAt, results, ops));
  return { turnsPerSecond: results, storeCallsPerTurn: ops };
}

/** `stack-bench.ts <memory|sqlite> <chat|thread> <loops> [messages]`: one measurement, printed as JSON. */
async function single(kind: StoreKind, shape: Shape, threads: number, messages: number): Promise<void> {
  const subject = await openSubject(kind);
  try {
    await drive(subject, shape, Math.min(threads, 50), WARMUP_MESSAGES, "warm");
    const turnsPerSecond = await drive(subject, shape, threads, messages, "single");
    const ops = await countOps(kind, shape);
    console.log(JSON.stringify({ kind, shape, threads, messages, turnsPerSecond, ops }));
  } finally {
    await subject.close();
  }
}

const [kindArg, shapeArg, threadsArg, messagesArg] = process.argv.slice(2);
if (
  process.argv[1] === fileURLToPath(import.meta.url) &&
  kindArg !== undefined &&
  kindArg in STORES &&
  SHAPES.includes(shapeArg as Shape)
) {
  await single(
    kindArg as StoreKind,
    shapeArg as Shape,
    Number(threadsArg ?? 50),
    Number(messagesArg ?? 2_000),
  );
}
