/**
 * Turn controls read what another process sends: a thread command reaches the receiver only with
 * arguments a typed command could have (a mode and a model the parser accepts, a revoke index of
 * 1 or more) and only as a command that acts on a session; anything else is logged and dropped,
 * never run.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import { controlChannel, type TurnControl, TurnControls } from "../../src/sessions/turn-controls.js";
import { memoryCoordinationPerTest } from "./helpers/memory-coordination.js";
import { eventually } from "../support/eventually.js";

const memory = memoryCoordinationPerTest();

const TARGET = { platform: "slack", workspace: "T1", channel: "C1", thread: "1700000000.000100" };
const USER = { id: "U_ANA", name: "Ana" };

/** A command control carrying `command` as JSON, as another process publishes it. */
const commandControl = (command: Record<string, unknown>) =>
  JSON.stringify({ kind: "command", sessionId: "s1", target: TARGET, user: USER, command });

describe("TurnControls", () => {
  it("hands on a thread command only as the parser could have made it", async () => {
    const handled: TurnControl[] = [];
    const warnings: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => warnings.push(line) });
    const controls = new TurnControls(
      memory.coordination,
      "p1",
      async (control) => {
        handled.push(control);
      },
      logger,
    );
    await controls.start();
    const refused = [
      { name: "mode", mode: "yolo" },
      { name: "mode" },
      { name: "model", model: "gpt 5 <b>" },
      { name: "grants-revoke", index: 0 },
      { name: "approve", id: "abc" },
      { name: "drop-table" },
    ];
    const taken = [
      { name: "mode", mode: "plan" },
      { name: "model", model: "claude-x" },
      { name: "grants-revoke", index: 2 },
      { name: "stop" },
    ];
    for (const command of [...refused, ...taken])
      await memory.coordination.publish(controlChannel("p1"), commandControl(command));
    await eventually(
      async () => handled.length + warnings.length === refused.length + taken.length,
      "every control to be read",
    );
    expect(handled.map((control) => (control.kind === "command" ? control.command : undefined))).toEqual(
      taken,
    );
    expect(warnings.filter((line) => line.includes("ignoring an unreadable turn control"))).toHaveLength(
      refused.length,
    );
    await controls.stop();
  });
});
