/**
 * A turn parked at an approval card across a shutdown: for tests of what a new process on the same
 * data folder does with the card and the turn waiting on it.
 */
import { expect } from "vitest";
import type { SessionManagerOptions } from "../../../src/sessions/session-manager.js";
import { toolStep } from "../../support/scripted-provider.js";
import { makeHarness, message, thread } from "./harness.js";
import type { ToolRuns } from "./test-tools.js";

/** A process that asks to write a note, shows the card and shuts down with the turn parked there. */
export async function parkAtWriteCard(
  dataDir: string,
  runs: ToolRuns,
  overrides?: Partial<SessionManagerOptions>,
) {
  const first = await makeHarness({
    dataDir,
    runs,
    steps: [toolStep(["c1", "write_note", { text: "a" }])],
    overrides,
  });
  await first.manager.start();
  await first.manager.receive(message("write a"));
  const out = first.outputs.for(thread());
  const card = await first.outputs.until(() => out.latestCards[0], "card");
  expect(await first.manager.drain(1_000)).toEqual({ finished: 0, interrupted: 0, parked: 1 });
  await first.store.close();
  return card;
}
