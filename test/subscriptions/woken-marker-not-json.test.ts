/**
 * A wake marker row that is not even JSON (written by something else, or corrupt) on SQLite: the
 * store parses every row a batched read returns, so one such row failed the take-over sweep's
 * one read of a channel's markers, and with it the rebuild of every subscription on the channel.
 * Only that subscription's marker fails now; the others are read.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, expect, it } from "vitest";
import { createStore } from "../../src/store/create-store.js";
import { readWokenMany, wokenKey } from "../../src/subscriptions/wake-markers.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

it("reads the other wake markers beside one whose row is not JSON, which alone fails", async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "woken-not-json-"));
  dirs.push(dir);
  const store = await createStore({ dataDir: dir });
  const space = store.space("subscriptions");
  const at = "2026-11-30T09:00:00.000Z";
  await space.set(wokenKey("sub_good"), {
    v: 1,
    kind: "subscription-woken",
    data: { epoch: "e1", seq: 3, at },
  });
  await space.set(wokenKey("sub_bad"), "to be spoiled");
  const db = new Database(path.join(dir, "coworker.sqlite"));
  db.prepare("UPDATE keyv SET value = 'not json' WHERE key = ?").run(`subscriptions:${wokenKey("sub_bad")}`);
  db.close();

  const reads = await readWokenMany(space, ["sub_good", "sub_bad", "sub_never"]);
  expect(reads[0]).toEqual({ ok: true, woken: { epoch: "e1", seq: 3, at } });
  expect(reads[1]).toMatchObject({ ok: false, error: expect.objectContaining({ name: "StoredDataError" }) });
  expect(reads[2]).toEqual({ ok: true, woken: undefined });
  await store.close();
});
