/**
 * AccessPolicy's guest check fails closed: when Slack cannot say whether a person is a guest, the
 * person is refused with an honest "could not confirm" reply; people named in the user list, bot
 * ids, and everyone when guests are allowed, need no guest check.
 */
import { describe, expect, it } from "vitest";
import { type AccountKind, AccessPolicy, REFUSALS } from "../../../src/channels/slack/slack-access.js";

/** A guest lookup that cannot say (users.info failed), counting its calls. */
function unknownGuest() {
  const state = { calls: 0 };
  return {
    state,
    account: async (): Promise<AccountKind | undefined> => {
      state.calls++;
      return undefined;
    },
  };
}

describe("AccessPolicy guest check", () => {
  it("refuses a person whose guest status Slack could not confirm, saying so", async () => {
    const lookup = unknownGuest();
    const policy = new AccessPolicy([], [], { allow: false, account: lookup.account });
    expect(await policy.check("U1", "C0123", "channel")).toEqual({
      allowed: false,
      refusal: REFUSALS.unconfirmed,
      unconfirmed: true,
    });
    expect(await policy.check("U1", "D0123", "dm")).toMatchObject({ allowed: false });
    expect(REFUSALS.unconfirmed).toMatch(/couldn't confirm your account.*try again shortly/);
    expect(lookup.state.calls).toBe(2);
  });

  it("still refuses a known guest and lets in a known member", async () => {
    const policy = new AccessPolicy([], [], {
      allow: false,
      account: async (id) => (id === "UGUEST" ? "guest" : "member"),
    });
    expect(await policy.check("UGUEST", "C1", "channel")).toEqual({
      allowed: false,
      refusal: REFUSALS.guest,
    });
    expect(await policy.check("UMEMBER", "C1", "channel")).toEqual({ allowed: true });
  });

  it("asks nothing of people named in the user list", async () => {
    const lookup = unknownGuest();
    const listed = new AccessPolicy(["slack:U1"], [], { allow: false, account: lookup.account });
    expect(await listed.check("U1", "C1", "channel")).toEqual({ allowed: true });
    expect(await listed.check("U2", "C1", "channel")).toEqual({ allowed: false, refusal: REFUSALS.user });
    expect(lookup.state.calls).toBe(0);
  });

  it("with guests allowed still asks, refusing whom Slack cannot confirm is of this organisation", async () => {
    const lookup = unknownGuest();
    const open = new AccessPolicy([], [], { allow: true, account: lookup.account });
    expect(await open.check("U2", "C1", "channel")).toMatchObject({ allowed: false, unconfirmed: true });
    const kinds = new AccessPolicy([], [], {
      allow: true,
      account: async (id) => (id === "UGUEST" ? "guest" : "member"),
    });
    expect(await kinds.check("UGUEST", "C1", "channel")).toEqual({ allowed: true });
  });

  it("asks nothing about an allowed bot's id: no bot is a guest, and users.info knows no bot id", async () => {
    const lookup = unknownGuest();
    const policy = new AccessPolicy([], [], { allow: false, account: lookup.account }, ["B0DEPLOY"]);
    expect(await policy.check("B0DEPLOY", "C1", "channel")).toEqual({ allowed: true });
    expect(lookup.state.calls).toBe(0);
    expect(await policy.check("U0DEPLOY", "C1", "channel")).toMatchObject({ allowed: false });
  });

  it("never takes Slackbot or a bot account for 'anyone who is no guest'", async () => {
    const kinds: Record<string, AccountKind> = { USLACKBOT: "member", U0APP: "bot", U1: "member" };
    const asked: string[] = [];
    const account = async (id: string) => {
      asked.push(id);
      return kinds[id];
    };
    const policy = new AccessPolicy([], [], { allow: false, account });
    // users.info calls Slackbot no bot and no guest: refused by its id, before any lookup.
    expect(await policy.check("USLACKBOT", "C1", "channel")).toEqual({
      allowed: false,
      refusal: REFUSALS.user,
    });
    expect(await policy.check("U0APP", "C1", "channel")).toEqual({ allowed: false, refusal: REFUSALS.user });
    expect(await policy.check("U1", "C1", "channel")).toEqual({ allowed: true });
    expect(asked).toEqual(["U0APP", "U1"]);
    // Guests allowed: still no Slackbot.
    const open = new AccessPolicy([], [], { allow: true, account });
    expect(await open.check("USLACKBOT", "D1", "dm")).toMatchObject({ allowed: false });
    // Named as an allowed bot (or in the user list), it is let in, like any allowed bot.
    const bots = new AccessPolicy([], [], { allow: false, account }, ["USLACKBOT", "U0APP"]);
    expect(await bots.check("USLACKBOT", "C1", "channel")).toEqual({ allowed: true });
    expect(await bots.check("U0APP", "C1", "channel")).toEqual({ allowed: true });
    const listed = new AccessPolicy(["USLACKBOT"], [], { allow: false, account });
    expect(await listed.check("USLACKBOT", "C1", "channel")).toEqual({ allowed: true });
  });
});

describe("AccessPolicy for bots and people of other organisations", () => {
  const member = { allow: false, account: async (): Promise<AccountKind> => "member" };

  it("refuses a bot id allowed_bots does not name, with or without a user list", async () => {
    for (const users of [[], ["U1"]]) {
      const policy = new AccessPolicy(users, [], member, ["B7"]);
      expect(await policy.check("B0ANYONE", "C1", "channel")).toEqual({
        allowed: false,
        refusal: REFUSALS.user,
      });
      expect(await policy.check("B0ANYONE", "D1", "dm")).toMatchObject({ allowed: false });
    }
  });

  it("lets an allowed bot in when allowed_users is set too (it names people only)", async () => {
    const policy = new AccessPolicy(["U1"], [], member, ["B7", "U0DEPLOY"]);
    expect(await policy.check("B7", "D9", "dm")).toEqual({ allowed: true });
    expect(await policy.check("U0DEPLOY", "C1", "channel")).toEqual({ allowed: true });
    expect(await policy.check("U1", "C1", "channel")).toEqual({ allowed: true });
    expect(await policy.check("U2", "C1", "channel")).toEqual({ allowed: false, refusal: REFUSALS.user });
  });

  it("refuses a person of another organisation unless the user list names them, guests allowed or not", async () => {
    const account = async (id: string): Promise<AccountKind> => (id === "U0PARTNER" ? "external" : "member");
    for (const allow of [false, true]) {
      const policy = new AccessPolicy([], [], { allow, account });
      expect(await policy.check("U0PARTNER", "C0SHARED", "channel")).toEqual({
        allowed: false,
        refusal: REFUSALS.external,
      });
      expect(await policy.check("U0PARTNER", "D0PARTNER", "dm")).toMatchObject({ allowed: false });
      expect(await policy.check("U1", "C0SHARED", "channel")).toEqual({ allowed: true });
    }
    const listed = new AccessPolicy(["U0PARTNER"], [], { allow: false, account });
    expect(await listed.check("U0PARTNER", "C0SHARED", "channel")).toEqual({ allowed: true });
  });
});
