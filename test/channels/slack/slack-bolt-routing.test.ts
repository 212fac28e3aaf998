/**
 * How Bolt's routing meets the intake's screening: Bolt routes a body by the fields it carries (an
 * `event` before a `command` before `actions`), the screening by its `type`, so a body screened as
 * one kind must not reach the listener of another with the fields the screening never checked.
 */
import { describe, expect, it } from "vitest";
import { ACTION_IDS } from "../../../src/channels/slack/slack-blocks.js";
import { useFakeSlackChannel } from "./fake-slack-channel.js";

describe("a delivery screened as one kind reaches only that kind's listener", () => {
  const startChannel = useFakeSlackChannel("slack-bolt-routing-");

  it("does not take a press carrying a command or an event as that command or event", async () => {
    const { fake, service } = await startChannel();
    const own = fake.state.teamId;
    const press = {
      type: "block_actions",
      user: { id: "U1", username: "ana", name: "ana", team_id: own },
      team: { id: own, domain: "own" },
      api_app_id: fake.state.appId,
      token: "fake-verification-token",
      container: { type: "message", message_ts: "1.1", channel_id: "C1", is_ephemeral: false },
      channel: { id: "C1", name: "general" },
      actions: [{ action_id: ACTION_IDS.stop, type: "button", action_ts: "1" }],
    };
    // A command and a mention, never screened as such, riding on our member's press (and a
    // mention on our member's command): none of them is taken.
    const command = {
      command: "/coworker",
      team_id: own,
      user_id: "U1",
      channel_id: "C1",
      text: "mode auto",
      response_url: `${fake.baseUrl}/respond/x`,
    };
    const event = (text: string) => ({
      type: "message",
      user: "U1",
      team: own,
      channel: "C1",
      ts: "2.2",
      text,
    });
    await fake.socket.push("interactive", { ...press, ...command }).acked;
    await fake.socket.push("interactive", { ...press, event: event("<@U0BOT> in a press") }).acked;
    fake.socket.push("slash_commands", { ...command, event: event("<@U0BOT> in a command") });
    // A genuine press and mention after them: once both are handled, the ones before were routed.
    await fake.socket.push("interactive", press).acked;
    fake.userPosts({ user: "U1", team: own, channel: "C1", text: "<@U0BOT> genuine" });
    await service.waitFor(() => service.presses.length >= 1 && service.received.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(service.received.map((m) => m.text)).toEqual([expect.stringContaining("genuine")]);
    expect(service.commands).toHaveLength(0);
    expect(service.presses).toHaveLength(1);
  });
});
