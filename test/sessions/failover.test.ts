import pino from "pino";
import { describe, expect, it } from "vitest";
import { FailoverWatch } from "../../src/sessions/failover.js";

describe("FailoverWatch", () => {
  it("a session that fails to resume (an unreadable record) does not keep the others orphaned", async () => {
    const resumed: string[] = [];
    const watch = new FailoverWatch({
      orphans: async () => ["bad", "good"],
      resume: async (sessionId) => {
        if (sessionId === "bad") throw new Error("session bad: unreadable stored data");
        resumed.push(sessionId);
      },
      intervalMs: 60_000,
      logger: pino({ level: "silent" }),
    });
    await watch.scan();
    expect(resumed).toEqual(["good"]);
  });
});
