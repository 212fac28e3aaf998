/**
 * An image the model endpoint refuses (a valid PNG header, garbage after it: the probe takes it,
 * the endpoint cannot decode it) fails the call with a 400 about the image. The step is tried once
 * more without images, and the refusal is kept in the history (the failed attempt's error marker
 * names the image), so no later call of the conversation — after a restart too — sends it again:
 * before, every later turn of a shared conversation failed on it.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ImageAttachment } from "../../src/core/attachment.js";
import type { ConversationMessage, ModelMessage } from "../../src/core/messages.js";
import { uploadFolderOf } from "../../src/core/upload-folders.js";
import type { MediaOptions } from "../../src/engine/outbound-media.js";
import { OpenAIProvider } from "../../src/engine/provider/openai-provider.js";
import { ProviderError } from "../../src/engine/provider/provider.js";
import { startFakeOpenAI } from "../fakes/fake-openai.js";
import { textStep } from "../support/scripted-provider.js";
import { TARGET } from "../support/engine-fixtures.js";
import { toolWorkspace } from "../tools/support/tool-workspace.js";
import { collect, completion, makeHarness, makeRequest, ofType } from "./helpers/harness.js";
import { pngHeader } from "../support/png-header.js";

const OWN = uploadFolderOf(TARGET);
let root: string;
let media: MediaOptions;

/** An image record of a file in the conversation's uploads: a PNG header, then `junk` bytes. */
async function image(name: string, junk = 100): Promise<ImageAttachment> {
  const path = `${OWN}/${name}`;
  const bytes = Buffer.concat([pngHeader(8, 6), Buffer.alloc(junk, 0x41)]);
  await writeFile(join(root, path), bytes);
  return Object.freeze({
    kind: "image",
    path,
    name,
    mediaType: "image/png",
    bytes: bytes.length,
    width: 8,
    height: 6,
  });
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "image-refusal-"));
  await mkdir(join(root, OWN), { recursive: true });
  media = { workspace: toolWorkspace({ root }), vision: true };
});
afterAll(() => rm(root, { recursive: true, force: true }));

const refused = () =>
  new ProviderError(
    "bad_request",
    "The model endpoint rejected the request (HTTP 400): You uploaded an unsupported image. Please make sure your image is valid.",
    400,
  );

/** The names of the images a model request carried as image parts, in order. */
function imagesSent(
  request: { readonly messages: readonly ModelMessage[] },
  all: readonly ImageAttachment[],
) {
  return all
    .filter((img) =>
      request.messages.some(
        (m) =>
          Array.isArray(m.content) &&
          m.content.some((p) => p.type === "image_url" && p.image_url.url.endsWith(imageTail(img))),
      ),
    )
    .map((img) => img.name);
}
/** The end of an image's data URL (the images differ in their filler's length). */
const imageTail = (img: ImageAttachment) =>
  Buffer.concat([pngHeader(8, 6), Buffer.alloc(img.bytes - 33, 0x41)])
    .toString("base64")
    .slice(-12);

const request = (
  prompt: string,
  messages: readonly ConversationMessage[],
  attachments: ImageAttachment[] = [],
  overrides: Partial<Parameters<typeof makeRequest>[0]> = {},
) =>
  makeRequest({
    prompt,
    messages: [...messages],
    platform: "slack",
    metadata: { target: TARGET },
    model: "gpt-4o",
    attachments,
    ...overrides,
  });

/** A text-only model's refusal of any image (Ollama's words). */
const noImages = () =>
  new ProviderError(
    "bad_request",
    "The model endpoint rejected the request (HTTP 400): this model does not support image input",
    400,
  );

