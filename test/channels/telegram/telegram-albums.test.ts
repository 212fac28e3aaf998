/**
 * Albums: Telegram sends one message per item, the caption (and the bot's mention) on one at
 * most. The channel gathers them (on a manual clock here) and hands the album over as one message
 * with every file — in a group when any item addresses the bot, in a private chat always — and
 * nothing when none does. AlbumCollector's own windows are tested on the same kind of clock.
 */
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import {
  AttachmentIntake,
  DEFAULT_ATTACHMENT_SETTINGS,
} from "../../../src/attachments/inbound-attachments.js";
import { ALBUM_MAX_ITEMS, AlbumCollector } from "../../../src/channels/telegram/telegram-albums.js";
import { createWorkspacePaths } from "../../../src/tools/files/workspace-paths.js";
import { manualClock } from "../../support/manual-clock.js";
import { ALICE, ALICE_DM, type Harness, OPEN_GROUP, startHarness } from "./harness.js";

const PNG = join(import.meta.dirname, "../../fixtures/attachments/red-4x3.png");

/** Adds items to `albums`, each album's items listed in `closed` as it closes and hands over. */
function gathering<T>(albums: AlbumCollector<T>) {
  const closed: (readonly T[])[] = [];
  let started = 0;
  const add = (key: string, item: T) =>
    albums.add(key, item, (album) => {
      started += 1;
      return album.then((items) => void closed.push(items));
    });
  return { add, closed, started: () => started };
}

describe("AlbumCollector", () => {
  it("closes an album when no item came for the quiet time, with its items in order", async () => {
    const clock = manualClock();
    const { add, closed, started } = gathering(
      new AlbumCollector<string>(clock, { quietMs: 100, maxWaitMs: 1000 }),
    );
    const album = add("a", "one");
    // A later item joins the album and waits for the same hand-over.
    expect(add("a", "two")).toBe(album);
    const other = add("b", "other");
    expect(started()).toBe(2);
    expect(clock.pending(100)).toBe(2);
    clock.fire(100);
    await Promise.all([album, other]);
    expect(closed).toEqual([["one", "two"], ["other"]]);
    // After closing, the same key starts another album.
    add("a", "late");
    expect(started()).toBe(3);
  });

  it("closes at the longest wait however items keep coming, and at Telegram's item limit", async () => {
    const clock = manualClock();
    const { add, closed } = gathering(new AlbumCollector<number>(clock, { quietMs: 100, maxWaitMs: 1000 }));
    const slow = add("slow", 0);
    add("slow", 1);
    clock.fire(1000);
    await slow;
    expect(closed).toEqual([[0, 1]]);
    const full = add("full", 0);
    for (let i = 1; i < ALBUM_MAX_ITEMS + 2; i++) add("full", i);
    await full;
    expect(closed[1]).toHaveLength(ALBUM_MAX_ITEMS);
    expect(clock.pending(1000) + clock.pending(100)).toBe(2); // only the album the two extra items began
  });
});

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("telegram albums", () => {
  const clock = manualClock();
  /** Send an album of `count` photos, the caption on the first; resolves once all are gathered. */
  async function sendAlbum(
    harness: Harness,
    chat: typeof OPEN_GROUP,
    group: string,
    count: number,
    caption?: string,
  ): Promise<void> {
    const png = await readFile(PNG);
    const before = clock.setCount();
    for (let i = 0; i < count; i++)
      harness.tg.sendUserMessage({
        chat,
        from: ALICE,
        photo: { content: png },
        mediaGroupId: group,
        ...(i === 0 && caption !== undefined ? { caption } : {}),
      });
    // The first item sets the longest wait and a quiet time, each later one a quiet time.
    await harness.tg.waitFor(() => clock.setCount() === before + count + 1);
  }

  it("in a group, an album whose caption mentions the bot reaches it as one message with every photo", async () => {
    h = await startHarness({ clock, albums: { quietMs: 50, maxWaitMs: 5000 } });
    await sendAlbum(h, OPEN_GROUP, "album-1", 3, "@coworker_bot compare these three");
    clock.fire(50);
    await h.service.waitFor(() => h!.service.received.length === 1);
    const [message] = h.service.received;
    expect(message!.text).toBe("compare these three");
    expect(message!.files).toHaveLength(3);
    expect(new Set(message!.files.map((file) => file.path)).size).toBe(3);
    expect(message!.dedupeKeys).toHaveLength(3);
    expect(message!.target.extra?.replyTo).toBeDefined();
  });

  it("in a group, an album that addresses nobody reaches nobody; the sender's next message does", async () => {
    h = await startHarness({ clock, albums: { quietMs: 50, maxWaitMs: 5000 } });
    await sendAlbum(h, OPEN_GROUP, "album-2", 2, "holiday pictures");
    h.tg.sendUserMessage({ chat: OPEN_GROUP, from: ALICE, text: "@coworker_bot hello" });
    clock.fire(50);
    // Alice's next message waits behind her album in her lane: once it is here, the album was decided.
    await h.service.waitFor(() => h!.service.received.some((message) => message.text === "hello"));
    expect(h.service.received.map((message) => message.text)).toEqual(["hello"]);
  });

  it("in a private chat, an uncaptioned album is one message with every photo", async () => {
    h = await startHarness({ clock, albums: { quietMs: 50, maxWaitMs: 5000 } });
    await sendAlbum(h, ALICE_DM, "album-3", 2);
    clock.fire(50);
    await h.service.waitFor(() => h!.service.received.length === 1);
    expect(h.service.received[0]!.files).toHaveLength(2);
  });

  it("takes at most the per-message file count of an album, and says which were not taken", async () => {
    const root = await mkdtemp(join(tmpdir(), "tg-album-"));
    h = await startHarness({
      workspaceRoot: root,
      clock,
      albums: { quietMs: 50, maxWaitMs: 5000 },
      attachments: new AttachmentIntake({
        workspace: createWorkspacePaths({ root }),
        logger: pino({ level: "silent" }),
        settings: { ...DEFAULT_ATTACHMENT_SETTINGS, maxFiles: 2 },
      }),
    });
    await sendAlbum(h, ALICE_DM, "album-4", 3, "three");
    clock.fire(50);
    await h.service.waitFor(() => h!.service.received.length === 1);
    const [message] = h.service.received;
    expect(message!.files).toHaveLength(2);
    const notes = (message!.attachments ?? []).filter((a) => a.kind === "file-note");
    expect(JSON.stringify(notes)).toContain("1 more file(s) were not taken");
    expect(message!.attachments?.filter((a) => a.kind === "image")).toHaveLength(2);
    await h.tg.waitFor(() => h!.tg.state.botMessages(ALICE.id).some((m) => m.text.includes("not taken")));
  });
});
