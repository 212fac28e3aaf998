import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { capOutput, HeadTailBuffer, omissionMarker } from "../../src/tools/output-cap.js";

describe("output caps", () => {
  it("keeps short text whole and cuts long text to head + marker + tail", () => {
    expect(capOutput("short", 10)).toBe("short");
    expect(capOutput("abcdefghijklmnopqrstuvwxyz", 10)).toBe(`abcde${omissionMarker(16)}vwxyz`);
    expect(capOutput("abcdefghij", 4, 1)).toBe(`abcd${omissionMarker(6)}`);
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
