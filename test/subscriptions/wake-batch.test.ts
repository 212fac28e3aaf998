/**
 * Wake batch contents (wake-batch.ts): a message is held once; one added past the maximum leaves
 * out the first added and counts it; a failed hand-over's messages merged back with those that
 * came meanwhile are kept once each, in buffer order, the oldest left out beyond the maximum and
 * counted with those left out before; a batch goes out oldest first.
 */
import { describe, expect, it } from "vitest";
import type { BufferEntry } from "../../src/subscriptions/buffer-entry.js";
import {
  type BatchContents,
  inBufferOrder,
  mergeBack,
  withItem,
} from "../../src/subscriptions/wake-batch.js";
import type { WakeItem } from "../../src/subscriptions/wake-contract.js";

function item(seq: number, text = `m${seq}`): WakeItem {
  return {
    entry: { id: `m${seq}`, seq, text } as BufferEntry,
    position: { epoch: "e1", seq, at: "2026-12-05T10:00:00.000Z" },
  };
}

const seqs = (contents: BatchContents): number[] => contents.items.map((i) => i.entry.seq);
const EMPTY: BatchContents = { items: [], omitted: 0 };

describe("withItem", () => {
  it("adds in the order added, up to the maximum", () => {
    let contents = EMPTY;
    for (const seq of [3, 1, 2]) contents = withItem(contents, item(seq), 3);
    expect(seqs(contents)).toEqual([3, 1, 2]);
    expect(contents.omitted).toBe(0);
  });

  it("returns the same contents, unchanged, for a message it holds already", () => {
    const contents = withItem(EMPTY, item(1), 3);
    const again = withItem(contents, item(1, "another copy"), 3);
    expect(again).toBe(contents);
    expect(seqs(again)).toEqual([1]);
  });

  it("past the maximum leaves out the first added and counts it, without changing what it was given", () => {
    const full: BatchContents = { items: [item(5), item(2)], omitted: 4 };
    const next = withItem(full, item(7), 2);
    expect(seqs(next)).toEqual([2, 7]);
    expect(next.omitted).toBe(5);
    expect(seqs(full)).toEqual([5, 2]);
    expect(full.omitted).toBe(4);
  });
});

describe("mergeBack", () => {
  it("with nothing new, puts the failed batch back as it was", () => {
    const back: BatchContents = { items: [item(1), item(2)], omitted: 1 };
    const merged = mergeBack(back, undefined, 5);
    expect(seqs(merged)).toEqual([1, 2]);
    expect(merged.omitted).toBe(1);
  });

  it("keeps each message once (the copy that came meanwhile) in buffer order", () => {
    const back: BatchContents = { items: [item(2), item(4)], omitted: 0 };
    const current: BatchContents = { items: [item(5), item(4, "rebuilt"), item(3)], omitted: 0 };
    const merged = mergeBack(back, current, 10);
    expect(seqs(merged)).toEqual([2, 3, 4, 5]);
    expect(merged.items[2]?.entry.text).toBe("rebuilt");
    expect(merged.omitted).toBe(0);
  });

  it("leaves out the oldest beyond the maximum and counts them with those left out before", () => {
    const back: BatchContents = { items: [item(1), item(2), item(3)], omitted: 2 };
    const current: BatchContents = { items: [item(6), item(4), item(5)], omitted: 1 };
    const merged = mergeBack(back, current, 4);
    expect(seqs(merged)).toEqual([3, 4, 5, 6]);
    expect(merged.omitted).toBe(2 + 1 + 2);
  });
});

describe("inBufferOrder", () => {
  it("sorts oldest first without changing the list it was given", () => {
    const items = [item(3), item(1), item(2)];
    expect(inBufferOrder(items).map((i) => i.entry.seq)).toEqual([1, 2, 3]);
    expect(items.map((i) => i.entry.seq)).toEqual([3, 1, 2]);
  });
});
