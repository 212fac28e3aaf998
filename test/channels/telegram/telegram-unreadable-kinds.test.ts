/**
 * Kinds the bot cannot read — a video, a video message, an animation, a shared contact — never
 * vanish: the person is told in a note, and the model gets the same note with the message (also
 * when nothing else came with it). An animation comes as Telegram sends it, with a `document` of
 * the same file too: it is noted like a video, never downloaded as a document. A sticker is its
 * emoji and a shared location its coordinates, as the message's words, with no note.
 */
import { afterEach, describe, expect, it } from "vitest";
import { attachmentOf, unreadableNote } from "../../../src/channels/telegram/telegram-files.js";
import {
  type TelegramMessage,
  telegramMessageSchema,
} from "../../../src/channels/telegram/telegram-inbound.js";
import { ALICE, ALICE_DM, type Harness, startHarness } from "./harness.js";

const file = (id: string) => ({ file_id: id, file_unique_id: `u${id}`, file_size: 1000 });

const KINDS: readonly [string, Record<string, unknown>, string][] = [
  ["video", { video: { ...file("v"), width: 640, height: 360, duration: 30 } }, "a video — a kind of file"],
  [
    "video_note",
    { video_note: { ...file("vn"), length: 240, duration: 20 } },
    "a video message — a kind of file",
  ],
  [
    "animation",
    // As the Bot API sends a GIF: `document` is set too, for backward compatibility.
    {
      animation: {
        ...file("a"),
        width: 320,
        height: 240,
        duration: 3,
        file_name: "giphy.mp4",
        mime_type: "video/mp4",
      },
      document: { ...file("a"), file_name: "giphy.mp4", mime_type: "video/mp4" },
    },
    "an animation — a kind of file",
  ],
  [
    "contact",
    { contact: { phone_number: "+100", first_name: "Carol" } },
    "a shared contact — a kind of message",
  ],
];

const STICKER = { sticker: { ...file("s"), type: "regular", width: 512, height: 512, emoji: "👍" } };
const LOCATION = { location: { latitude: 52.5, longitude: 13.4 } };

function dm(fields: Record<string, unknown>, id: number): Record<string, unknown> {
  return {
    message_id: id,
    date: Math.floor(Date.now() / 1000),
    chat: ALICE_DM,
    from: { ...ALICE, is_bot: false },
    ...fields,
  };
}

describe("unreadableNote", () => {
  it.each(KINDS)("names a %s", (_kind, fields, note) => {
    const message: TelegramMessage = telegramMessageSchema.parse(dm(fields, 1));
    expect(unreadableNote(message)).toBe(`${note} I can't read; it was not saved.`);
  });

  it("is undefined for a message with text or a file the bot reads, a sticker or a location", () => {
    expect(unreadableNote(telegramMessageSchema.parse(dm({ text: "hi" }, 1)))).toBeUndefined();
    expect(unreadableNote(telegramMessageSchema.parse(dm({ document: file("d") }, 1)))).toBeUndefined();
    expect(unreadableNote(telegramMessageSchema.parse(dm(STICKER, 1)))).toBeUndefined();
    expect(unreadableNote(telegramMessageSchema.parse(dm(LOCATION, 1)))).toBeUndefined();
  });
});

describe("attachmentOf", () => {
  it("takes no file from an animation, though its document is set too", () => {
    const [, fields] = KINDS.find(([kind]) => kind === "animation")!;
    expect(attachmentOf(telegramMessageSchema.parse(dm(fields, 1)), 20 * 1024 * 1024)).toBeUndefined();
  });
});

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("telegram: kinds the bot cannot read", () => {
  it("a captioned video reaches the model with the caption and a note; the person is told", async () => {
    h = await startHarness();
    h.tg.state.chat(ALICE_DM);
    h.tg.injectUpdate({
      message: dm(
        {
          caption: "what goes wrong at 0:12?",
          video: { ...file("v"), width: 640, height: 360, duration: 30 },
        },
        77,
      ),
    });
    await h.service.waitFor(() => h!.service.received.length >= 1);
    const [message] = h.service.received;
    expect(message!.text).toBe("what goes wrong at 0:12?");
    expect(message!.attachments).toEqual([
      { kind: "file-note", text: "a video — a kind of file I can't read; it was not saved." },
    ]);
    await h.tg.waitFor(() =>
      h!.tg.state.botMessages(ALICE.id).some((m) => m.text.includes("a video — a kind of file")),
    );
  });

  it.each(KINDS)(
    "an uncaptioned %s in a private chat is answered with a note, and the model gets it",
    async (_k, fields, note) => {
      h = await startHarness();
      h.tg.state.chat(ALICE_DM);
      h.tg.injectUpdate({ message: dm(fields, 78) });
      await h.service.waitFor(() => h!.service.received.length >= 1);
      const [message] = h.service.received;
      expect(message!.text).toBe("");
      expect(JSON.stringify(message!.attachments)).toContain(note);
      await h.tg.waitFor(() => h!.tg.state.botMessages(ALICE.id).some((m) => m.text.includes(note)));
    },
  );

  it("a sticker reaches the model as its emoji, a shared location as its coordinates, with no note", async () => {
    h = await startHarness();
    h.tg.state.chat(ALICE_DM);
    h.tg.injectUpdate({ message: dm(STICKER, 80) });
    h.tg.injectUpdate({ message: dm(LOCATION, 81) });
    await h.service.waitFor(() => h!.service.received.length === 2);
    expect(h.service.received.map((message) => [message.text, message.attachments])).toEqual([
      ["👍", undefined],
      ["shared a location: 52.5, 13.4", undefined],
    ]);
    expect(h.tg.state.botMessages(ALICE.id)).toEqual([]);
  });

  it("a note that cannot be delivered still reaches the model with the message", async () => {
    h = await startHarness();
    // The fake does not know this chat yet, so the note's send fails.
    h.tg.injectUpdate({
      message: dm({ caption: "look", video: { ...file("v"), width: 640, height: 360, duration: 30 } }, 79),
    });
    await h.service.waitFor(() => h!.service.received.length >= 1);
    expect(h.service.received[0]!.text).toBe("look");
  });
});
