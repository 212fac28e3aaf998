import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { parseCardAnswer, renderCard } from "../../../src/channels/console/card-prompt.js";
import { TerminalWriter } from "../../../src/channels/console/terminal-writer.js";
import type { Card } from "../../../src/core/card.js";

const approval: Card = {
  pendingId: "w1",
  kind: "approval",
  title: "Approve write_file?",
  blocks: [
    { kind: "diff", text: "+hello" },
    { kind: "fields", fields: [{ label: "Path", value: "a.txt" }] },
  ],
  buttons: [
    { action: "once", label: "Approve", style: "primary" },
    { action: "once", label: "Approve (again)", style: "primary" },
    { action: "always_tool", label: "Always allow write_file", style: "default" },
    { action: "deny", label: "Deny", style: "danger" },
  ],
  footer: 'Or reply "approve w1" or "deny w1".',
};

function printed(card: Card): string {
  const out = new PassThrough();
  let text = "";
  out.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  renderCard(new TerminalWriter(out, false), card);
  return text;
}

describe("console card prompt", () => {
  it("prints the body, one numbered line per action, the footer and the key hint", () => {
    expect(printed(approval).split("\n")).toEqual([
      "┌ Approve write_file?",
      "│ ```",
      "│ +hello",
      "│ ```",
      "│ Path: a.txt",
      "│ 1) Approve",
      "│ 2) Always allow write_file",
      "│ 3) Deny",
      '│ Or reply "approve w1" or "deny w1".',
      "└ [a]pprove / [A]lways (Always allow write_file) / [d]eny, or 1-3",
      "",
    ]);
  });

  it("maps numbers and keys to the buttons it printed", () => {
    expect(parseCardAnswer(approval, "2")).toEqual({
      kind: "press",
      action: "always_tool",
      label: "Always allow write_file",
    });
    expect(parseCardAnswer(approval, "A")).toMatchObject({ kind: "press", action: "always_tool" });
    expect(parseCardAnswer(approval, "Deny")).toMatchObject({ kind: "press", action: "deny" });
    expect(parseCardAnswer(approval, "4")).toEqual({ kind: "invalid", hint: "choose 1-3" });
  });

  it("takes free text for questions and nothing but numbers for plans", () => {
    const question: Card = { ...approval, kind: "question", buttons: [approval.buttons[0]!] };
    expect(parseCardAnswer(question, " blue ")).toEqual({ kind: "reply", text: "blue" });
    const plan: Card = { ...question, kind: "plan" };
    expect(parseCardAnswer(plan, "go")).toEqual({ kind: "invalid", hint: "type 1-1" });
  });
});
