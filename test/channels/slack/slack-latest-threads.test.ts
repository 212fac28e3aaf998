/**
 * A person's latest thread per channel, what /coworker typed there acts on: with two processes on
 * one Redis (two SlackChannels, each on its own connection) a command acts on the thread the person
 * last wrote in, whichever process took that message or takes the command — and says which; another
 * person's messages never move it. Then LatestThreads alone: its scoping, in memory and on Redis,
 * the newest message winning whichever write lands last, and the stored record as this version
 * writes it.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { SlackChannel } from "../../../src/channels/slack/slack-channel.js";
import { LatestThreads } from "../../../src/channels/slack/slack-latest-threads.js";
import type { KeyValueSpace } from "../../../src/store/store.js";
import type { FakeSlack } from "../../fakes/fake-slack/index.js";
import { withOutputs } from "../../support/adapter-outputs.js";
import { eventually } from "../../support/eventually.js";
import { type RedisServer, startRedisServer } from "../../support/redis-server.js";
import { tempStores } from "../../support/temp-stores.js";
import { FakeService } from "./fake-service.js";
import { fakeSlackChannelOptions, silentLogger, startFakeSlackWithAnaAndBo } from "./support.js";

const open = tempStores("slack-latest-threads-");
let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis?.stop();
});

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** `inner`, counting its writes once they have landed (so a test waits for one without sleeping). */
function countingWrites(inner: KeyValueSpace): {
  space: KeyValueSpace;
  writes: () => number;
  lastKey: () => string;
} {
  let writes = 0;
  let lastKey = "";
  const space: KeyValueSpace = {
    get: (key) => inner.get(key),
    delete: (key) => inner.delete(key),
    setIfAbsent: async (key, value, ttlMs) => landed(key, await inner.setIfAbsent(key, value, ttlMs)),
    replaceIf: async (key, expected, value, ttlMs) =>
      landed(key, await inner.replaceIf(key, expected, value, ttlMs)),
    deleteIf: (key, expected) => inner.deleteIf(key, expected),
    set: async (key, value, ttlMs) => {
      await inner.set(key, value, ttlMs);
      landed(key, true);
    },
  };
  const landed = (key: string, wrote: boolean) => {
    if (wrote) {
      lastKey = key;
      writes += 1;
    }
    return wrote;
  };
  return { space, writes: () => writes, lastKey: () => lastKey };
}

/** A process: a SlackChannel on the fake (its connection labelled `label`) sharing latest threads on Redis. */
async function startProcess(fake: FakeSlack, service: FakeService, label: string) {
  const shared = countingWrites((await open(redis.url)).space("sessions"));
  const root = await mkdtemp(join(tmpdir(), `slack-latest-${label}-`));
  cleanup.push(() => rm(root, { recursive: true, force: true }));
  const channel = withOutputs(
    new SlackChannel(
      fakeSlackChannelOptions(
        { apiUrl: fake.apiUrlFor(label), state: fake.state },
        { fileMaxBytes: 1024, workspaceRoot: root, service, sharedLatestThreads: shared.space },
      ),
    ),
    service,
  );
  await channel.start();
  cleanup.push(() => channel.stop());
  return shared;
}

