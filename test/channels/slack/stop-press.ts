/**
 * The interaction payload of Ana's (U1) press of the Stop button on a message in a thread of #general
 * (C1), as Slack delivers it to SlackInteractions.press — shared by the tests of what a Stop press
 * stops and drops.
 */
import { ACTION_IDS } from "../../../src/channels/slack/slack-blocks.js";
import type { FakeSlack } from "../../fakes/fake-slack/index.js";

/** Ana's Stop press on a new message in `thread` of C1 on `fake`. */
export function anaStopPress(fake: FakeSlack, thread: string) {
  return {
    user: { id: "U1", name: "ana", team_id: fake.state.teamId },
    team: { id: fake.state.teamId },
    channel: { id: "C1" },
    message: { ts: fake.state.nextTs(), thread_ts: thread },
    actions: [{ action_id: ACTION_IDS.stop, action_ts: String(Date.now() / 1000) }],
    trigger_id: "T-stop",
  };
}
