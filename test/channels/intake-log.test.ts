/** IntakeLog: each refused item logged once, the first of its kind as a warning. */
import { Writable } from "node:stream";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { IntakeLog } from "../../src/channels/intake-log.js";

function capture() {
  const lines: { level: number; kind: string; count: number; msg: string }[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: pino({ level: "debug" }, sink) };
}

describe("IntakeLog", () => {
  it("warns on the first item of a kind, then logs each later one once at debug with a count", async () => {
    const { lines, logger } = capture();
    const log = new IntakeLog(logger);
    log.refused("socket_frame", { reason: "not JSON text" });
    log.refused("socket_frame");
    log.refused("external_team");
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.map((l) => [l.level, l.kind, l.count])).toEqual([
      [40, "socket_frame", 1],
      [20, "socket_frame", 2],
      [40, "external_team", 1],
    ]);
  });

  it("keeps a bounded number of kinds and never throws, even when the logger does", () => {
    const kinds: string[] = [];
    const logger = {
      warn: (fields: { kind: string; count: number }) => {
        kinds.push(`${fields.kind}:${fields.count}`);
        throw new Error("disk full");
      },
      debug: (fields: { kind: string; count: number }) => void kinds.push(`${fields.kind}:${fields.count}`),
    };
    const log = new IntakeLog(logger as never);
    for (let i = 0; i < 500; i++) expect(() => log.refused(`kind_${i}`)).not.toThrow();
    expect(kinds.slice(98, 102)).toEqual(["kind_98:1", "kind_99:1", "kind_100:1", "kind_101:2"]);
    // Past the budget every new kind shares one running count.
    expect(kinds.at(-1)).toBe("kind_499:400");
  });
});
