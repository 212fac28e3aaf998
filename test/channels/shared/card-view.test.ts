import { describe, expect, it } from "vitest";
import { type CardBlockFormat, cardView, formatCardBlock } from "../../../src/channels/shared/card-view.js";
import type { ButtonStyle, Card, CardBlock, CardButton } from "../../../src/core/card.js";

const press = (action: string, label: string, style: ButtonStyle = "default"): CardButton => ({
  action,
  label,
  style,
});

/** An approval whose body has each kind of block, and a button repeated under another label. */
const approval: Card = {
  pendingId: "p1",
  kind: "approval",
  title: "Approve run_command?",
  blocks: [text("Run **it**"), { kind: "diff", text: "+a" }, { kind: "fields", fields: [] }, quote("why")],
  buttons: [
    press("once", "Approve", "primary"),
    press("always_command", "Always allow"),
    press("once", "Approve again", "primary"),
    press("deny", "Deny", "danger"),
  ],
  footer: "Or reply in this thread.",
};

function text(markdown: string): CardBlock {
  return { kind: "text", text: markdown };
}

function quote(value: string): CardBlock {
  return { kind: "quote", text: value };
}

describe("cardView on text that hides or reorders itself", () => {
  it("shows bidi controls and zero-width characters as code points everywhere a person reads", () => {
    // "Trojan Source": with U+202E the approver would read the tail backwards.
    const command = "echo ok \u202E; rm -rf ~ #\u202C";
    const card: Card = {
      pendingId: "p2",
      kind: "question",
      title: "Run\u2066 this?",
      blocks: [
        { kind: "code", text: command, language: "bash" },
        { kind: "diff", text: "+x\u200By" },
        { kind: "fields", fields: [{ label: "path\u200F", value: "a\uFEFFb" }] },
        quote("why\u2069"),
        text("ok\u061C"),
      ],
      buttons: [press("q0:o0", "Yes\u202D", "primary")],
      outcome: {
        text: "Answered by ",
        by: { platform: "slack", id: "U1", name: "@\u202Eana" },
        after: ": x\u200B",
      },
    };
    const view = cardView(card);
    expect(view.title).toBe("Run⟨U+2066⟩ this?");
    expect(view.blocks).toEqual([
      { kind: "code", text: "echo ok ⟨U+202E⟩; rm -rf ~ #⟨U+202C⟩", language: "bash" },
      { kind: "code", text: "+x⟨U+200B⟩y", language: "diff" },
      { kind: "fields", fields: [{ label: "path⟨U+200F⟩", value: "a⟨U+FEFF⟩b" }] },
      quote("why⟨U+2069⟩"),
      text("ok⟨U+061C⟩"),
    ]);
    expect(view.outcome).toEqual({
      text: "Answered by ",
      by: { platform: "slack", id: "U1", name: "@⟨U+202E⟩ana" },
      after: ": x⟨U+200B⟩",
    });
    expect(cardView({ ...card, outcome: undefined }).buttons.map((button) => button.label)).toEqual([
      "Yes⟨U+202D⟩",
    ]);
  });

  it("leaves the joiners that emoji and scripts need alone", () => {
    const family = "👨\u200D👩\u200D👧 می\u200Cخواهم";
    expect(cardView({ ...approval, title: family }).title).toBe(family);
  });
});

describe("cardView", () => {
  it("shows an open card's icon, body, one button per action, its footer and approval keys", () => {
    const view = cardView(approval);
    expect(view.open).toBe(true);
    expect(view.icon).toEqual({ emoji: "🔐", shortcode: ":lock:" });
    expect(view.blocks).toEqual([
      text("Run **it**"),
      { kind: "code", text: "+a", language: "diff" },
      quote("why"),
    ]);
    expect(view.buttons.map((button) => button.label)).toEqual(["Approve", "Always allow", "Deny"]);
    expect(view.footer).toBe("Or reply in this thread.");
    expect(view.outcome).toBeUndefined();
    expect(view.keys.approve?.action).toBe("once");
    expect(view.keys.always?.action).toBe("always_command");
    expect(view.keys.deny?.action).toBe("deny");
  });

  it("closes a decided card: the outcome instead of buttons, footer and keys", () => {
    const view = cardView({ ...approval, outcome: { text: "Approved by Ana" } });
    expect(view.open).toBe(false);
    expect(view.buttons).toEqual([]);
    expect(view.footer).toBeUndefined();
    expect(view.outcome).toEqual({ text: "Approved by Ana" });
    expect(view.keys).toEqual({});
    expect(cardView({ ...approval, buttons: [], footer: undefined }).open).toBe(false);
  });

  it("keeps a card without buttons open while its footer says how to answer (a question without options)", () => {
    const question = {
      ...approval,
      kind: "question" as const,
      buttons: [],
      footer: "Reply to this message.",
    };
    expect(cardView(question)).toMatchObject({ open: true, buttons: [], footer: "Reply to this message." });
  });

  it("keeps the person a field names (name revealed) for platforms that show them, beside its text", () => {
    const requester = { platform: "slack", id: "U0MALLORY", name: "Boss\u202E" } as const;
    const view = cardView({
      ...approval,
      blocks: [
        { kind: "fields", fields: [] },
        {
          kind: "fields",
          fields: [
            { label: "Tool", value: "shell" },
            { label: "Requested by", value: "Boss (id U0MALLORY)", person: requester },
          ],
        },
      ],
    });
    expect(view.blocks).toEqual([
      {
        kind: "fields",
        fields: [
          { label: "Tool", value: "shell" },
          {
            label: "Requested by",
            value: "Boss (id U0MALLORY)",
            person: { platform: "slack", id: "U0MALLORY", name: "Boss⟨U+202E⟩" },
          },
        ],
      },
    ]);
  });

  it("gives other kinds their icon and no approval keys", () => {
    const question = cardView({ ...approval, kind: "question", title: "Colour?" });
    expect(question.icon.shortcode).toBe(":question:");
    expect(question.keys).toEqual({});
    expect(cardView({ ...approval, kind: "item" }).icon.emoji).toBe("📌");
    const readOnly = cardView({
      ...approval,
      buttons: [press("readonly_session", "Read-only")],
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
