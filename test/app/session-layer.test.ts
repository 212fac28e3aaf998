import { describe, expect, it } from "vitest";
import {
  InProcessSessionLock,
  type SessionLease,
  type SessionLock,
} from "../../src/sessions/session-lock.js";
import { textStep } from "../support/scripted-provider.js";
import { makeHarness, message, thread } from "../sessions/helpers/harness.js";

/** The in-process lock, counting who acquired what. */
class CountingLock implements SessionLock {
  readonly acquired: string[] = [];
  private readonly inner = new InProcessSessionLock();

  acquire(key: string): Promise<SessionLease> {
    this.acquired.push(key);
    return this.inner.acquire(key);
  }

  isHeld(key: string): boolean {
    return this.inner.isHeld(key);
  }
}

describe("the session layer's composition root", () => {
  it("rejects invalid options before building anything", async () => {
    await expect(makeHarness({ overrides: { maxSessionsInMemory: 0 } })).rejects.toThrow(
      /maxSessionsInMemory must be a positive integer/,
    );
    await expect(
      makeHarness({
        overrides: {
          defaults: { model: "m", provider: "p", mode: "interactive", maxSteps: 0, queueMode: "steer" },
        },
      }),
    ).rejects.toThrow(/defaults.maxSteps must be a positive integer/);
    await expect(
      makeHarness({
        overrides: {
          defaults: {
            model: "m",
            provider: "p",
            mode: "yolo" as "interactive",
            maxSteps: 10,
            queueMode: "steer",
          },
        },
      }),
    ).rejects.toThrow();
    await expect(
      makeHarness({ overrides: { approvals: { approvers: ["not-qualified"], ttlMs: 1_000 } } }),
    ).rejects.toThrow();
  });

  it("runs turns under the injected session lock", async () => {
    const lock = new CountingLock();
    const h = await makeHarness({ steps: [textStep("hello back")], overrides: { lock } });
    expect((await h.manager.receive(message("hello"))).status).toBe("started");
    await h.manager.idle();
    expect(h.outputs.for(thread()).closedTurns).toHaveLength(1);
    expect(lock.acquired.length).toBeGreaterThan(0);
  });
});
