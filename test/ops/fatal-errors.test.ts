/** Fatal faults: an uncaught exception or unhandled rejection ends the process, loudly, with 1. */
import { EventEmitter } from "node:events";
import { PassThrough } from "node:stream";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { installFatalHandlers } from "../../src/ops/fatal-errors.js";

function setup() {
  const source = new EventEmitter();
  const stderr = new PassThrough();
  let text = "";
  stderr.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  const logged: string[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => void logged.push(line) });
  const exits: number[] = [];
  const exited = new Promise<number>((resolve) => {
    const stop = installFatalHandlers({
      logger,
      stderr,
      exit: (code) => {
        exits.push(code);
        resolve(code);
      },
      source,
    });
    void stop;
  });
  return { source, stderr: () => text, logged, exits, exited };
}

describe("installFatalHandlers", () => {
  it("an unhandled rejection: one fatal log line, one stderr line, exit 1", async () => {
    const t = setup();
    t.source.emit(
      "unhandledRejection",
      new TypeError("Cannot read properties of undefined (reading 'type')"),
    );
    expect(await t.exited).toBe(1);
    expect(t.stderr()).toBe(
      "✗ Coworker stopped after an unhandled rejection: TypeError: Cannot read properties of undefined (reading 'type')\n",
    );
    expect(t.logged).toHaveLength(1);
    expect(JSON.parse(t.logged[0] as string)).toMatchObject({ level: 60, kind: "unhandled rejection" });
  });

  it("an uncaught exception exits 1 once, however many follow; secrets are scrubbed", async () => {
    const t = setup();
    t.source.emit("uncaughtException", new Error("boom with xoxb-1234567890-abcdefghij"));
    t.source.emit("uncaughtException", new Error("again"));
    expect(await t.exited).toBe(1);
    expect(t.exits).toEqual([1]);
    expect(t.stderr()).toContain("uncaught exception: Error: boom");
    expect(t.stderr()).not.toContain("xoxb-1234567890-abcdefghij");
  });

  it("stops listening when uninstalled", () => {
    const source = new EventEmitter();
    const stop = installFatalHandlers({
      logger: pino({ level: "silent" }),
      stderr: new PassThrough(),
      exit: () => undefined,
      source,
    });
    expect(source.listenerCount("unhandledRejection")).toBe(1);
    stop();
    expect(source.listenerCount("unhandledRejection")).toBe(0);
    expect(source.listenerCount("uncaughtException")).toBe(0);
  });
});
