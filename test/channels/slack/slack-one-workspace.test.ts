/**
 * One Slack thread is one session, whoever writes in it: every target the channel builds (messages,
 * Stop / Retry presses, the slash command, observed channel talk, the bot leaving a channel) names
 * the installation's own team as its workspace, never the sender's. On an Enterprise Grid a sibling
 * workspace's member, or a payload carrying the enterprise id where a team id goes, and in a Slack
 * Connect channel a partner, send another team; the sender's team stays in `extra.team` (native
 * streaming names the recipient's team). The fake Slack has no enterprise, so these tests let
 * other teams in with `allowExternal` (intake's own screening of Grid deliveries is tested in
 * slack-intake.test.ts). On an ordinary install every sender's team is the installation's, so its
 * session keys are the ones they always were.
 *
 * Also: a client_msg_id that is not a UUID-like id (here one longer than the store's key limit)
 * is no dedupe key, and the message is still answered.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ACTION_IDS } from "../../../src/channels/slack/slack-blocks.js";
import { usableClientMsgId } from "../../../src/channels/slack/slack-inbound.js";
import { sessionKeyOf, type ThreadTarget } from "../../../src/core/thread-target.js";
import type { ObservedMessage } from "../../../src/subscriptions/observed-message.js";
import { echoHandler } from "../../fakes/fake-openai.js";
import type { FakeSlack, UserPost } from "../../fakes/fake-slack/index.js";
import { useFakeSlackChannel } from "./fake-slack-channel.js";
import {
  ANA,
  BEN,
  BOSS,
  DM,
  type E2E,
  GENERAL,
  MENTION,
  startE2E,
  thread,
  userTexts,
} from "./e2e-harness.js";

const SIBLING = "T0002"; // another workspace of the installation's enterprise
const ENTERPRISE = "E0001"; // the enterprise id where a team id goes

/** `user` of `team` posts `text` (in the thread `threadTs`, with its app_mention twin); its ts. */
function postAs(fake: FakeSlack, post: UserPost): string {
  return fake.userPosts(post).ts;
}

describe("one Slack thread, one session, whatever team each sender belongs to", () => {
  const startChannel = useFakeSlackChannel("slack-one-ws-");

  it("gives messages, a Stop press and the slash command of three teams one target workspace", async () => {
    const observed: ObservedMessage[] = [];
    const { fake, service } = await startChannel({
      allowExternal: true,
      observe: async (message) => void observed.push(message),
    });
    fake.state.addUser({ id: "U3", name: "cy" });
    const own = fake.state.teamId;

    const root = postAs(fake, { user: "U1", team: own, channel: "C1", text: `<@U0BOT> hi` });
    await service.waitFor(() => service.received.length === 1);
    postAs(fake, { user: "U2", team: SIBLING, channel: "C1", threadTs: root, text: `<@U0BOT> me too` });
    await service.waitFor(() => service.received.length === 2);
    postAs(fake, { user: "U3", team: ENTERPRISE, channel: "C1", threadTs: root, text: `<@U0BOT> and me` });
    await service.waitFor(() => service.received.length === 3);

    // Stop pressed by the sibling workspace's member, on a message of the thread.
    fake.socket.push("interactive", {
      type: "block_actions",
      user: { id: "U2", username: "bo", name: "bo", team_id: SIBLING },
      team: { id: SIBLING, domain: "sibling", enterprise_id: ENTERPRISE },
      enterprise: { id: ENTERPRISE },
      api_app_id: fake.state.appId,
      token: "fake-verification-token",
      container: { type: "message", message_ts: root, channel_id: "C1", is_ephemeral: false },
      channel: { id: "C1", name: "general" },
      message: { type: "message", ts: `${root}1`, thread_ts: root, text: "…" },
      actions: [{ action_id: ACTION_IDS.stop, type: "button", action_ts: "1" }],
    });
    await service.waitFor(() => service.presses.length === 1);

    // The slash command from the sibling workspace acts on its sender's latest thread: this one.
    await fake.socket.push("slash_commands", {
      token: "fake-verification-token",
      team_id: SIBLING,
      enterprise_id: ENTERPRISE,
      channel_id: "C1",
      user_id: "U2",
      user_name: "bo",
      command: "/coworker",
      text: "mode auto",
      api_app_id: fake.state.appId,
      response_url: `${fake.baseUrl}/respond/x`,
      trigger_id: "1337.42.sibling",
    }).acked;
    await service.waitFor(() => service.commands.length === 1);

    const press = service.presses[0]!;
    expect(press.kind).toBe("control");
    const pressTarget = (press as { target: ThreadTarget }).target;
    const targets = [...service.received.map((m) => m.target), pressTarget, service.commands[0]!.target];
    const keys = new Set(targets.map(sessionKeyOf));
    expect([...keys]).toEqual([`slack:${own}:C1:${root}`]);
    // The senders' own teams are kept (native streaming's recipient team).
    expect(targets.map((t) => t.extra?.team)).toEqual([own, SIBLING, ENTERPRISE, SIBLING, SIBLING]);
    // Observed channel talk is buffered under the same workspace.
    await fake.waitFor(() => observed.length >= 3, "the observed messages");
    expect(new Set(observed.map((m) => m.workspace))).toEqual(new Set([own]));
  });
});

