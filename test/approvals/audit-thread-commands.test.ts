/**
 * The thread commands that change a session are in the audit log with who ran them: a mode
 * switch, grants revoked, a "new" and a "stop" — each once it took effect; a command that changed
 * nothing (the mode it already had, no grants to revoke, nothing running) writes nothing.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { textStep, toolStep } from "../support/scripted-provider.js";
import { ANA, BEN, BOSS, makeHarness, message, pressCard, thread } from "../sessions/helpers/harness.js";
import { auditLines } from "./audit-helpers.js";

const COMMAND_KINDS = ["mode_switched", "grants_revoked", "session_renewed", "session_stopped"];

describe("audit records of thread commands", () => {
  it("mode, grants revoke, new and stop are recorded with who ran them", async () => {
    const h = await makeHarness({
      steps: [
        toolStep(["c1", "write_note", { text: "ana" }]),
        textStep("ok ana"),
        { text: ["thinking"], hang: true },
      ],
    });
    await h.manager.receive(message("write ana", { user: ANA }));
    const out = h.outputs.for(thread());
    const card = await h.outputs.until(() => out.latestCards.find((c) => c.buttons.length > 0), "card");
    expect(await pressCard(h, card, "always_tool", BOSS)).toMatchObject({ status: "accepted" });
    await h.manager.idle();
    const sessionId = out.turns[0]!.sessionId;

    expect(await h.manager.command(thread(), BOSS, "mode", ["auto"])).toBe("Mode set to auto.");
    expect(await h.manager.command(thread(), BEN, "mode", ["auto"])).toBe("Mode is already auto.");
    expect(await h.manager.command(thread(), BEN, "mode", ["reviewed"])).toBe("Mode set to reviewed.");
    expect(await h.manager.command(thread(), BEN, "grants", ["revoke"])).toBe("Revoked 1 grant.");
    expect(await h.manager.command(thread(), BEN, "grants", ["revoke"])).toBe("No grants to revoke.");
    expect(await h.manager.command(thread(), BEN, "stop", [])).toBe("Nothing is running.");
    await h.manager.receive(message("long job", { user: ANA }));
    await h.outputs.until(() => out.turns[1]?.events.some((e) => e.type === "text-delta"), "streaming");
    expect(await h.manager.command(thread(), BEN, "stop", [])).toBe("Stopping the running turn.");
    await h.manager.idle();
    const renewed = await h.manager.command(thread(), ANA, "new", []);
    const newSessionId = /session \(([^)]+)\)/.exec(renewed)?.[1];
    await h.manager.drain(0);

    const records = auditLines(readFileSync(h.auditLogPath, "utf8")).filter((r) =>
      COMMAND_KINDS.includes(String(r.kind)),
    );
    const base = { sessionId, turnId: "", callId: "", tool: "", at: expect.any(String), v: 2 };
    expect(records).toEqual([
      {
        ...base,
        kind: "mode_switched",
        by: `slack:${BOSS.id}`,
        byName: "Boss",
        mode: "auto",
        previousMode: "interactive",
      },
      {
        ...base,
        kind: "mode_switched",
        by: `slack:${BEN.id}`,
        byName: "Ben",
        mode: "reviewed",
        previousMode: "auto",
      },
      {
        ...base,
        kind: "grants_revoked",
        by: `slack:${BEN.id}`,
        byName: "Ben",
        revoked: [expect.objectContaining({ kind: "tool", tool: "write_note" })],
      },
      {
        ...base,
        kind: "session_stopped",
        by: `slack:${BEN.id}`,
        byName: "Ben",
        stopped: "running turn",
        dropped: 0,
      },
      {
        ...base,
        kind: "session_renewed",
        by: `slack:${ANA.id}`,
        byName: "Ana",
        newSessionId,
        mode: "interactive",
      },
    ]);
  });
});
