/**
 * Telegram long polling with two real processes on one Redis, against a fake Telegram that answers
 * a second concurrent getUpdates with 409: the poller lease lets one process poll at a time (no
 * conflict ever), and after the poller is killed with SIGKILL the other takes over within 15 s
 * and answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { echoHandler } from "../fakes/fake-openai.js";
import { ALICE, ALICE_DM } from "../channels/telegram/harness.js";
import { type CoworkerCluster, type CoworkerProcess, startCoworkers } from "../support/coworker-processes.js";

const ELECTED = "telegram poller elected: this process polls";

let cluster: CoworkerCluster;
beforeAll(async () => {
  cluster = await startCoworkers({
    count: 2,
    model: echoHandler,
    telegram: { concurrentPolls: "conflict" },
    env: { TELEGRAM_ALLOWED_USERS: String(ALICE.id) },
  });
  cluster.telegram!.state.chat(ALICE_DM);
}, 60_000);
afterAll(async () => cluster?.close());

const polling = (p: CoworkerProcess) => p.logs().some((line) => line.msg === ELECTED);

async function answered(text: string): Promise<void> {
  const tg = cluster.telegram!;
  tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text });
  await tg.waitFor(
    () =>
      tg.state.botMessages(ALICE.id).some((message) => (message.text ?? "").includes(`You said: "${text}`)),
    30_000,
  );
}

describe("Telegram polling on several processes", () => {
  it("has at most one poller; when it is killed another polls within 15 s and answers", async () => {
    const tg = cluster.telegram!;
    await answered("hello before");
    const pollers = cluster.processes.filter(polling);
    expect(pollers).toHaveLength(1);
    const [leader] = pollers;
    const standby = cluster.processes.find((p) => p !== leader)!;
    // More updates, so more polls: still no second poller.
    const polls = tg.callsOf("getUpdates").length;
    await answered("hello again");
    await answered("and again");
    expect(tg.callsOf("getUpdates").length).toBeGreaterThan(polls + 1);
    expect(tg.pollConflicts).toBe(0);
    expect(polling(standby)).toBe(false);

    leader!.signal("SIGKILL");
    await leader!.exited;
    await standby.waitForLog((line) => line.msg === ELECTED, "the standby to take over polling", 15_000);
    await answered("hello after the kill");
    expect(tg.pollConflicts).toBe(0);
  }, 90_000);
});
