import { copyFile, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConversationMessage, ModelMessage } from "../../src/core/messages.js";
import { ATTACHMENTS_LEAD, buildOutbound, TOOL_IMAGES_LEAD } from "../../src/engine/outbound.js";

/** An image placeholder as the user turn shows it: in the service's block after the words. */
const inBlock = (line: string) => `<attachments>\n${ATTACHMENTS_LEAD}\n${line}\n</attachments>`;
import {
  DEFAULT_IMAGE_MAX_BYTES,
  DEFAULT_MAX_IMAGE_BYTES_PER_CALL,
  type MediaOptions,
  prepareMedia,
} from "../../src/engine/outbound-media.js";
import { modelHasVision } from "../../src/engine/vision.js";
import type { ImageAttachment } from "../../src/core/attachment.js";
import { uploadFolderOf } from "../../src/core/upload-folders.js";
import { request, TARGET } from "../support/engine-fixtures.js";
import { toolWorkspace } from "../tools/support/tool-workspace.js";

const FIXTURE = join(import.meta.dirname, "../fixtures/attachments/red-4x3.png");
/** The uploads folder of the conversation the turns below belong to. */
const OWN = uploadFolderOf(TARGET);
/** Another conversation's: a DM of the same Slack team. */
const OTHERS = uploadFolderOf({ platform: "slack", workspace: "T1", channel: "D9" });
let root: string;
let bytes: Buffer;
const image: ImageAttachment = {
  kind: "image",
  path: `${OWN}/red.png`,
  name: "red.png",
  mediaType: "image/png",
  bytes: 0,
  width: 4,
  height: 3,
};
let stored: ImageAttachment;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "media-"));
  await import("node:fs/promises").then((fs) => fs.mkdir(join(root, OWN), { recursive: true }));
  await copyFile(FIXTURE, join(root, image.path));
  bytes = await readFile(FIXTURE);
  stored = Object.freeze({ ...image, bytes: bytes.length });
});
afterAll(() => rm(root, { recursive: true, force: true }));

function history(): ConversationMessage[] {
  return [{ role: "user", content: "what is this?", attachments: [stored] }];
}

async function outbound(model: string, options: Partial<MediaOptions> = {}, messages = history()) {
  const media = await prepareMedia(messages, request({ model }), {
    workspace: toolWorkspace({ root, offLimits: [join(root, "service.db")] }),
    vision: "auto",
    ...options,
  });
  return buildOutbound({ instructions: "sys", messages, media, context: "ctx" });
}

