/**
 * alwaysCommand (core/text-commands.ts): typed text that is a command whatever question is open —
 * the slash form and `stop`, case and spacing aside — so it never answers one and the session
 * layer reads nothing for it; a bare command word or a sentence is not.
 */
import { describe, expect, it } from "vitest";
import { alwaysCommand } from "../../src/core/text-commands.js";

describe("alwaysCommand", () => {
  it("is the slash form and stop, case and spacing aside", () => {
    expect(alwaysCommand("/new")).toBe(true);
    expect(alwaysCommand("  /mode@MyBot auto")).toBe(true);
    expect(alwaysCommand(" STOP ")).toBe(true);
    expect(alwaysCommand("stop")).toBe(true);
  });

  it("is not a bare command word another than stop, nor a sentence", () => {
    expect(alwaysCommand("new")).toBe(false);
    expect(alwaysCommand("stop it")).toBe(false);
    expect(alwaysCommand("go on")).toBe(false);
  });
});
