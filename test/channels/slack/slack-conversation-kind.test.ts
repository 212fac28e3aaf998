import { describe, expect, it } from "vitest";
import { kindOf, kindOfChannel } from "../../../src/channels/slack/slack-conversation-kind.js";

describe("Slack conversation kind", () => {
  it("reads DMs from ids starting with D, everything else as a channel", () => {
    expect(kindOfChannel("D1ANA")).toBe("dm");
    expect(kindOfChannel("C1")).toBe("channel");
    expect(kindOfChannel("G1")).toBe("channel");
  });

  it("prefers the kind the inbound side recorded in the target", () => {
    const target = { platform: "slack", workspace: "T1", channel: "C1", thread: "1.0" } as const;
    expect(kindOf(target)).toBe("channel");
    expect(kindOf({ ...target, channel: "D1" })).toBe("dm");
    expect(kindOf({ ...target, extra: { kind: "dm" } })).toBe("dm");
    expect(kindOf({ ...target, channel: "D1", extra: { kind: "channel" } })).toBe("channel");
    expect(kindOf({ ...target, channel: "D1", extra: { kind: "other" } })).toBe("dm");
  });
});
