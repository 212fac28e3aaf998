/**
 * A channel buffer forgets a message deleted on the platform and shows an edited one's new text
 * (ChannelBuffer.revise), alone and with several processes sharing the store: a deleted message (a
 * pasted secret) must not stay in catch_up for days.
 */
import os from "node:os";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import type { BufferEntryInput } from "../../src/subscriptions/buffer-entry.js";
import { ChannelBuffer } from "../../src/subscriptions/channel-buffer.js";
import { bufferHeadKey, bufferPageKey } from "../../src/subscriptions/channel-buffer-store-shapes.js";
import { manualClock } from "./support-shared-buffer.js";

const CH = "slack:T1:CDEPLOY";
const START = Date.parse("2026-11-30T09:00:00Z");
const LIMITS = { maxEntries: 100, maxAgeMs: 86_400_000, pageSize: 2 } as const;

function entry(n: number, text = `message ${n}`): BufferEntryInput {
  return {
    id: `m${n}`,
    author: { id: "UBOB", name: "Bob", isBot: false },
    at: new Date(START + n * 1_000).toISOString(),
    text,
  };
}

describe("ChannelBuffer.revise (messages deleted or edited on the platform)", () => {
  let store: Store;
  let clock: ReturnType<typeof manualClock>;

  beforeEach(async () => {
    store = await createStore({ url: "memory:", dataDir: os.tmpdir() });
    clock = manualClock(START);
  });
  afterEach(async () => {
    await store.close();
  });

  async function texts(buffer: ChannelBuffer): Promise<string[]> {
    const read = await buffer.read(CH, { limit: 100 });
    return (read?.entries ?? []).map((e) => `${e.seq}:${e.text}`);
  }

  /** Every text stored in the channel's pages (what a restart, or anyone reading the store, finds). */
  async function storedJson(): Promise<string> {
    const space = store.space("buffers");
    const head = (await space.get(bufferHeadKey(CH))) as {
      data: { pages: { index: number; rev?: string }[] };
    };
    const pages = await Promise.all(head.data.pages.map((p) => space.get(bufferPageKey(CH, p.index, p.rev))));
    return JSON.stringify(pages);
  }

  for (const shared of [false, true]) {
    describe(shared ? "shared" : "alone", () => {
      const open = () => new ChannelBuffer(store.space("buffers"), { ...LIMITS, clock, shared });

      it("a deleted message leaves the buffer and the store, also on an older page", async () => {
        const buffer = open();
        for (const n of [1, 2, 3, 4, 5])
          await buffer.append(CH, entry(n, n === 2 ? "token sk-SECRET" : `message ${n}`));
        expect(await buffer.revise(CH, "m2", undefined)).toEqual({ outcome: "deleted" });
        expect(await texts(buffer)).toEqual(["1:message 1", "3:message 3", "4:message 4", "5:message 5"]);
        expect(await storedJson()).not.toContain("sk-SECRET");
        expect(await texts(open())).toEqual(["1:message 1", "3:message 3", "4:message 4", "5:message 5"]);
        // Later appends go on after it.
        await buffer.append(CH, entry(6));
        expect((await texts(buffer)).at(-1)).toBe("6:message 6");
      });

      it("an edited message keeps its place and takes the new text (capped), mention flag with it", async () => {
        const buffer = open();
        for (const n of [1, 2, 3]) await buffer.append(CH, entry(n));
        const revision = await buffer.revise(CH, "m1", { text: "fixed 1", mentionsBot: true });
        expect(revision).toMatchObject({
          outcome: "edited",
          entry: { seq: 1, text: "fixed 1", mentionsBot: true },
        });
        expect(await texts(buffer)).toEqual(["1:fixed 1", "2:message 2", "3:message 3"]);
        expect(await storedJson()).not.toContain('"message 1"');
        expect(await buffer.revise(CH, "m1", { text: "fixed 1", mentionsBot: true })).toEqual({
          outcome: "unchanged",
        });
        await buffer.revise(CH, "m3", { text: "x".repeat(5_000), mentionsBot: false });
        const last = (await buffer.read(CH, { limit: 100 }))?.entries.at(-1);
        expect(last?.text.length).toBeLessThan(5_000);
        expect(last?.text).toContain("more characters not kept");
      });

      it("a message not buffered (or a channel without a buffer) is absent, nothing written", async () => {
        const buffer = open();
        expect(await buffer.revise(CH, "m9", undefined)).toEqual({ outcome: "absent" });
        await buffer.append(CH, entry(1));
        expect(await buffer.revise(CH, "m9", { text: "x", mentionsBot: false })).toEqual({
          outcome: "absent",
        });
        expect(await texts(buffer)).toEqual(["1:message 1"]);
      });
    });
  }

  it("a message whose deletion came first, or came while its append waited, is not buffered (Slack does not order events)", async () => {
    const buffer = new ChannelBuffer(store.space("buffers"), { ...LIMITS, clock });
    await buffer.append(CH, entry(1));
    expect(await buffer.revise(CH, "m2", undefined)).toEqual({ outcome: "absent" });
    expect(await buffer.append(CH, entry(2, "token sk-SECRET"))).toBeUndefined();
    // m4 is appended while m3's write is in flight, and deleted before its own write starts.
    const third = buffer.append(CH, entry(3));
    const fourth = buffer.append(CH, entry(4, "token sk-LATE"));
    await buffer.revise(CH, "m4", undefined);
    expect(await third).toBeDefined();
    expect(await fourth).toBeUndefined();
    expect(await texts(buffer)).toEqual(["1:message 1", "2:message 3"]);
    expect(await storedJson()).not.toContain("sk-");
  });

  it("shared: a deletion through one process is what the other reads, and its appends keep it deleted", async () => {
    const a = new ChannelBuffer(store.space("buffers"), { ...LIMITS, clock, shared: true });
    const b = new ChannelBuffer(store.space("buffers"), { ...LIMITS, clock, shared: true });
    for (const n of [1, 2, 3]) await a.append(CH, entry(n));
    expect(await texts(b)).toEqual(["1:message 1", "2:message 2", "3:message 3"]);
    await b.revise(CH, "m3", undefined);
    await a.append(CH, entry(4));
    expect(await texts(a)).toEqual(["1:message 1", "2:message 2", "4:message 4"]);
    expect(await texts(b)).toEqual(["1:message 1", "2:message 2", "4:message 4"]);
  });
});
