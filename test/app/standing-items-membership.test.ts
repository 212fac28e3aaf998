/**
 * A standing item stops when its creator leaves the conversation it runs in, through the real
 * assembly (`coworker start`, Slack in Socket Mode on the fake, the model on the fake OpenAI
 * server): Ana sets a wake-up in #general, is removed from #general before it is due, and the
 * wake-up is paused with a note in its thread instead of running a turn as her there.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startFakeSlack } from "../fakes/fake-slack/index.js";
import { shown } from "../channels/slack/e2e-harness.js";
import { type Closers, lastMessage, startOnSlack, wakingModel } from "./standing-items-helpers.js";

const ANA = { id: "U1ANA", name: "ana", displayName: "Ana" };
const GENERAL = "C1GEN";

const closers: Closers = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe("standing items and membership", () => {
  it("a wake-up whose creator was removed from its channel is paused, with a note in its thread, and runs no turn", async () => {
    const slack = await startFakeSlack();
    closers.push(() => slack.close());
    slack.state.addUser(ANA);
    slack.state.addChannel({ id: GENERAL, name: "general", type: "channel", members: [ANA.id] });
    const openai = await wakingModel(closers, "Woken.");
    await startOnSlack(slack, openai, ANA.id, closers);

    const { ts } = slack.userPosts({
      user: ANA.id,
      channel: GENERAL,
      text: `<@${slack.state.botUserId}> wake me in a few seconds`,
    });
    await slack.waitFor(
      () => slack.state.botMessages(GENERAL, ts).find((m) => shown(m).includes("I will wake you.")),
      "the agent's reply",
    );
    slack.state.channels.get(GENERAL)?.members.delete(ANA.id);
    const note = await slack.waitFor(
      () =>
        slack.state.botMessages(GENERAL, ts).find((m) => shown(m).includes("I paused the scheduled wake-up")),
      "the pause note",
    );
    expect(shown(note)).toMatch(
      /I paused the scheduled wake-up wak_\w+, which runs as the person who set it up: Ana \(id U1ANA\) may no longer use Coworker in this conversation\./,
    );
    // The refusal comes before the wake: no turn ran as Ana.
    expect(
      openai.requests.filter((body) => String(lastMessage(body).content).startsWith("[Wake-up")),
    ).toHaveLength(0);
  });
});
