import { describe, expect, it } from "vitest";
import { decodeEntities } from "../../../src/channels/shared/markdown-entities.js";

describe("decodeEntities", () => {
  it("resolves numeric references and the basic named ones", () => {
    expect(decodeEntities("&lt;a&gt; &amp; &quot;b&quot; &#65;&#x42;&#X43; &#x1F600;")).toBe(
      '<a> & "b" ABC 😀',
    );
  });

  it("keeps unknown names and out-of-range numbers as written", () => {
    expect(decodeEntities("&nbsp; &#0; &#x110000; &bogus;")).toBe("&nbsp; &#0; &#x110000; &bogus;");
  });

  it("resolves the extra names a caller knows", () => {
    expect(decodeEntities("&apos;&NBSP;", { apos: "'", nbsp: "\u00a0" })).toBe("'\u00a0");
  });
});