describe("/coworker with two processes on one Redis", () => {
  it("acts on the person's latest thread, whichever process saw it, says which, and no one else moves it", async () => {
    const fake = await startFakeSlackWithAnaAndBo();
    cleanup.push(() => fake.close());
    const service = new FakeService();
    const p1 = await startProcess(fake, service, "p1");
    const p2 = await startProcess(fake, service, "p2");
    await fake.waitFor(() => fake.socket.labels.length === 2, "both processes connected");
    const bot = `<@${fake.state.botUserId}>`;
    const post = async (user: string, text: string, to: string, threadTs?: string) => {
      const before = service.received.length;
      const writes = (to === "p1" ? p1 : p2).writes();
      const { ts } = fake.userPosts({ user, channel: "C1", text, to, ...(threadTs ? { threadTs } : {}) });
      await service.waitFor(() => service.received.length === before + 1);
      await eventually(
        () => (to === "p1" ? p1 : p2).writes() > writes,
        `${to} stored ${user}'s latest thread`,
      );
      return ts;
    };
    const slash = async (text: string, to: string) => {
      const before = fake.state.responses.length;
      await fake.slashCommand({ user: "U1", channel: "C1", text, to }).acked;
      const answer = await fake.waitFor(
        () => fake.state.responses[before],
        `the answer to /coworker ${text}`,
      );
      return String(answer.body.text);
    };

    const t1 = await post("U1", `${bot} first topic`, "p1");
    const t2 = await post("U1", `${bot} second topic`, "p2");
    const answer = await slash("mode auto", "p1");
    expect(service.commands[0]).toMatchObject({ name: "mode", target: { channel: "C1", thread: t2 } });
    expect(answer).toContain(`<!date^${Math.floor(Number(t2))}^`);

    // Bo's own thread (on p2) does not move Ana's; Ana going back to T1 (on p1) does, though p1
    // had stored T1 for her before.
    await post("U2", `${bot} bo's topic`, "p2");
    await post("U1", `${bot} back to the first`, "p1", t1);
    await slash("new", "p2");
    await slash("stop", "p1");
    expect(service.commands.slice(1).map((c) => [c.name, c.target.thread])).toEqual([
      ["new", t1],
      ["stop", t1],
    ]);
  });
});

