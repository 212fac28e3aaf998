/**
 * Slack intake: the screen's verdicts (shapes that pass, garbage refused with its kind, Slack
 * Connect deliveries refused unless allowed), and end to end on the real Bolt app and the fake
 * Slack: a press of a button this version never posted is acked at once and answered "no longer
 * active"; an `events_api` envelope without `event` is acked and the app answers afterwards.
 */
import { afterEach, describe, expect, it } from "vitest";
import { INACTIVE_BUTTON } from "../../../src/channels/intake-log.js";
import { isOwnInstallation, screenSlackBody } from "../../../src/channels/slack/slack-intake.js";
import { slackTemplates } from "../../support/intake-fuzz.js";
import { ANA, DM, type E2E, shown, startE2E } from "./e2e-harness.js";

const HOME = { teamId: "T0FAKE" };
const t = slackTemplates("T0FAKE", "D1ANA");
const screen = (body: unknown, allowExternal = false, http = false) =>
  screenSlackBody(body, HOME, { allowExternal, http });

describe("screenSlackBody", () => {
  it("passes the bodies the channel handles, naming what they are", () => {
    expect(screen(t.event)).toEqual({ pass: true, body: "event_callback" });
    expect(screen(t.left)).toEqual({ pass: true, body: "event_callback" });
    expect(screen(t.actions)).toEqual({ pass: true, body: "block_actions" });
    expect(screen(t.command)).toEqual({ pass: true, body: "command" });
    expect(screen({ type: "url_verification", challenge: "c" }, false, true)).toEqual({
      pass: true,
      body: "url_verification",
    });
  });

  it("refuses garbage with a kind, whatever it is", () => {
    const { event: _, ...withoutEvent } = t.event;
    expect(screen(withoutEvent)).toMatchObject({ pass: false, kind: "malformed_event" });
    expect(screen({ ...t.event, event: { type: "app_home_opened" } })).toMatchObject({
      kind: "unhandled_event",
    });
    expect(screen({ ...t.actions, actions: [] })).toMatchObject({ kind: "malformed_block_actions" });
    expect(screen({ ...t.command, command: "/other" })).toMatchObject({
      kind: "unknown_command",
      reply: "This app answers /coworker only.",
    });
    expect(screen({ type: "view_submission" })).toMatchObject({ kind: "unhandled_type" });
    expect(screen({ type: "url_verification", challenge: "c" })).toMatchObject({ kind: "unhandled_type" });
    for (const garbage of [null, undefined, 0, "x", [], [t.event], true])
      expect(screen(garbage)).toMatchObject({ pass: false, kind: "malformed_body" });
  });

  it("refuses Slack Connect deliveries (another team or enterprise) unless allow_external", () => {
    const external = [
      { ...t.event, event: { ...t.event.event, user_team: "T0OTHER" } },
      { ...t.event, event: { ...t.event.event, team: "T0OTHER" } },
      { ...t.event, enterprise_id: "E0OTHER" },
      { ...t.actions, user: { ...t.actions.user, team_id: "T0OTHER" } },
      { ...t.actions, team: { id: "T0OTHER" } },
      { ...t.command, team_id: "T0OTHER" },
    ];
    for (const body of external) {
      expect(screen(body)).toMatchObject({ pass: false, kind: "external_team" });
      expect(screen(body, true)).toMatchObject({ pass: true });
    }
    expect(screen(external[5])).toMatchObject({ reply: "This Coworker serves its own workspace only." });
  });

  it("treats workspaces of the installation's own Enterprise Grid as its own", () => {
    const grid = { teamId: "T1", enterpriseId: "E1" };
    expect(isOwnInstallation(grid, ["T2"], ["E1"])).toBe(true);
    expect(isOwnInstallation(grid, ["T2"], [])).toBe(false);
    expect(isOwnInstallation(grid, ["T1"], ["E2"])).toBe(false);
    expect(isOwnInstallation(grid, ["E1"], [], true)).toBe(true);
    expect(isOwnInstallation(grid, ["E2"], ["E1"], true)).toBe(false);
    expect(isOwnInstallation({ teamId: "T1" }, ["E1"], [])).toBe(false);
    expect(isOwnInstallation({ teamId: "T1" }, ["T1", undefined, null, ""], [null])).toBe(true);
  });

  it("on an Enterprise Grid, admits only its own team in a channel shared with other organisations", () => {
    const grid = { teamId: "T0001", enterpriseId: "E0001" };
    // A partner's message in a Slack Connect channel, delivered in the installation's envelope.
    const partner = {
      ...t.event,
      team_id: "T0001",
      enterprise_id: "E0001",
      is_ext_shared_channel: true,
      event: { ...t.event.event, team: "T0PARTNER", user_team: "T0PARTNER", source_team: "T0PARTNER" },
    };
    expect(screenSlackBody(partner, grid, { allowExternal: false })).toMatchObject({
      pass: false,
      kind: "external_team",
    });
    expect(screenSlackBody(partner, grid, { allowExternal: true })).toMatchObject({ pass: true });
    const ownTeam = { ...partner, event: { ...t.event.event, team: "T0001", user_team: "T0001" } };
    expect(screenSlackBody(ownTeam, grid, { allowExternal: false })).toMatchObject({ pass: true });
    // An own-team event that names no user_team or source_team.
    const bare = { ...partner, event: { ...t.event.event, team: "T0001" } };
    expect(screenSlackBody(bare, grid, { allowExternal: false })).toMatchObject({ pass: true });
    // Grid payloads may carry the enterprise id where a team id goes; a partner's never carry ours.
    const orgLevel = { ...partner, event: { ...t.event.event, team: "E0001", user_team: "E0001" } };
    expect(screenSlackBody(orgLevel, grid, { allowExternal: false })).toMatchObject({ pass: true });
    // A sibling workspace of the enterprise is its own outside shared channels, not inside them.
    const siblingEvent = {
      ...t.event.event,
      team: "T0SIBLING",
      user_team: "T0SIBLING",
      source_team: "T0SIBLING",
    };
    const sibling = { ...partner, is_ext_shared_channel: false, event: siblingEvent };
    expect(screenSlackBody(sibling, grid, { allowExternal: false })).toMatchObject({ pass: true });
    expect(
      screenSlackBody({ ...sibling, is_ext_shared_channel: true }, grid, { allowExternal: false }),
    ).toMatchObject({
      pass: false,
      kind: "external_team",
    });
  });

  it("on an Enterprise Grid, admits a button press only from a person of its own organisation", () => {
    const grid = { teamId: "T0001", enterpriseId: "E0001" };
    // A press in a shared channel names the installation's side; only the presser's team tells.
    const press = (userTeam: string) => ({
      ...t.actions,
      team: { id: "T0001", enterprise_id: "E0001" },
      enterprise: { id: "E0001" },
      user: { ...t.actions.user, team_id: userTeam },
    });
    for (const partner of ["T0PARTNER", "E0PARTNER"])
      expect(screenSlackBody(press(partner), grid, { allowExternal: false })).toMatchObject({
        pass: false,
        kind: "external_team",
      });
    expect(screenSlackBody(press("T0PARTNER"), grid, { allowExternal: true })).toMatchObject({ pass: true });
    // Slack reports an organisation's users by its id; the installation's own team passes too.
    for (const own of ["E0001", "T0001"])
      expect(screenSlackBody(press(own), grid, { allowExternal: false })).toMatchObject({ pass: true });
    // A press from a sibling workspace of the enterprise, as that workspace's body names it.
    const sibling = { ...press("E0001"), team: { id: "T0SIBLING", enterprise_id: "E0001" } };
    expect(screenSlackBody(sibling, grid, { allowExternal: false })).toMatchObject({ pass: true });
  });
});

