/**
 * A native stream's markdown goes to Slack unconverted, in pieces that may split a link anywhere:
 * a link whose text passes for another address must still come out as that text with its real
 * target beside it, and every other character as it was, in order.
 */
import { describe, expect, it } from "vitest";
import { StreamedLinks } from "../../../src/channels/slack/slack-stream-links.js";

/** `pieces` through one StreamedLinks: what goes out after each, then at the end. */
function streamed(pieces: readonly string[]): string[] {
  const links = new StreamedLinks();
  return [...pieces.map((piece) => links.push(piece)), links.end()];
}

const SPOOF = "Log in at [https://sso.example.com/login](https://evil.example.net/phish) now.";
const SHOWN = "Log in at https://sso.example.com/login (https://evil.example.net/phish) now.";

describe("StreamedLinks", () => {
  it("shows the real target of a link whose text passes for another address, however it is split", () => {
    for (let cut = 0; cut <= SPOOF.length; cut++)
      expect(streamed([SPOOF.slice(0, cut), SPOOF.slice(cut)]).join(""), `cut at ${cut}`).toBe(SHOWN);
    expect(streamed([...SPOOF]).join("")).toBe(SHOWN);
    expect(streamed(['[**sso.example.com**](<https://evil.example.net> "t")']).join("")).toBe(
      "**sso.example.com** (https://evil.example.net)",
    );
  });

  it("holds back only a link that may still be open, and leaves honest links and brackets as they are", () => {
    expect(streamed(["See [the docs", "](https://example.com/docs) and [x"])).toEqual([
      "See ",
      "[the docs](https://example.com/docs) and ",
      "[x",
    ]);
    const plain = "a [b] c \\[d](e) [example.com](https://www.example.com/x) [f]\n\n(g) [h](i\nj)";
    for (let cut = 0; cut <= plain.length; cut++)
      expect(streamed([plain.slice(0, cut), plain.slice(cut)]).join(""), `cut at ${cut}`).toBe(plain);
    expect(streamed(["[a [nested](https://evil.example.net) b](https://example.com)"]).join("")).toBe(
      "[a [nested](https://evil.example.net) b](https://example.com)",
    );
  });

  it("gives out a bracket that never closes once it holds too much", () => {
    const long = `[${"x".repeat(1_500)}`;
    expect(streamed([long, "y"])).toEqual([long, "y", ""]);
  });
});
