/** parseTextCommand and isAnotherBotsCommand on the spacing around a command: the first word decides, whatever whitespace comes before, between or after. */
import { describe, expect, it } from "vitest";
import { isAnotherBotsCommand, parseTextCommand } from "../../src/core/text-commands.js";

describe("text commands and whitespace", () => {
  it("reads a command after leading spaces, tabs, newlines and no-break spaces", () => {
    expect(parseTextCommand("\u00a0 stop\u00a0")).toEqual({ ok: true, command: { name: "stop" } });
    expect(parseTextCommand("\n\tmode \t\n auto  ")).toEqual({
      ok: true,
      command: { name: "mode", mode: "auto" },
    });
    expect(parseTextCommand("  /grants   revoke\u20033", "CoworkerBot")).toEqual({
      ok: true,
      command: { name: "grants-revoke", index: 3 },
    });
  });

  it("leaves whitespace alone and ordinary words as messages", () => {
    expect(parseTextCommand(" \n\t\u00a0")).toBeUndefined();
    expect(parseTextCommand("m1234")).toBeUndefined();
    expect(parseTextCommand("hello /new@OtherBot", "CoworkerBot")).toBeUndefined();
  });

  it("knows another bot's command after leading whitespace, and only a slash command", () => {
    expect(isAnotherBotsCommand("  /new@OtherBot", "CoworkerBot")).toBe(true);
    expect(parseTextCommand("  /new@OtherBot", "CoworkerBot")).toBeUndefined();
    expect(isAnotherBotsCommand(" /new@CoworkerBot", "CoworkerBot")).toBe(false);
    expect(isAnotherBotsCommand("new@OtherBot", "CoworkerBot")).toBe(false);
    expect(isAnotherBotsCommand("/new@OtherBot", undefined)).toBe(false);
  });
});
