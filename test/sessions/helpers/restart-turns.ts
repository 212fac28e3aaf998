/**
 * What the model was sent of a message, on its own turn and again after a restart: for tests that
 * the history keeps what travels beside a person's words (file text, the service's file notes)
 * apart from them across a restart on the same data folder.
 */
import type { InboundMessage } from "../../../src/core/inbound-message.js";
import { textStep } from "../../support/scripted-provider.js";
import { makeHarness, message, tempDir } from "./harness.js";

/** The text of the user messages a recorded model request carries. */
export function userTurns(request: { messages: readonly { role: string; content: unknown }[] }): string[] {
  return request.messages
    .filter((m) => m.role === "user")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
}

/**
 * Send `sent` in a fresh session, then restart on the same data folder and send `next` ("thanks"
 * by default): the user turn of the first request, and every user turn of the request after the
 * restart (the first one's as the stored history gives it back, then `next`'s).
 */
export async function userTurnsAcrossRestart(
  sent: InboundMessage,
  next: InboundMessage = message("thanks"),
): Promise<{ readonly first: string; readonly afterRestart: readonly string[] }> {
  const dataDir = tempDir();
  const before = await makeHarness({ dataDir, steps: [textStep("Read it.")] });
  await before.manager.start();
  await before.manager.receive(sent);
  await before.manager.idle();
  const [first] = userTurns(before.provider.lastRequest);
  await before.manager.drain(1_000);
  await before.store.close();

  const after = await makeHarness({ dataDir, steps: [textStep("Noted.")] });
  await after.manager.start();
  await after.manager.receive(next);
  await after.manager.idle();
  const afterRestart = userTurns(after.provider.lastRequest);
  after.provider.assertAllConsumed();
  await after.manager.drain(1_000);
  await after.store.close();
  return { first: first!, afterRestart };
}
