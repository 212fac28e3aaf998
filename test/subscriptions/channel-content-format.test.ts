/**
 * Channel content formatting under hostile text: messages full of backtick runs, as anyone in a
 * watched channel can post, still come back from catch_up inside a fence they cannot close.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fencedMessages } from "../../src/subscriptions/channel-content-format.js";
import { ALICE, type Harness, message, openHarness } from "./support.js";

const BACKTICKS = "` ".repeat(2_000);

describe("channel content format", () => {
  let h: Harness;

  beforeEach(async () => {
    h = await openHarness();
  });

  afterEach(async () => {
    await h.close();
  });

  it("catch_up reads a backlog of backtick-filled messages without crashing", async () => {
    await h.service.subscribe(ALICE, { channel: "#deploys", trigger: { type: "mention" } });
    for (let i = 0; i < 120; i += 1) await h.service.observe(message(BACKTICKS));
    const read = await h.service.catchUp(ALICE, { channel: "#deploys", limit: 200 });
    expect(read.ok).toBe(true);
    expect(read.message).toContain("120 unread messages");
  });

  it("fences with one backtick more than the longest run", () => {
    const at = "2026-11-30T09:00:00Z";
    const author = { id: "UBOB", name: "Bob", isBot: false };
    const fenced = fencedMessages([{ id: "1", author, at, text: "a ````` b ` c" }]);
    expect(fenced.startsWith("``````text\n")).toBe(true);
    expect(fenced.endsWith("\n``````")).toBe(true);
  });
});
