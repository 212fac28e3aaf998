/**
 * Schedule tests with one or more processes (harnesses) on one store: Ana as a task owner and as
 * the one acting in her home thread, harnesses closed after each test (the last opened first),
 * time moved in minute steps with every process's work let finish after each, and Ana's tasks
 * as the store has them now. Here so the run-result and cancel tests drive processes alike.
 */
import { afterEach } from "vitest";
import { flush, type Harness, MIN } from "./support.js";

/** Ana, who owns the tasks. */
export const ANA = { platform: "slack", userId: "U1ANA" };
/** Ana acting in her home thread's session. */
export const ANA_ACTOR = { ...ANA, sessionId: "s-home" };

/**
 * Registers, in the calling file or describe, an afterEach that closes every harness handed to
 * the returned function during the test, the last handed first.
 */
export function closeAfterEach(): (...harnesses: Harness[]) => void {
  let open: Harness[] = [];
  afterEach(async () => {
    for (const harness of open.reverse()) await harness.close().catch(() => undefined);
    open = [];
  });
  return (...harnesses) => {
    open.push(...harnesses);
  };
}

/** Move the (shared) clock in minute steps, letting each process's work finish after each. */
export async function advance(harnesses: readonly Harness[], ms: number): Promise<void> {
  for (let done = 0; done < ms; done += MIN) {
    harnesses[0]!.clock.advance(Math.min(MIN, ms - done));
    for (const h of harnesses) await flush(h.service);
  }
}

/** Ana's tasks as the store has them now. */
export async function stored(h: Harness) {
  await h.service.refreshFor(ANA);
  return h.service.listFor(ANA);
}
