import { describe, expect, it } from "vitest";
import {
  buttonPressSchema,
  inboundMessageSchema,
  isPlainInbound,
} from "../../src/sessions/inbound-schema.js";

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

describe("the hand check of a usual inbound message", () => {
  const target = {
    platform: "telegram",
    workspace: "tg",
    channel: "42",
    extra: { chatType: "private", replyTo: 7 },
  };
  const message = {
    dedupeKeys: ["tg:1:update:9"],
    target,
    user: { id: "42", name: "Ana" },
    text: "hello",
    files: [],
    sentAt: "2026-01-02T03:04:05.000Z",
    botUsername: "coworker_bot",
  };
  const holey: string[] = [];
  holey[1] = "k";
  const withSymbol = { chatType: "private", [Symbol("s")]: "x" };
  const broken: Record<string, unknown>[] = [
    { dedupeKeys: undefined },
    { dedupeKeys: [1] },
    { dedupeKeys: holey },
    { dedupeKeys: "k" },
    { target: undefined },
    { target: [] },
    { target: { ...target, platform: "" } },
    { target: { ...target, workspace: 1 } },
    { target: { ...target, channel: "" } },
    { target: { ...target, thread: "" } },
    { target: { ...target, thread: 5 } },
    { target: { ...target, extra: null } },
    { target: { ...target, extra: [] } },
    { target: { ...target, extra: { replyTo: Number.NaN } } },
    { target: { ...target, extra: { replyTo: Number.POSITIVE_INFINITY } } },
    { target: { ...target, extra: { nested: {} } } },
    { target: { ...target, extra: { none: null } } },
    { target: { ...target, extra: withSymbol } },
    { user: { id: "", name: "Ana" } },
    { user: { id: 42, name: "Ana" } },
    { user: { id: "42" } },
    { user: null },
    { text: undefined },
    { text: 5 },
    { files: undefined },
    { files: [{ path: "", name: "a", bytes: 1 }] },
    { files: {} },
    { attachments: "none" },
    { attachments: [{ kind: "nonsense" }] },
    { sentAt: 5 },
    { botUsername: "" },
    { botUsername: 5 },
  ];

  it("takes the usual message and its usual variants, as the schema does", () => {
    const usual = [
      message,
      { ...message, botUsername: undefined },
      { ...message, target: { platform: "slack", workspace: "T1", channel: "C1", thread: "1.2" } },
      { ...message, target: { ...target, extra: { kind: "channel", mention: true } } },
      { ...message, dedupeKeys: [], attachments: undefined, extraField: 1 },
    ];
    for (const variant of usual) {
      expect(isPlainInbound(variant), JSON.stringify(variant)).toBe(true);
      expect(inboundMessageSchema.safeParse(variant).success).toBe(true);
    }
  });

  it("never takes what the schema refuses, and leaves files and attachment records to the schema", () => {
    for (const change of broken) {
      const variant = { ...message, ...change };
      expect(isPlainInbound(variant), JSON.stringify(change)).toBe(false);
      expect(inboundMessageSchema.safeParse(variant).success, JSON.stringify(change)).toBe(false);
    }
    for (const value of [null, undefined, "text", [], [message]]) expect(isPlainInbound(value)).toBe(false);
    const withFile = { ...message, files: [{ path: "/w/a.txt", name: "a.txt", bytes: 3 }] };
    expect(isPlainInbound(withFile)).toBe(false);
    expect(inboundMessageSchema.safeParse(withFile).success).toBe(true);
  });
});