describe("per-call image adaptation", () => {
  it("gives a call that can send no image its text-only view at once, reading nothing", async () => {
    const options = { workspace: toolWorkspace({ root }), vision: "auto" as const };
    for (const view of [
      prepareMedia(history(), request({ model: "gpt-4o" }), undefined),
      prepareMedia(history(), request({ model: "gpt-3.5-turbo" }), options),
      prepareMedia([{ role: "user", content: "no image" }], request({ model: "gpt-4o" }), options),
    ]) {
      expect(view).not.toBeInstanceOf(Promise);
      expect(view).toMatchObject({ vision: false, sent: [] });
    }
    const reading = prepareMedia(history(), request({ model: "gpt-4o" }), options);
    expect(reading).toBeInstanceOf(Promise);
    expect(await reading).toMatchObject({ vision: true });
  });

  it("sends a vision model the image as an image_url data URL with the configured detail, plus the text", async () => {
    const [, user] = await outbound("gpt-4o", { imageDetail: "low" });
    expect(user).toEqual({
      role: "user",
      content: [
        { type: "text", text: "what is this?" },
        {
          type: "image_url",
          image_url: { url: `data:image/png;base64,${bytes.toString("base64")}`, detail: "low" },
        },
        { type: "text", text: "<context>\nctx\n</context>" },
      ],
    });
  });

  it("gives a text model a visible placeholder instead, as plain text", async () => {
    const [, user] = await outbound("llama3.1");
    expect(user).toEqual({
      role: "user",
      content: `what is this?\n\n${inBlock("[image: red.png, 4×3 — this model cannot see images]")}\n\n<context>\nctx\n</context>`,
    });
  });

  it("re-decides on every call: the same stored history after a model switch, and vision forced either way", async () => {
    const messages = history();
    const before = JSON.stringify(messages);
    expect(typeof (await outbound("gpt-4o", {}, messages))[1]!.content).not.toBe("string");
    expect(typeof (await outbound("mistral:7b", {}, messages))[1]!.content).toBe("string");
    expect(typeof (await outbound("mistral:7b", { vision: true }, messages))[1]!.content).not.toBe("string");
    expect(typeof (await outbound("gpt-4o", { vision: false }, messages))[1]!.content).toBe("string");
    expect(JSON.stringify(messages)).toBe(before);
  });

  it("caps by size, by count per call, and says when the file is gone", async () => {
    const [, big] = await outbound("gpt-4o", { imageMaxBytes: 10 });
    expect(JSON.stringify(big!.content)).toContain("too large to send");
    const two: ConversationMessage[] = [
      { role: "user", content: "one", attachments: [stored] },
      { role: "assistant", content: "ok" },
      { role: "user", content: "two", attachments: [{ ...stored }] },
    ];
    const out = await outbound("gpt-4o", { maxImagesPerCall: 1 }, two);
    expect(JSON.stringify(out[1]!.content)).toContain("an earlier image, not sent again");
    expect(JSON.stringify(out[3]!.content)).toContain("image_url");
    const gone: ConversationMessage[] = [
      { role: "user", content: "x", attachments: [{ ...stored, path: `${OWN}/missing.png` }] },
    ];
    expect(JSON.stringify((await outbound("gpt-4o", {}, gone))[1]!.content)).toContain("could not be read");
  });

  it("follows tool results that returned images with one user message of image parts on a vision model only", async () => {
    const messages: ConversationMessage[] = [
      { role: "user", content: "look at red.png" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "c1", type: "function", function: { name: "read_file", arguments: '{"path":"red.png"}' } },
          { id: "c2", type: "function", function: { name: "list_files", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "red.png is an image", attachments: [stored] },
      { role: "tool", tool_call_id: "c2", content: "red.png" },
    ];
    const vision = await outbound("gpt-4.1-mini", {}, messages);
    expect(vision.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "tool", "user"]);
    const last = vision[5]!.content as { type: string; text?: string }[];
    expect(last[0]).toEqual({ type: "text", text: TOOL_IMAGES_LEAD });
    expect(last[1]!.type).toBe("image_url");
    const text = await outbound("qwen2.5-coder", {}, messages);
    expect(text.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "tool"]);
  });
});

describe("the image bytes one call carries", () => {
  /** `count` images of `size` bytes each (a PNG header, then filler), one user message each. */
  async function screenshots(count: number, size: number): Promise<ConversationMessage[]> {
    const fs = await import("node:fs/promises");
    const messages: ConversationMessage[] = [];
    for (let i = 0; i < count; i++) {
      const path = `${OWN}/shot${i}-${size}.png`;
      await fs.writeFile(join(root, path), Buffer.concat([bytes, Buffer.alloc(size - bytes.length, 0x41)]));
      const shot = Object.freeze({ ...stored, path, name: `shot${i}.png`, bytes: size });
      messages.push({ role: "user", content: `look ${i}`, attachments: [shot] });
      messages.push({ role: "assistant", content: "ok" });
    }
    messages.push({ role: "user", content: "what is 2+2?" });
    return messages;
  }

  /** The bytes of the images a call's messages carry, and their count. */
  function carried(out: readonly ModelMessage[]) {
    const urls = out.flatMap((m) =>
      Array.isArray(m.content)
        ? m.content.flatMap((p) => (p.type === "image_url" ? [p.image_url.url] : []))
        : [],
    );
    const size = urls.reduce(
      (sum, url) => sum + Buffer.from(url.slice(url.indexOf(",") + 1), "base64").length,
      0,
    );
    return { count: urls.length, size };
  }

  it("by default, eight 8 MB screenshots make a call of at most 20 MB of images, not over 80 MB", async () => {
    const size = DEFAULT_IMAGE_MAX_BYTES - 1024;
    const out = await outbound("gpt-4o", {}, await screenshots(8, size));
    expect(carried(out)).toEqual({ count: 2, size: 2 * size });
    expect(2 * size).toBeLessThanOrEqual(DEFAULT_MAX_IMAGE_BYTES_PER_CALL);
  });

  it("sends the newest images first while they fit, and names the rest's paths to read_file", async () => {
    const out = await outbound("gpt-4o", { maxImageBytesPerCall: 2_500 }, await screenshots(3, 1_000));
    expect(carried(out)).toEqual({ count: 2, size: 2_000 });
    // The oldest is the one left out; the two newer ones are sent.
    expect(JSON.stringify(out[1]!.content)).toContain(
      `[image: shot0.png, 4×3 — not sent on this call: the newer images used up the 2.4 KB of images a call carries; read_file ${OWN}/shot0-1000.png to look at it]`,
    );
    expect(JSON.stringify(out[3]!.content)).toContain("image_url");
    expect(JSON.stringify(out[5]!.content)).toContain("image_url");
  });
});