describe("an image the model endpoint refuses", () => {
  it("is left out of one retry of the step, and never sent again, after a restart too", async () => {
    const broken = await image("broken.png");
    const h = makeHarness({ options: { media } });
    h.provider.push({ error: refused() }, textStep("I could not see the image."));
    const events = await collect(h.engine.run(request("what is this?", [], [broken])));
    expect(completion(events)).toMatchObject({
      status: "completed",
      finalText: "I could not see the image.",
    });
    expect(ofType(events, "notice").map((n) => n.message)).toEqual([
      "The model endpoint refused an image of this conversation: trying again without images. That image is not sent to this model again.",
    ]);
    expect(imagesSent(h.provider.requests[0]!, [broken])).toEqual(["broken.png"]);
    expect(imagesSent(h.provider.requests[1]!, [broken])).toEqual([]);
    expect(JSON.stringify(h.provider.requests[1]!.messages)).toContain(
      "[image: broken.png, 8×6 — the model endpoint refused this image, so it is not sent again]",
    );
    // The refusal is stored with the history, in the failed attempt's marker.
    expect(
      h.persistence.appended.map((m) => [m.role, m.meta?.error !== undefined, m.meta?.refusedImages]),
    ).toEqual([
      ["user", false, undefined],
      ["assistant", true, [broken.path]],
      ["assistant", false, undefined],
    ]);

    // A later turn, on an engine that read the stored history (a restart): one call, no image.
    const later = makeHarness({ options: { media } });
    later.provider.push(textStep("4"));
    const next = await collect(later.engine.run(request("what is 2+2?", h.persistence.appended)));
    expect(completion(next)).toMatchObject({ status: "completed", finalText: "4" });
    expect(later.provider.requests).toHaveLength(1);
    expect(imagesSent(later.provider.requests[0]!, [broken])).toEqual([]);
    expect(JSON.stringify(later.provider.requests[0]!.messages)).toContain(
      "[image: broken.png, 8×6 — the model endpoint refused this image, so it is not sent again]",
    );
  });

  it("counts only the images first sent since the endpoint's last answer as refused", async () => {
    const fine = await image("fine.png", 200);
    const broken = await image("new-broken.png", 300);
    const h = makeHarness({ options: { media } });
    h.provider.push(textStep("A red square."));
    await collect(h.engine.run(request("what is this?", [], [fine])));
    h.provider.push({ error: refused() }, textStep("I could not see the new one."), textStep("Still red."));
    await collect(h.engine.run(request("and this?", h.persistence.appended, [broken])));
    expect(imagesSent(h.provider.requests[1]!, [fine, broken])).toEqual(["fine.png", "new-broken.png"]);
    expect(h.persistence.appended.find((m) => m.meta?.refusedImages)?.meta?.refusedImages).toEqual([
      broken.path,
    ]);
    // The retry sends no image at all: the endpoint's guess at which it refused may be wrong.
    expect(imagesSent(h.provider.requests[2]!, [fine, broken])).toEqual([]);
    expect(JSON.stringify(h.provider.requests[2]!.messages)).toContain(
      `[image: fine.png, 8×6 — not sent on this call, as the model endpoint refused one of this conversation's images; read_file ${fine.path} to look at it]`,
    );
    // The next turn sends the image the endpoint took before, not the refused one.
    await collect(h.engine.run(request("and the first?", h.persistence.appended)));
    expect(imagesSent(h.provider.requests[3]!, [fine, broken])).toEqual(["fine.png"]);
  });

  it("fails the step as before when the 400 is not about an image", async () => {
    const photo = await image("photo.png", 400);
    const h = makeHarness({ options: { media } });
    h.provider.push({
      error: new ProviderError(
        "bad_request",
        "The model endpoint rejected the request (HTTP 400): bad tools",
        400,
      ),
    });
    const events = await collect(h.engine.run(request("what is this?", [], [photo])));
    expect(completion(events)).toMatchObject({ status: "error" });
    expect(h.provider.requests).toHaveLength(1);
    expect(h.persistence.appended.at(-1)?.meta?.refusedImages).toBeUndefined();
  });

  it("is the model's when the model takes no image: no one's image is marked, and another model gets them", async () => {
    const bobs = await image("bob.png", 500);
    const anns = await image("ann.png", 600);
    const h = makeHarness({ options: { media } });
    // Bob's turn in the shared thread failed (the endpoint was down): his image was never answered.
    h.provider.push({
      error: new ProviderError("server", "The model endpoint had a server error (HTTP 503).", 503),
    });
    const bob = { userId: "U2", displayName: "Bob" };
    await collect(h.engine.run(request("look at mine", [], [bobs], { requester: bob })));
    // Ann's turn: the model turns out to take no image at all.
    h.provider.push({ error: noImages() }, textStep("I cannot see images."));
    const events = await collect(h.engine.run(request("and mine?", h.persistence.appended, [anns])));
    expect(completion(events)).toMatchObject({ status: "completed", finalText: "I cannot see images." });
    expect(imagesSent(h.provider.requests[1]!, [bobs, anns])).toEqual(["bob.png", "ann.png"]);
    expect(imagesSent(h.provider.requests[2]!, [bobs, anns])).toEqual([]);
    expect(JSON.stringify(h.provider.requests[2]!.messages)).toContain(
      "[image: bob.png, 8×6 — this model cannot see images]",
    );
    expect(ofType(events, "notice").map((n) => n.message)).toEqual([
      "The model does not take images: trying again without them. No image is sent to this model again; another model gets them.",
    ]);
    // The refusal names the model, and no image: neither Bob's nor Ann's is at fault.
    const marker = h.persistence.appended.find((m) => m.meta?.imagesRefusedBy);
    expect(marker?.meta).toMatchObject({ imagesRefusedBy: "gpt-4o" });
    expect(marker?.meta?.refusedImages).toBeUndefined();

    // The same model is sent no image again; another model (a switch) is sent both.
    h.provider.push(textStep("Still none."), textStep("A red square and a blue one."));
    await collect(h.engine.run(request("again?", h.persistence.appended)));
    expect(h.provider.requests).toHaveLength(4);
    expect(imagesSent(h.provider.requests[3]!, [bobs, anns])).toEqual([]);
    await collect(h.engine.run(request("now?", h.persistence.appended, [], { model: "gpt-4.1" })));
    expect(imagesSent(h.provider.requests[4]!, [bobs, anns])).toEqual(["bob.png", "ann.png"]);
  });

  it("holds for the model it was met on: after a switch to another model the image is tried again", async () => {
    const broken = await image("switched.png", 700);
    const h = makeHarness({ options: { media } });
    h.provider.push({ error: refused() }, textStep("I could not see it."));
    await collect(h.engine.run(request("what is this?", [], [broken])));
    expect(h.persistence.appended.find((m) => m.meta?.refusedImages)?.meta).toMatchObject({
      refusedImages: [broken.path],
      imagesRefusedBy: "gpt-4o",
    });
    const turn = (model: string) =>
      collect(h.engine.run(request("and now?", h.persistence.appended, [], { model })));
    h.provider.push(textStep("Not sent."), textStep("A square."), textStep("Not sent again."));
    await turn("gpt-4o");
    expect(imagesSent(h.provider.requests[2]!, [broken])).toEqual([]);
    await turn("gpt-4.1");
    expect(imagesSent(h.provider.requests[3]!, [broken])).toEqual(["switched.png"]);
    await turn("gpt-4o");
    expect(imagesSent(h.provider.requests[4]!, [broken])).toEqual([]);
    expect(h.provider.requests).toHaveLength(5);
  });

  it("keeps a refusal stored before refusals named their model for every model", async () => {
    const old = await image("old-marker.png", 800);
    const stored: ConversationMessage[] = [
      { role: "user", content: "what is this?", attachments: [old] },
      { role: "assistant", content: null, meta: { error: "refused", refusedImages: [old.path] } },
      { role: "assistant", content: "I could not see it." },
    ];
    const h = makeHarness({ options: { media } });
    h.provider.push(textStep("Not sent."));
    await collect(h.engine.run(request("and now?", stored, [], { model: "gpt-4.1" })));
    expect(imagesSent(h.provider.requests[0]!, [old])).toEqual([]);
  });

  it("is met in Ollama's HTTP 500 over real HTTP: one retry without images, no retry of the 500", async () => {
    const photo = await image("ollama.png", 900);
    const fake = await startFakeOpenAI(({ body }) =>
      JSON.stringify(body.messages).includes('"image_url"')
        ? {
            status: 500,
            errorBody: {
              error: {
                message:
                  "Failed to create new sequence: failed to process inputs: this model is missing data required for image input",
              },
            },
          }
        : { text: "I cannot see images." },
    );
    try {
      const waits: number[] = [];
      const provider = new OpenAIProvider({
        baseURL: fake.baseURL,
        sleep: async (ms) => {
          waits.push(ms);
        },
      });
      const h = makeHarness({ options: { media, provider } });
      const events = await collect(
        h.engine.run(request("what is this?", [], [photo], { model: "llama3.2" })),
      );
      expect(completion(events)).toMatchObject({ status: "completed", finalText: "I cannot see images." });
      expect(fake.requests).toHaveLength(2);
      expect(waits).toEqual([]);
      expect(h.persistence.appended.find((m) => m.meta?.imagesRefusedBy)?.meta).toMatchObject({
        imagesRefusedBy: "llama3.2",
      });
    } finally {
      await fake.close();
    }
  });
});
