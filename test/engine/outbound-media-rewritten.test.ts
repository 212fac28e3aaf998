/**
 * An image record's verdict (a viewable image within the pixel budget) was on the bytes it was
 * made from; the file can be rewritten afterwards by the conversation's shell, write_file or
 * web_fetch's save_to. Each model call judges the bytes it reads again and sends them only when
 * they pass and are still of the recorded type; otherwise the model gets a placeholder saying the
 * image changed since it was attached.
 */
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ImageAttachment } from "../../src/core/attachment.js";
import type { ConversationMessage } from "../../src/core/messages.js";
import { uploadFolderOf } from "../../src/core/upload-folders.js";
import { prepareMedia } from "../../src/engine/outbound-media.js";
import { probeImageFile } from "../../src/media/image-probe.js";
import { request, TARGET } from "../support/engine-fixtures.js";
import { pngHeader } from "../support/png-header.js";
import { toolWorkspace } from "../tools/support/tool-workspace.js";

const FIXTURES = join(import.meta.dirname, "../fixtures/attachments");
const OWN = uploadFolderOf(TARGET);
let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "media-rewritten-"));
  await mkdir(join(root, OWN), { recursive: true });
});
afterAll(() => rm(root, { recursive: true, force: true }));

/** The record intake would make of the red 4×3 PNG saved as `name`. */
async function recorded(name: string): Promise<ImageAttachment> {
  const rel = `${OWN}/${name}`;
  const abs = join(root, rel);
  await copyFile(join(FIXTURES, "red-4x3.png"), abs);
  const probe = await probeImageFile(abs, { path: rel, name, bytes: (await readFile(abs)).length });
  if (!probe?.usable) throw new Error("the fixture is a usable image");
  return probe.image;
}

/** What one vision model call shows for `image`. */
async function shown(image: ImageAttachment) {
  const messages: ConversationMessage[] = [{ role: "user", content: "look", attachments: [image] }];
  const media = await prepareMedia(messages, request({ model: "gpt-4o" }), {
    workspace: toolWorkspace({ root, offLimits: [join(root, "service.db")] }),
    vision: "auto",
  });
  return { part: media.parts([image])[0], sent: media.sent };
}

const changed = (image: ImageAttachment) => ({
  type: "text",
  text: expect.stringContaining(`the file ${image.path} changed since it was attached, so it is not sent`),
});

describe("an attached image rewritten before a model call", () => {
  it("still sends the image while its bytes pass", async () => {
    const image = await recorded("same.png");
    const bytes = await readFile(join(root, image.path));
    expect((await shown(image)).part).toEqual({
      type: "image_url",
      image_url: { url: `data:image/png;base64,${bytes.toString("base64")}`, detail: "auto" },
    });
  });

  it("does not send a pixel bomb written over it", async () => {
    const image = await recorded("bomb.png");
    // A PNG that declares 100000×100000 pixels (40 GB decoded).
    await writeFile(join(root, image.path), pngHeader(100_000, 100_000));
    const { part, sent } = await shown(image);
    expect(part).toEqual(changed(image));
    expect(sent).toEqual([]);
  });

  it("does not send an image of another type under the recorded one", async () => {
    const image = await recorded("now-jpeg.png");
    await copyFile(join(FIXTURES, "python-16x16.jpg"), join(root, image.path));
    expect((await shown(image)).part).toEqual(changed(image));
  });

  it("does not send what is no image any more", async () => {
    const image = await recorded("now-text.png");
    await writeFile(join(root, image.path), "not an image\n");
    expect((await shown(image)).part).toEqual(changed(image));
  });
});
