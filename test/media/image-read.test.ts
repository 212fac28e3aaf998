/**
 * How much of a file the image verdict reads, and how often it sizes the bytes: a model call
 * reads a whole image once and sizes it once (a GIF past the head twice: its head, then all its
 * frames); the intake's verdict reads only what it needs (a PNG's head when its image data starts
 * in it, a GIF's every frame). `image-size` sizes WebP alone (PNG, JPEG and GIF have walks of
 * their own), so the counting is done on WebP.
 */
import { mkdtemp, open, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { probeImageFile, readImageHandle } from "../../src/media/image-probe.js";
import { pngHeader } from "../support/png-header.js";

const sizing = vi.hoisted(() => ({ calls: 0 }));
vi.mock("image-size", async (original) => {
  const real = await original<typeof import("image-size")>();
  return {
    ...real,
    imageSize: (...args: Parameters<typeof real.imageSize>) => {
      sizing.calls += 1;
      return real.imageSize(...args);
    },
  };
});

const HEAD_BYTES = 512 * 1024;
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "image-read-"));
  sizing.calls = 0;
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

/** The start of a WebP (RIFF header and VP8X chunk) declaring `width`×`height`. */
function webpHeader(width: number, height: number): Buffer {
  const bytes = Buffer.alloc(30);
  bytes.write("RIFFxxxxWEBPVP8X", 0, "latin1");
  bytes.writeUInt32LE(22, 4);
  bytes.writeUInt32LE(10, 16);
  bytes.writeUIntLE(width - 1, 24, 3);
  bytes.writeUIntLE(height - 1, 27, 3);
  return bytes;
}

/** A PNG chunk of `type` holding `data` (its CRC left zero: nothing here checks it). */
function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "latin1");
  return Buffer.concat([head, data, Buffer.alloc(4)]);
}

/** `bytes` saved as a file, and its record fields. */
async function saved(bytes: Buffer) {
  const absolute = path.join(dir, "x.png");
  await writeFile(absolute, bytes);
  return { absolute, file: { path: "x.png", name: "x.png", bytes: bytes.length } };
}

/** The bytes every FileHandle read asks for while `work` runs. */
async function bytesAskedDuring(absolute: string, work: () => Promise<unknown>): Promise<number> {
  const probe = await open(absolute, "r");
  const prototype = Object.getPrototypeOf(probe);
  await probe.close();
  let asked = 0;
  const read = prototype.read;
  vi.spyOn(prototype, "read").mockImplementation(function (this: unknown, ...args: unknown[]) {
    asked += args[2] as number;
    return read.apply(this, args);
  });
  await work();
  return asked;
}

describe("readImageHandle (what a model call sends)", () => {
  it("sizes a small image once", async () => {
    const { absolute, file } = await saved(webpHeader(40, 30));
    const handle = await open(absolute, "r");
    try {
      expect((await readImageHandle(handle, file)).probe).toMatchObject({ usable: true });
    } finally {
      await handle.close();
    }
    expect(sizing.calls).toBe(1);
  });

  it("hands back the whole of an image past the head, sized once", async () => {
    const bytes = Buffer.concat([webpHeader(40, 30), Buffer.alloc(HEAD_BYTES + 1000, 7)]);
    const { absolute, file } = await saved(bytes);
    const handle = await open(absolute, "r");
    try {
      const read = await readImageHandle(handle, file);
      expect(read.probe).toMatchObject({ usable: true, image: { width: 40, height: 30 } });
      expect(read.data.equals(await readFile(absolute))).toBe(true);
    } finally {
      await handle.close();
    }
    expect(sizing.calls).toBe(1);
  });
});

describe("probeImageFile (the intake's verdict)", () => {
  it("reads only the head of a PNG past it whose image data starts in the head", async () => {
    const { absolute, file } = await saved(
      Buffer.concat([pngHeader(40, 30), pngChunk("IDAT", Buffer.alloc(4 * HEAD_BYTES))]),
    );
    const asked = await bytesAskedDuring(absolute, async () =>
      expect(await probeImageFile(absolute, file)).toMatchObject({ usable: true }),
    );
    expect(asked).toBe(HEAD_BYTES);
  });

  it("walks at most 1,000 chunks before a PNG's data: a file of tiny ones past that is refused unwalked", async () => {
    const chunks = (count: number) => Array.from({ length: count }, () => pngChunk("tEXt", Buffer.alloc(0)));
    const idat = pngChunk("IDAT", Buffer.alloc(100));
    const many = await saved(Buffer.concat([pngHeader(40, 30), ...chunks(900), idat]));
    expect(await probeImageFile(many.absolute, many.file)).toMatchObject({ usable: true });
    const tooMany = await saved(Buffer.concat([pngHeader(40, 30), ...chunks(1_001), idat]));
    expect(await probeImageFile(tooMany.absolute, tooMany.file)).toBeUndefined();
  });

  it("reads on past the head while a PNG's chunks before its data do, and refuses a second IHDR there", async () => {
    // A second IHDR (13000×13000) after 640 KB of text chunks: Pillow reads every chunk up to the
    // image data and decodes the last IHDR's size.
    const text = Array.from({ length: 10 }, () => pngChunk("tEXt", Buffer.alloc(64 * 1024, 0x61)));
    const big = pngHeader(13_000, 13_000).subarray(8);
    const idat = pngChunk("IDAT", Buffer.alloc(100));
    const hidden = await saved(Buffer.concat([pngHeader(40, 30), ...text, big, idat]));
    expect(await probeImageFile(hidden.absolute, hidden.file)).toBeUndefined();
    // The same chunks with no second IHDR: sized once its data is reached.
    const plain = await saved(Buffer.concat([pngHeader(40, 30), ...text, idat]));
    expect(await probeImageFile(plain.absolute, plain.file)).toMatchObject({
      usable: true,
      image: { width: 40, height: 30 },
    });
  });
});