describe("screenSlackBody when the sender's team goes unstated", () => {
  it("refuses a message or mention in an externally shared channel that names no sender team", () => {
    const { team: _team, ...unnamed } = t.event.event as typeof t.event.event & { team?: string };
    const shared = { ...t.event, is_ext_shared_channel: true, event: unnamed };
    expect(screen(shared)).toMatchObject({ pass: false, kind: "external_team" });
    expect(screen({ ...shared, event: { ...unnamed, type: "app_mention" } })).toMatchObject({
      pass: false,
      kind: "external_team",
    });
    expect(screen(shared, true)).toMatchObject({ pass: true });
    // Any one sender team field of ours is enough; outside shared channels none is needed.
    expect(screen({ ...shared, event: { ...unnamed, source_team: "T0FAKE" } })).toMatchObject({ pass: true });
    expect(screen({ ...shared, is_ext_shared_channel: false })).toMatchObject({ pass: true });
    // An edit or deletion names its sender nowhere at its top: it passes (it only revises a buffered copy).
    for (const subtype of ["message_changed", "message_deleted"])
      expect(screen({ ...shared, event: { ...unnamed, subtype } })).toMatchObject({ pass: true });
    expect(screen({ ...shared, event: { ...unnamed, subtype: "file_share" } })).toMatchObject({
      kind: "external_team",
    });
  });

  it("refuses a button press whose presser's team is not stated, unless allow_external", () => {
    const { team_id: _teamId, ...presser } = t.actions.user;
    const press = { ...t.actions, user: presser };
    expect(screen(press)).toMatchObject({ pass: false, kind: "external_team" });
    expect(screen({ ...press, user: { ...presser, team_id: null } })).toMatchObject({
      kind: "external_team",
    });
    expect(screen(press, true)).toMatchObject({ pass: true });
  });
});

