import { describe, expect, it } from "vitest";
import { buttonPressSchema } from "../../src/sessions/inbound-schema.js";

const press = {
  kind: "card",
  platform: "slack",
  pendingId: "apr_1",
  action: "once",
  user: { id: "U1", name: "Ana" },
} as const;

describe("a card press as the session layer takes it", () => {
  it("has where it was pressed checked like any target, so a channel's slip is a clear refusal", () => {
    const pressedIn = { platform: "slack", workspace: "T1", channel: "C1", thread: "1.2" };
    expect(buttonPressSchema.safeParse({ ...press, pressedIn }).success).toBe(true);
    // Required: a channel that forgets to say where its card was pressed is refused, never unchecked.
    expect(buttonPressSchema.safeParse(press).success).toBe(false);
    for (const broken of [{ ...pressedIn, channel: "" }, { platform: "slack" }, "C1"])
      expect(
        buttonPressSchema.safeParse({ ...press, pressedIn: broken }).success,
        JSON.stringify(broken),
      ).toBe(false);
  });
});