describe("one Slack thread, one session, end to end", () => {
  let e2e: E2E;
  afterEach(async () => e2e?.close());

  it("keeps three teams' messages in one history, and finds the thread after a restart", async () => {
    e2e = await startE2E(echoHandler, {}, () => ({ channel: { allowExternal: true } }));
    const { fake, openai } = e2e;
    const own = fake.state.teamId;
    const root = postAs(fake, { user: ANA, team: own, channel: GENERAL, text: `${MENTION} first words` });
    await fake.waitFor(() => openai.requests.length === 1, "the first request");
    await e2e.current.manager.idle();
    // Then a sibling workspace's person, and one the enterprise id names, in the same thread.
    for (const [user, team, words, request] of [
      [BEN, SIBLING, "second words", 2],
      [BOSS, ENTERPRISE, "third words", 3],
    ] as const) {
      postAs(fake, { user, team, channel: GENERAL, threadTs: root, text: `${MENTION} ${words}` });
      await fake.waitFor(() => openai.requests.length === request, `request ${request}`);
      await e2e.current.manager.idle();
    }
    const third = userTexts(openai, 2).join("\n");
    expect(third).toContain("first words");
    expect(third).toContain("second words");
    expect(third).toContain("third words");

    // After a restart the thread registry is empty: a reply without a mention from the sibling
    // workspace is let in only if the session lookup finds the thread's session.
    await e2e.restart();
    postAs(fake, { user: BEN, team: SIBLING, channel: GENERAL, threadTs: root, text: "fourth words" });
    await fake.waitFor(() => openai.requests.length === 4, "the reply without a mention");
    await e2e.current.manager.idle();
    const fourth = userTexts(openai, 3).join("\n");
    expect(fourth).toContain("first words");
    expect(fourth).toContain("fourth words");
    await fake.waitFor(() => thread(fake, GENERAL, root).length === 4, "four answers in the thread");
  });

  it("answers a message whose client_msg_id is longer than a dedupe key may be", async () => {
    e2e = await startE2E(echoHandler);
    const { fake } = e2e;
    const ts = postAs(fake, {
      user: ANA,
      team: fake.state.teamId,
      channel: DM,
      text: "long id here",
      clientMsgId: "x".repeat(300),
    });
    const [reply] = await fake.waitFor(() => {
      const replies = thread(fake, DM, ts);
      return replies.length > 0 && !fake.state.botMessages(DM, ts)[0]!.streaming ? replies : undefined;
    }, "the reply");
    expect(reply).toBe('You said: "long id here"');
  });
});

describe("usableClientMsgId", () => {
  it("takes a UUID and leaves out an id too long, empty or not printable ASCII", () => {
    expect(usableClientMsgId("3b2c1a4e-9f8d-4c7b-a6e5-1d2c3b4a5f6e")).toBe(true);
    expect(usableClientMsgId(undefined)).toBe(false);
    expect(usableClientMsgId("")).toBe(false);
    expect(usableClientMsgId("x".repeat(65))).toBe(false);
    expect(usableClientMsgId("has space")).toBe(false);
    expect(usableClientMsgId("ünïcode")).toBe(false);
    expect(usableClientMsgId("line\nbreak")).toBe(false);
  });
});