describe("Slack intake end to end", () => {
  let e2e: E2E | undefined;
  afterEach(async () => e2e?.close());

  it("acks a press of a button this version never posted and says it is no longer active", async () => {
    e2e = await startE2E(() => ({ text: "pong" }));
    const { fake } = e2e;
    const ts = fake.state.nextTs();
    fake.state.addMessage({
      channel: DM,
      ts,
      user: fake.state.botUserId,
      text: "an old card",
      blocks: [
        {
          type: "actions",
          block_id: "old",
          elements: [
            {
              type: "button",
              action_id: "legacy_approve_v1",
              value: "42",
              text: { type: "plain_text", text: "OK" },
            },
          ],
        },
      ],
    });
    const delivery = fake.pressButton({
      user: ANA,
      channel: DM,
      messageTs: ts,
      actionId: "legacy_approve_v1",
    });
    expect(await delivery.acked).toBeGreaterThanOrEqual(0);
    const told = await fake.waitFor(
      () => fake.state.ephemerals.find((e) => e.user === ANA && e.channel === DM),
      "the ephemeral answer",
    );
    expect(told.text).toBe(INACTIVE_BUTTON);
  });

  it("acks an events_api envelope without `event` and a non-JSON frame, then answers a message", async () => {
    e2e = await startE2E(() => ({ text: "pong" }));
    const { fake } = e2e;
    const envelopeId = "env-without-event";
    const acked = fake.socket.sendRaw(
      JSON.stringify({ envelope_id: envelopeId, type: "events_api", payload: { type: "event_callback" } }),
      envelopeId,
    );
    fake.socket.sendRaw("not json at all");
    expect(await acked).toBeGreaterThanOrEqual(0);
    const { ts } = fake.userPosts({ user: ANA, channel: DM, text: "still there?" });
    const reply = await fake.waitFor(
      () => fake.state.botMessages(DM, ts).find((m) => shown(m).includes("pong")),
      "the answer",
    );
    expect(shown(reply)).toContain("pong");
  });
});