describe("an image file replaced after it was recorded (the agent's shell can do that)", () => {
  /** A recorded image whose workspace file is now `make(path)`; what the vision model gets. */
  async function sentFor(name: string, make: (file: string) => Promise<unknown>) {
    const record = Object.freeze({ ...stored, path: `${OWN}/${name}` });
    await make(join(root, record.path));
    const [, user] = await outbound("gpt-4o", {}, [{ role: "user", content: "look", attachments: [record] }]);
    return user?.content;
  }
  /** A text-only message naming the unread file: no image part, nothing of its bytes. */
  const unreadable = (name: string) =>
    `look\n\n${inBlock(`[image: red.png, 4×3 — the file ${OWN}/${name} could not be read]`)}\n\n<context>\nctx\n</context>`;

  it("by a link to an endless device: refused, nothing read", async () => {
    const fs = await import("node:fs/promises");
    expect(await sentFor("zero.png", (file) => fs.symlink("/dev/zero", file))).toEqual(
      unreadable("zero.png"),
    );
  });

  it("by a FIFO: refused without waiting for a writer", async () => {
    const { execFileSync } = await import("node:child_process");
    expect(await sentFor("pipe.png", async (file) => execFileSync("mkfifo", [file]))).toEqual(
      unreadable("pipe.png"),
    );
  });

  it("by a link to a file outside the workspace: not read", async () => {
    const fs = await import("node:fs/promises");
    const outside = await mkdtemp(join(tmpdir(), "media-outside-"));
    await copyFile(FIXTURE, join(outside, "secret.png"));
    expect(await sentFor("away.png", (file) => fs.symlink(join(outside, "secret.png"), file))).toEqual(
      unreadable("away.png"),
    );
    await rm(outside, { recursive: true, force: true });
  });

  it("by a link into another conversation's uploads, or to the service's own files: not read", async () => {
    const fs = await import("node:fs/promises");
    await fs.mkdir(join(root, OTHERS), { recursive: true });
    await copyFile(FIXTURE, join(root, OTHERS, "private.png"));
    await copyFile(FIXTURE, join(root, "service.db"));
    expect(
      await sentFor("theirs.png", (file) => fs.symlink(join(root, OTHERS, "private.png"), file)),
    ).toEqual(unreadable("theirs.png"));
    expect(await sentFor("db.png", (file) => fs.symlink(join(root, "service.db"), file))).toEqual(
      unreadable("db.png"),
    );
  });
});

describe("images recorded in another conversation's uploads", () => {
  it("are not read for this conversation's turn, though the file is there", async () => {
    const fs = await import("node:fs/promises");
    const path = `${OTHERS}/red.png`;
    await fs.mkdir(join(root, OTHERS), { recursive: true });
    await copyFile(FIXTURE, join(root, path));
    const [, user] = await outbound("gpt-4o", {}, [
      { role: "user", content: "look", attachments: [Object.freeze({ ...stored, path })] },
    ]);
    expect(user?.content).toEqual(
      `look\n\n${inBlock(`[image: red.png, 4×3 — the file ${path} could not be read]`)}\n\n<context>\nctx\n</context>`,
    );
  });
});

describe("modelHasVision (auto)", () => {
  it.each([
    ["gpt-4o-mini", true],
    ["openai/gpt-4.1", true],
    ["claude-3-5-sonnet", true],
    ["gemini-2.0-flash", true],
    ["llava:13b", true],
    ["qwen2.5-vl-7b", true],
    ["o3-mini", false],
    ["gpt-3.5-turbo", false],
    ["llama3.1", false],
    ["qwen2.5-coder", false],
  ])("%s → %s", (model, expected) => {
    expect(modelHasVision(model, "auto")).toBe(expected);
  });

  it("counts configured families too", () => {
    expect(modelHasVision("my-vlm-7b", "auto", ["my-vlm"])).toBe(true);
  });
});
