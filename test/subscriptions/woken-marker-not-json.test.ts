/**
 * A wake marker row that is not even JSON (written by something else, or corrupt) on SQLite: the
 * store parses every row a batched read returns, so one such row failed the take-over sweep's
 * one read of a channel's markers, and with it the rebuild of every subscription on the channel
 * (then each marker was read again on its own). A row holding no value (`null`) read as no marker,
 * so its subscription was rebuilt as never woken. Each fails only its own subscription now, with
 * the store's UnreadableRow, in the one batched read.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, expect, it } from "vitest";
import { createStore } from "../../src/store/create-store.js";
import { UnreadableRow } from "../../src/store/stored-row.js";
import { readWokenMany, wokenKey } from "../../src/subscriptions/wake-markers.js";
import { spaceLike } from "../support/space-like.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

it("reads the other wake markers, in one read, beside ones whose rows are not JSON or hold no value, which alone fail", async () => {
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
  await space.set(wokenKey("sub_null"), "to be spoiled");
  const db = new Database(path.join(dir, "coworker.sqlite"));
  db.prepare("UPDATE keyv SET value = 'not json' WHERE key = ?").run(`subscriptions:${wokenKey("sub_bad")}`);
  db.prepare("UPDATE keyv SET value = 'null' WHERE key = ?").run(`subscriptions:${wokenKey("sub_null")}`);
  db.close();
  const calls: string[] = [];
  const counted = spaceLike(space, {
    get: (key) => {
      calls.push("get");
      return space.get(key);
    },
    getRows: (keys) => {
      calls.push("getRows");
      return space.getRows!(keys);
    },
  });

  const reads = await readWokenMany(counted, ["sub_good", "sub_bad", "sub_never", "sub_null"]);
  expect(reads[0]).toEqual({ ok: true, woken: { epoch: "e1", seq: 3, at } });
  expect(reads[1]).toMatchObject({ ok: false, error: expect.objectContaining({ name: "StoredDataError" }) });
  expect(reads[2]).toEqual({ ok: true, woken: undefined });
  expect(reads[3]).toMatchObject({
    ok: false,
    error: { key: wokenKey("sub_null"), reason: "holds no value" },
  });
  expect((reads[1] as { error: unknown }).error).toBeInstanceOf(UnreadableRow);
  expect(calls).toEqual(["getRows"]);
  await store.close();
});