describe("LatestThreads", () => {
  /** A Slack ts `plus` seconds after this run started: records of messages over a week old are ignored. */
  const started = Math.floor(Date.now() / 1000);
  const at = (fraction: string, plus = 0) => `${started + plus}.${fraction}`;

  it.each([
    ["in memory", async (): Promise<KeyValueSpace | undefined> => undefined],
    ["on Redis", async (): Promise<KeyValueSpace | undefined> => (await open(redis.url)).space("sessions")],
  ])("%s, keeps one per workspace, channel and person", async (_label, shared) => {
    const space = await shared();
    const inTeam = (team: string) =>
      new LatestThreads({ workspace: () => team, logger: silentLogger, ...(space ? { shared: space } : {}) });
    const t1 = inTeam("T1");
    await t1.record("C1", "U1", "1700000000.000100", at("000100"));
    await t1.record("C1", "U2", "1700000000.000200", at("000200"));
    await t1.record("C2", "U1", "1700000000.000300", at("000300"));
    expect(await t1.latest("C1", "U1")).toBe("1700000000.000100");
    expect(await t1.latest("C1", "U2")).toBe("1700000000.000200");
    expect(await t1.latest("C2", "U1")).toBe("1700000000.000300");
    expect(await t1.latest("C2", "U2")).toBeUndefined();
    if (space) expect(await inTeam("T2").latest("C1", "U1")).toBeUndefined();
    const unstarted = new LatestThreads({ workspace: () => undefined, logger: silentLogger });
    await unstarted.record("C1", "U1", "1700000000.000100", at("000100"));
    expect(await unstarted.latest("C1", "U1")).toBeUndefined();
  });

  it.each([
    ["in memory", async (): Promise<(KeyValueSpace | undefined)[]> => [undefined, undefined]],
    [
      "with two processes on Redis",
      async (): Promise<(KeyValueSpace | undefined)[]> => [
        (await open(redis.url)).space("sessions"),
        (await open(redis.url)).space("sessions"),
      ],
    ],
  ])("%s, keeps the newest message's thread whichever write lands last", async (_label, spaces) => {
    const [a, b] = await spaces();
    const inProcess = (space: KeyValueSpace | undefined) =>
      new LatestThreads({ workspace: () => "T1", logger: silentLogger, ...(space ? { shared: space } : {}) });
    const p1 = inProcess(a);
    const p2 = b ? inProcess(b) : p1;
    // Ana posted in t1, then in t2; her t1 message's hand-over (a slow file) finished last.
    await p2.record("C1", "U1", "1700000000.000200", at("000200"));
    await p1.record("C1", "U1", "1700000000.000100", at("000100"));
    expect(await p1.latest("C1", "U1")).toBe("1700000000.000200");
    expect(await p2.latest("C1", "U1")).toBe("1700000000.000200");
    // Back in t1 with a newer message: it moves; racing writes from both end on the newest.
    await Promise.all([
      p1.record("C1", "U1", "1700000000.000100", at("000001", 1)),
      p2.record("C1", "U1", "1700000000.000200", at("000100", 1)),
      p1.record("C1", "U1", "1700000000.000100", at("00001", 1)),
    ]);
    expect(await p1.latest("C1", "U1")).toBe("1700000000.000200");
  });

  it("keeps each record a week after its write, and a newer message's replaces one stored with that expiry", async () => {
    const shared = countingWrites((await open(redis.url)).space("sessions"));
    const latest = new LatestThreads({ workspace: () => "T1", logger: silentLogger, shared: shared.space });
    const week = 7 * 24 * 60 * 60 * 1000;
    const written = Date.now();
    await latest.record("C8", "U8", "1700000000.000100", at("000100"));
    const key = shared.lastKey();
    await latest.record("C8", "U8", "1700000000.000200", at("000200"));
    expect(shared.writes()).toBe(2);
    expect(await latest.latest("C8", "U8")).toBe("1700000000.000200");
    await latest.record("C8", "U8", "1700000000.000100", at("000150"));
    expect(await latest.latest("C8", "U8")).toBe("1700000000.000200");
    const rewritten = Date.now();
    vi.useFakeTimers({ toFake: ["Date"], now: written + week - 60_000 });
    try {
      expect(await shared.space.get(key)).toMatchObject({ data: { thread: "1700000000.000200" } });
      vi.setSystemTime(rewritten + week + 60_000);
      expect(await shared.space.get(key)).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it("reads a v1 record as stored (with or without `at`), replaces one without it, and rejects a corrupt one rather than guess a thread until a message replaces it", async () => {
    const shared = countingWrites((await open(redis.url)).space("sessions"));
    const latest = new LatestThreads({ workspace: () => "T1", logger: silentLogger, shared: shared.space });
    const now = at("000999");
    await latest.record("C9", "U9", "1700000000.000999", now);
    const key = shared.lastKey();
    const fixture = JSON.parse(
      await readFile(join(import.meta.dirname, "fixtures/latest-thread.v1.json"), "utf8"),
    );
    expect(await shared.space.get(key)).toEqual({
      ...fixture,
      data: { thread: "1700000000.000999", at: now },
    });
    await shared.space.set(key, fixture, 60_000);
    expect(await latest.latest("C9", "U9")).toBe("1700000000.000100");
    await latest.record("C9", "U9", "1700000000.000999", now);
    expect(await latest.latest("C9", "U9")).toBe("1700000000.000999");
    await latest.record("C9", "U9", "1700000000.000100", at("000100", -8 * 24 * 60 * 60));
    expect(await latest.latest("C9", "U9")).toBe("1700000000.000999");
    await shared.space.set(key, {
      ...fixture,
      data: { ...fixture.data, at: at("000100", -8 * 24 * 60 * 60) },
    });
    expect(await latest.latest("C9", "U9")).toBeUndefined();
    await shared.space.set(key, { v: 1, kind: "slack-latest-thread", data: { thread: "C1:everyone" } });
    await expect(latest.latest("C9", "U9")).rejects.toThrow(/slack-latest-thread/);
    await latest.record("C9", "U9", "1700000000.000999", now);
    expect(await latest.latest("C9", "U9")).toBe("1700000000.000999");
  });
});
