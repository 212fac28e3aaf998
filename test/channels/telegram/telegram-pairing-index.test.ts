/**
 * The paired-id index behind `/pairs`: an append-only log whose slots are taken by write-if-absent,
 * so ids added at once by several processes are all kept; repeats are dropped on read.
 */
import { describe, expect, it } from "vitest";
import { PairingIndex } from "../../../src/channels/telegram/telegram-pairing-index.js";
import { memorySpace } from "../../skills/support.js";
import { tempStores } from "../../support/temp-stores.js";

const open = tempStores("telegram-pairing-index-");

const ids = (from: number, count: number) => Array.from({ length: count }, (_, i) => String(from + i));

describe("PairingIndex", () => {
  it("keeps every id added at once by three processes on one SQLite file, past one page of slots", async () => {
    const indexes = await Promise.all(
      [0, 1, 2].map(async () => new PairingIndex((await open(undefined)).space("grants"))),
    );
    await Promise.all(
      indexes.map((index, i) => Promise.all(ids(1000 * (i + 1), 50).map((id) => index.add(id)))),
    );
    const expected = [...ids(1000, 50), ...ids(2000, 50), ...ids(3000, 50)].sort();
    for (const index of indexes) expect([...(await index.ids())].sort()).toEqual(expected);
  });

  it("lists an id once when its append stopped before its marker and it was added again", async () => {
    const store = memorySpace();
    await store.set("tg:paired-log:0", "5");
    const index = new PairingIndex(store);
    await index.add("5");
    await index.add("6");
    expect(await store.get("tg:paired-log:1")).toBe("5");
    expect(await index.ids()).toEqual(["5", "6"]);
  });

  it("appends after the last slot, never over one, whatever the next-slot hint says", async () => {
    const store = memorySpace();
    const index = new PairingIndex(store);
    for (const id of ids(1, 120)) await index.add(id);
    // Behind, of the wrong shape, gone.
    const hints = [0, "x", undefined];
    for (const [i, hint] of hints.entries()) {
      if (hint === undefined) await store.delete("tg:paired-log-next");
      else await store.set("tg:paired-log-next", hint);
      await new PairingIndex(store).add(String(900 + i));
    }
    expect(await new PairingIndex(store).ids()).toEqual([...ids(1, 120), "900", "901", "902"]);
  });

  it("skips a slot of the wrong shape without ending the list", async () => {
    const store = memorySpace();
    await store.set("tg:paired-log:0", { id: 5 });
    await store.set("tg:paired-log:1", "6");
    expect(await new PairingIndex(store).ids()).toEqual(["6"]);
  });
});
