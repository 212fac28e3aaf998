import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { capOutput, HeadTailBuffer, omissionMarker } from "../../src/tools/output-cap.js";

describe("output caps", () => {
  it("keeps short text whole and cuts long text to head + marker + tail", () => {
    expect(capOutput("short", 10)).toBe("short");
    expect(capOutput("abcdefghijklmnopqrstuvwxyz", 10)).toBe(`abcde${omissionMarker(16)}vwxyz`);
    expect(capOutput("abcdefghij", 4, 1)).toBe(`abcd${omissionMarker(6)}`);
  });

  it("cuts head and tail between whole characters, counting a dropped half as omitted", () => {
    expect(capOutput("ab😀cdefgh", 6)).toBe(`ab${omissionMarker(5)}fgh`);
    expect(capOutput("abcdef😀hi", 6)).toBe(`abc${omissionMarker(5)}hi`);
    const tailCut = new HeadTailBuffer(3, 3);
    tailCut.push("abcdef😀hi");
    expect(tailCut.toString()).toBe(`abc${omissionMarker(5)}hi`);
  });

  it("a streaming buffer whose head stops short of an emoji gives the tail that room", () => {
    const headCut = new HeadTailBuffer(3, 3);
    headCut.push("ab😀cdefgh");
    expect(headCut.toString()).toBe(`ab${omissionMarker(4)}efgh`);
  });

  it("a streaming buffer keeps text that fits whole when its head stops short of an emoji", () => {
    const buffer = new HeadTailBuffer(3, 3);
    buffer.push("ab😀cd");
    expect(buffer.toString()).toBe("ab😀cd");
  });

  it("a streaming head/tail buffer equals capping the whole text", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 40 }), { maxLength: 30 }),
        fc.nat(30),
        fc.nat(30),
        (chunks, head, tail) => {
          const buffer = new HeadTailBuffer(head, tail);
          for (const chunk of chunks) buffer.push(chunk);
          const whole = chunks.join("");
          expect(buffer.receivedChars).toBe(whole.length);
          if (whole.length <= head + tail) expect(buffer.toString()).toBe(whole);
          else {
            const kept = whole.slice(0, head) + omissionMarker(whole.length - head - tail);
            expect(buffer.toString()).toBe(tail > 0 ? kept + whole.slice(-tail) : kept);
          }
        },
      ),
    );
  });
});
