/**
 * A link's text passes for another address when it reads as a URL, domain or e-mail address on
 * another host than the link opens: a prompt-injected answer must not show a trusted address over
 * a phishing one. Ordinary words, and addresses naming the target's own host, are left alone.
 */
import { describe, expect, it } from "vitest";
import { labelPosesAsOtherHost } from "../../../src/channels/shared/link-label.js";

describe("labelPosesAsOtherHost", () => {
  it("catches a URL, domain or e-mail address naming another host than the target", () => {
    const evil = "https://evil.example.net/phish";
    for (const label of [
      "https://sso.example.com/login",
      "sso.example.com",
      "SSO.Example.com/login?next=1",
      "http://sso.example.com:8443",
      "it@example.com",
      "mailto:it@example.com",
      "exаmple.com", // a Cyrillic а
      "  sso.example.com  ",
    ])
      expect(labelPosesAsOtherHost(label, evil), label).toBe(true);
    expect(labelPosesAsOtherHost("it@example.com", "mailto:help@evil.example.net")).toBe(true);
    expect(labelPosesAsOtherHost("example.com", "javascript:alert(1)")).toBe(true);
  });

  it("leaves words and the target's own host alone", () => {
    expect(labelPosesAsOtherHost("the docs", "https://evil.example.net")).toBe(false);
    expect(labelPosesAsOtherHost("Log in at sso.example.com", "https://evil.example.net")).toBe(false);
    expect(labelPosesAsOtherHost("https://example.com/a", "https://example.com/b")).toBe(false);
    expect(labelPosesAsOtherHost("example.com", "https://www.EXAMPLE.com/")).toBe(false);
    expect(labelPosesAsOtherHost("www.example.com", "http://www.example.com")).toBe(false);
    expect(labelPosesAsOtherHost("it@example.com", "mailto:it@example.com")).toBe(false);
    expect(labelPosesAsOtherHost("v1.2", "https://example.com")).toBe(false);
  });
});
