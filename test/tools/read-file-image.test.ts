import { copyFile, open, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createReadFileTool } from "../../src/tools/files/read-file.js";
import { pngHeader } from "../support/png-header.js";
import { call, tempDir } from "./support/tool-context.js";
import { toolWorkspace } from "./support/tool-workspace.js";

const PNG = path.join(import.meta.dirname, "../fixtures/attachments/red-4x3.png");
let ws: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir: ws, cleanup } = await tempDir("ws-img-"));
  await copyFile(PNG, path.join(ws, "shot.png"));
});
afterEach(async () => {
  vi.restoreAllMocks();
  await cleanup();
});

describe("read_file on an image", () => {
  it("describes the image and attaches its record (no bytes in the result)", async () => {
    const tool = createReadFileTool({ workspace: toolWorkspace({ root: ws, extraRoots: [] }) });
    const result = await call(tool, { path: "shot.png" });
    expect(result.ok).toBe(true);
    expect(result.output).toMatch(/^shot\.png is an image \(image\/png, shot\.png, 4×3, \d+ B\)/);
    expect(result.attachments).toEqual([
      expect.objectContaining({
        kind: "image",
        path: "shot.png",
        mediaType: "image/png",
        width: 4,
        height: 3,
      }),
    ]);
  });

  it("does not attach an image whose header declares too many pixels", async () => {
    await writeFile(path.join(ws, "bomb.png"), pngHeader(60_000, 60_000));
    const tool = createReadFileTool({ workspace: toolWorkspace({ root: ws, extraRoots: [] }) });
    const result = await call(tool, { path: "bomb.png" });
    expect(result.attachments).toBeUndefined();
    expect(result.output).toMatch(
      /^bomb\.png is an image \(image\/png, 33 B\) that is not attached: it is 60000×60000 pixels/,
    );
  });

  it("does not attach a GIF whose frame is far larger than its 1×1 screen", async () => {
    const descriptor = Buffer.alloc(10);
    descriptor[0] = 0x2c;
    descriptor.writeUInt16LE(11_000, 5);
    descriptor.writeUInt16LE(11_000, 7);
    const gif = Buffer.concat([
      Buffer.from("GIF89a", "latin1"),
      Buffer.from([1, 0, 1, 0, 0, 0, 0]),
      descriptor,
      Buffer.from([2, 2, 0x44, 0x01, 0, 0x3b]),
    ]);
    await writeFile(path.join(ws, "tiny.gif"), gif);
    const tool = createReadFileTool({ workspace: toolWorkspace({ root: ws, extraRoots: [] }) });
    const result = await call(tool, { path: "tiny.gif" });
    expect(result.attachments).toBeUndefined();
    expect(result.output).toMatch(
      /^tiny\.gif is an image \(image\/gif, \d+ B\) that is not attached: it is 11000×11000 pixels/,
    );
  });

  it("judges a large image from its head, not reading the rest only to drop it", async () => {
    const big = Buffer.concat([pngHeader(40, 30), Buffer.alloc(2 * 1024 * 1024, 7)]);
    await writeFile(path.join(ws, "big.png"), big);
    const handle = await open(path.join(ws, "big.png"), "r");
    const prototype = Object.getPrototypeOf(handle);
    await handle.close();
    const read = prototype.read;
    let asked = 0;
    vi.spyOn(prototype, "read").mockImplementation(function (this: unknown, ...args: unknown[]) {
      asked += typeof args[2] === "number" ? args[2] : 0;
      return read.apply(this, args);
    });
    const tool = createReadFileTool({ workspace: toolWorkspace({ root: ws, extraRoots: [] }) });
    const result = await call(tool, { path: "big.png" });
    expect(result.attachments).toEqual([expect.objectContaining({ kind: "image", width: 40, height: 30 })]);
    expect(asked).toBeGreaterThan(0);
    expect(asked).toBeLessThan(big.length / 2);
  });

  it("still refuses other binary files", async () => {
    await writeFile(path.join(ws, "blob.bin"), Buffer.from([0, 1, 2, 0, 3]));
    const tool = createReadFileTool({ workspace: toolWorkspace({ root: ws, extraRoots: [] }) });
    const result = await call(tool, { path: "blob.bin" });
    expect(result.ok).toBe(false);
    expect(result.attachments).toBeUndefined();
  });
});
