/**
 * fileKindOf on text: a file is text when its first bytes are UTF-8, including a short file that
 * ends in an emoji (the last four bytes used to be cut off before a strict check, so a cut inside
 * a multibyte character refused the whole file) and a sample that ends inside a character.
 */
import { describe, expect, it } from "vitest";
import { fileKindOf } from "../../src/attachments/file-kind.js";

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

describe("fileKindOf and text", () => {
  it("takes a short file with an emoji near its end as text", () => {
    expect(fileKindOf("note.txt", "text/plain", bytes("abc😀def"))).toBe("text");
    expect(fileKindOf("note.md", undefined, bytes("hi 😀\n"))).toBe("text");
    expect(fileKindOf("note.txt", "text/plain", bytes("é"))).toBe("text");
  });

  it("takes a sample cut inside a character as text", () => {
    const sample = bytes(`${"a".repeat(4094)}😀`).subarray(0, 4096);
    expect(fileKindOf("long.txt", "text/plain", sample)).toBe("text");
  });

  it("refuses bytes that are not UTF-8, also in the last four", () => {
    expect(fileKindOf("x.txt", "text/plain", Uint8Array.from([0x61, 0x62, 0x63, 0x64, 0x65, 0xff]))).toBe(
      "other",
    );
    expect(
      fileKindOf("x.txt", "text/plain", Uint8Array.from([0x61, 0xff, 0x62, 0x63, 0x64, 0x65, 0x66])),
    ).toBe("other");
    expect(fileKindOf("x.txt", "text/plain", bytes("a\0b"))).toBe("other");
  });
});
