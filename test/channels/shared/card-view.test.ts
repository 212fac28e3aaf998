import { describe, expect, it } from "vitest";
import { type CardBlockFormat, cardView, formatCardBlock } from "../../../src/channels/shared/card-view.js";
import type { Card } from "../../../src/core/card.js";

const approval: Card = {
  pendingId: "p1",
  kind: "approval",
  title: "Approve run_command?",
  blocks: [
    { kind: "text", text: "Run **it**" },
    { kind: "diff", text: "+a" },
    { kind: "fields", fields: [] },
    { kind: "quote", text: "why" },
  ],
  buttons: [
    { action: "once", label: "Approve", style: "primary" },
    { action: "always_command", label: "Always allow", style: "default" },
    { action: "once", label: "Approve again", style: "primary" },
    { action: "deny", label: "Deny", style: "danger" },
  ],
  footer: "Or reply in this thread.",
};

describe("cardView", () => {
  it("shows an open card's icon, body, one button per action, its footer and approval keys", () => {
    const view = cardView(approval);
    expect(view.open).toBe(true);
    expect(view.icon).toEqual({ emoji: "🔐", shortcode: ":lock:" });
    expect(view.blocks).toEqual([
      { kind: "text", text: "Run **it**" },
      { kind: "code", text: "+a", language: "diff" },
      { kind: "quote", text: "why" },
    ]);
    expect(view.buttons.map((button) => button.label)).toEqual(["Approve", "Always allow", "Deny"]);
    expect(view.footer).toBe("Or reply in this thread.");
    expect(view.outcome).toBeUndefined();
    expect(view.keys.approve?.action).toBe("once");
    expect(view.keys.always?.action).toBe("always_command");
    expect(view.keys.deny?.action).toBe("deny");
  });

  it("closes a decided card: the outcome instead of buttons, footer and keys", () => {
    const view = cardView({ ...approval, outcome: "Approved by Ana" });
    expect(view.open).toBe(false);
    expect(view.buttons).toEqual([]);
    expect(view.footer).toBeUndefined();
    expect(view.outcome).toBe("Approved by Ana");
    expect(view.keys).toEqual({});
    expect(cardView({ ...approval, buttons: [] }).open).toBe(false);
  });

  it("gives other kinds their icon and no approval keys", () => {
    const question = cardView({ ...approval, kind: "question", title: "Colour?" });
    expect(question.icon.shortcode).toBe(":question:");
    expect(question.keys).toEqual({});
    expect(cardView({ ...approval, kind: "item" }).icon.emoji).toBe("📌");
    const readOnly = cardView({
      ...approval,
      buttons: [{ action: "readonly_session", label: "Read-only", style: "default" }],
    });
    expect(readOnly.keys.always?.label).toBe("Read-only");
  });
});

describe("formatCardBlock", () => {
  const probe: CardBlockFormat<string> = {
    text: (markdown) => `text:${markdown}`,
    code: (text, language) => `code[${language}]:${text}`,
    quote: (text) => `quote:${text}`,
    fields: (fields) => `fields:${fields.map((field) => `${field.label}=${field.value}`).join(",")}`,
  };

  it("hands each block to its primitive, with a language safe for a class name", () => {
    expect(formatCardBlock({ kind: "text", text: "a" }, probe)).toBe("text:a");
    expect(formatCardBlock({ kind: "code", text: "x", language: 'ts"><b' }, probe)).toBe("code[tsb]:x");
    expect(formatCardBlock({ kind: "code", text: "x" }, probe)).toBe("code[]:x");
    expect(formatCardBlock({ kind: "quote", text: "q" }, probe)).toBe("quote:q");
    expect(formatCardBlock({ kind: "fields", fields: [{ label: "k", value: "v" }] }, probe)).toBe(
      "fields:k=v",
    );
  });
});
