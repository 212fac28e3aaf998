/**
 * The once-an-hour reply to someone refused, and the note to an anonymous admin, are counted in
 * the store's slot budget: with several processes on one store (each channel here on a Bot API of
 * its own, as each update reaches one process), a stranger is told once an hour, not once per
 * process.
 */
import { tmpdir } from "node:os";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createStore } from "../../../src/store/create-store.js";
import { storeSlotBudget } from "../../../src/store/slot-budget.js";
import type { Store } from "../../../src/store/store.js";
import { GROUP, type Harness, MALLORY, MALLORY_DM, startHarness } from "./harness.js";

let harnesses: Harness[] = [];
let store: Store | undefined;
afterEach(async () => {
  await Promise.all(harnesses.map((harness) => harness.close()));
  harnesses = [];
  await store?.close();
  store = undefined;
});

/** Two channels ("processes") on one store. */
async function twoProcesses(): Promise<[Harness, Harness]> {
  store = await createStore({ url: "memory:", dataDir: tmpdir() });
  const shared = { accessStore: store.space("grants"), budget: storeSlotBudget(store.space("budgets")) };
  const one = await startHarness(shared);
  const two = await startHarness(shared);
  harnesses = [one, two];
  return [one, two];
}

/** The bot's own messages in a chat (an anonymous admin's are from a bot too: GroupAnonymousBot). */
function ours(harness: Harness, chatId: number) {
  return harness.tg.state.botMessages(chatId).filter((message) => message.from.id === harness.tg.bot.id);
}

function refusedLines(harness: Harness): Record<string, unknown>[] {
  return harness.logs().filter((line) => line.msg === "telegram: refused");
}

describe("Telegram: replies to those refused, shared by processes", () => {
  it("tells a stranger once an hour whichever process their messages reach", async () => {
    const [one, two] = await twoProcesses();
    one.tg.sendUserMessage({ chat: MALLORY_DM, from: MALLORY, text: "hi" });
    await one.tg.waitFor(() => ours(one, MALLORY_DM.id)[0]);
    two.tg.sendUserMessage({ chat: MALLORY_DM, from: MALLORY, text: "hi again" });
    await vi.waitFor(() => expect(refusedLines(two)).toHaveLength(1));
    expect(refusedLines(two)[0]).toMatchObject({ userId: MALLORY.id, told: false });
    expect(ours(two, MALLORY_DM.id)).toHaveLength(0);
  });

  it("tells a chat once an hour that anonymous admins are not served, whichever process it reaches", async () => {
    const [one, two] = await twoProcesses();
    one.tg.state.chat(GROUP);
    two.tg.state.chat(GROUP);
    one.tg.sendAnonymousAdminMessage({ chat: GROUP, text: "@coworker_bot hi" });
    await one.tg.waitFor(() => ours(one, GROUP.id)[0]);
    two.tg.sendAnonymousAdminMessage({ chat: GROUP, text: "@coworker_bot hi again" });
    await vi.waitFor(() =>
      expect(two.logs().filter((line) => line.msg === "telegram: anonymous admin refused")).toHaveLength(1),
    );
    expect(two.logs().find((line) => line.msg === "telegram: anonymous admin refused")).toMatchObject({
      told: false,
    });
    expect(ours(two, GROUP.id)).toHaveLength(0);
  });
});
