/**
 * Exactly-once runs across processes: two ScheduleServices on two connections to one store (a
 * SQLite file, a real redis-server) both hold the same tasks and fire at the same moments; each
 * occurrence is claimed in the store first, so it runs in exactly one of them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OccurrenceClaims } from "../../src/schedules/occurrence-claims.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";
import { ANA_HOME, flush, ManualClock, openHarness, T0, MIN } from "./support.js";

let redis: RedisServer | undefined;
let dataDir = "";
beforeAll(async () => {
  redis = await startRedisServer();
  dataDir = mkdtempSync(path.join(os.tmpdir(), "schedules-once-"));
});
afterAll(async () => {
  await redis?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const backends: { name: string; open: (label: string) => Promise<Store> }[] = [
  {
    name: "SQLite file",
    open: (label) => createStore({ url: undefined, dataDir: path.join(dataDir, label) }),
  },
  {
    name: "redis-server",
    open: () => createStore({ url: redis!.url, dataDir }),
  },
];

describe.each(backends)("exactly-once claims on $name", (backend) => {
  it("two claimers racing for one occurrence: exactly one wins, also against itself later", async () => {
    const [a, b] = [await backend.open("race"), await backend.open("race")];
    try {
      const claimers = [
        new OccurrenceClaims(a.space("schedules"), "a", 3_600_000),
        new OccurrenceClaims(b.space("schedules"), "b", 3_600_000),
      ];
      const due = T0 + Math.floor(Math.random() * 1e6);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => claimers[i % 2]!.claim("tsk_0123456789ab", due, T0)),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await claimers[0]!.claim("tsk_0123456789ab", due, T0)).toBe(false);
      expect(await claimers[1]!.claim("tsk_0123456789ab", due + 1, T0)).toBe(true);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("two processes with the same tasks run each occurrence once between them", async () => {
    const label = `procs-${Date.now()}`;
    const clock = new ManualClock(T0);
    const first = await openHarness({ store: await backend.open(label), clock, extra: { owner: "first" } });
    const made = await first.service.create(ANA_HOME, {
      prompt: "digest",
      cron: "*/10 * * * *",
      timezone: "UTC",
    });
    expect(made.ok).toBe(true);
    await first.service.wakeLater(ANA_HOME, { in_s: 15 * 60, note: "check" });
    const second = await openHarness({ store: await backend.open(label), clock, extra: { owner: "second" } });
    try {
      expect(second.service.listFor({ platform: "slack", userId: "U1ANA" })).toHaveLength(2);
      for (let minute = 0; minute < 45; minute++) {
        clock.advance(MIN);
        await flush(first.service);
        await flush(second.service);
      }
      const runs = [...first.sessions.turns, ...second.sessions.turns];
      // 08:10, 08:20, 08:30, 08:40 and the wake-up at 08:15: five runs, none doubled.
      expect(runs).toHaveLength(5);
      expect(runs.filter((t) => t.prompt.startsWith("[Wake-up"))).toHaveLength(1);
      const due = runs.map((t) => /due (\w+, \d+ \w+ \d+, [\d:]+)/.exec(t.prompt)?.[1]).filter(Boolean);
      expect(new Set(due).size).toBe(due.length);
      expect([...first.errors, ...second.errors]).toEqual([]);
    } finally {
      await first.close();
      await second.close();
    }
  });
});
