/**
 * LiveSession's record changes: each one saved is stamped with the session clock and frozen, a
 * record a change builds is kept as built (no second copy), and one handed back unchanged is still
 * stamped. A deferred change is frozen at once and stamped by the save that carries it.
 */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { InboundDedupe } from "../../src/sessions/inbound-dedupe.js";
import { LiveSession } from "../../src/sessions/live-session.js";
import { newSessionRecord, type SessionRecord } from "../../src/sessions/session-record.js";
import { SessionRecords } from "../../src/sessions/session-records.js";
import { WorkspaceDownloads } from "../../src/sessions/workspace-downloads.js";
import { createStore } from "../../src/store/create-store.js";
import { HistoryLog } from "../../src/store/history-log.js";
import type { Store } from "../../src/store/store.js";

let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

async function session(clock: () => Date) {
  store = await createStore({
    url: "memory:",
    dataDir: mkdtempSync(path.join(os.tmpdir(), "live-session-")),
  });
  const records = new SessionRecords(store.space("sessions"));
  const record = newSessionRecord({
    id: "s1",
    key: "slack:T1:C1:1.2",
    target: { platform: "slack", workspace: "T1", channel: "C1", thread: "1.2" },
    mode: "interactive",
    provider: "openai",
    model: "m",
    now: new Date("2026-12-03T10:00:00.000Z"),
  });
  await records.put(record);
  return LiveSession.create(record, {
    records,
    downloads: new WorkspaceDownloads(records.downloads, "/workspace", pino({ level: "silent" })),
    history: new HistoryLog(store.space("history")),
    journal: store.space("journal"),
    dedupe: new InboundDedupe(store),
    now: clock,
    writesInOrder: store.writesInOrder,
    logger: pino({ level: "silent" }),
  });
}

describe("LiveSession record changes", () => {
  it("keeps the record a change builds, stamped and frozen, and saves it", async () => {
    const live = await session(() => new Date("2026-12-03T11:00:00.000Z"));
    let built: SessionRecord | undefined;
    const saved = await live.update((r) => {
      built = { ...r, title: "renamed" };
      return built;
    });
    expect(saved).toBe(built);
    expect(live.record).toBe(built);
    expect(Object.isFrozen(saved)).toBe(true);
    expect(saved).toMatchObject({ title: "renamed", updatedAt: "2026-12-03T11:00:00.000Z" });
    expect(await new SessionRecords(store!.space("sessions")).get("s1")).toMatchObject({ title: "renamed" });
  });

  it("stamps a record handed back unchanged as a new frozen record, leaving the old one as it was", async () => {
    const live = await session(() => new Date("2026-12-03T12:00:00.000Z"));
    const before = live.record;
    await live.update((r) => r);
    expect(live.record).not.toBe(before);
    expect(Object.isFrozen(live.record)).toBe(true);
    expect(live.record.updatedAt).toBe("2026-12-03T12:00:00.000Z");
    expect(before.updatedAt).toBe("2026-12-03T10:00:00.000Z");
  });

  it("freezes a deferred change at once and stamps it when a save carries it", async () => {
    let now = new Date("2026-12-03T12:00:00.000Z");
    const live = await session(() => now);
    live.defer((r) => ({ ...r, title: "ended" }));
    expect(Object.isFrozen(live.record)).toBe(true);
    expect(live.record).toMatchObject({ title: "ended", updatedAt: "2026-12-03T10:00:00.000Z" });
    now = new Date("2026-12-03T12:05:00.000Z");
    await live.flush();
    expect(live.record.updatedAt).toBe("2026-12-03T12:05:00.000Z");
    expect(await new SessionRecords(store!.space("sessions")).get("s1")).toMatchObject({
      title: "ended",
      updatedAt: "2026-12-03T12:05:00.000Z",
    });
  });
});
