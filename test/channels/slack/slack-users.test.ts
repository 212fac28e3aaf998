/**
 * UserDirectory: a person is looked up once per TTL; a failed lookup falls back to the handle,
 * leaves guest and deactivated unknown (so access checks refuse), is not repeated for a few seconds
 * (a message asks twice: its access check and its author), then tried again; it is logged at warn
 * once per person per window.
 */
import pino, { type Logger } from "pino";
import { describe, expect, it, vi } from "vitest";
import type { WebClient } from "../../../src/channels/slack/slack-api.js";
import type { Installation } from "../../../src/channels/slack/slack-intake.js";
import { UserDirectory } from "../../../src/channels/slack/slack-users.js";

const HOME: Installation = { teamId: "T0HOME" };

/** A client whose users.info fails while `failing` is set, and counts its calls. */
function client() {
  const state = { calls: 0, failing: true };
  const users = {
    info: async () => {
      state.calls++;
      if (state.failing) throw new Error("ratelimited");
      return { ok: true, user: { profile: { display_name: "Ana" }, is_restricted: true } };
    },
  };
  return { state, client: { users } as unknown as WebClient };
}

/** A logger that records its warn and debug calls. */
function recordingLogger() {
  const warn = vi.fn();
  const debug = vi.fn();
  return { warn, debug, logger: { warn, debug } as unknown as Logger };
}

describe("UserDirectory", () => {
  it("does not ask Slack again for a person whose lookup just failed, and does a few seconds later", async () => {
    let now = 0;
    const { state, client: slack } = client();
    const users = new UserDirectory(
      slack,
      pino({ level: "silent" }),
      () => HOME,
      () => now,
    );
    expect(await users.account("U1")).toBeUndefined();
    expect(await users.user("U1", "ana.handle")).toEqual({ id: "U1", name: "ana.handle" });
    expect(state.calls).toBe(1);
    now += 6_000;
    state.failing = false;
    expect(await users.account("U1")).toBe("guest");
    expect(await users.user("U1")).toEqual({ id: "U1", name: "Ana" });
    expect(state.calls).toBe(2);
  });

  it("says neither guest nor deactivated is known when Slack cannot say, and does not cache that for long", async () => {
    let now = 0;
    const { state, client: slack } = client();
    const users = new UserDirectory(
      slack,
      pino({ level: "silent" }),
      () => HOME,
      () => now,
    );
    expect(await users.account("U1")).toBeUndefined();
    expect(await users.isDeactivatedNow("U1")).toBeUndefined();
    expect(state.calls).toBe(1);
    // The person tries again a little later: Slack is asked again (and still fails).
    now += 10_000;
    expect(await users.account("U1")).toBeUndefined();
    expect(state.calls).toBe(2);
    now += 10_000;
    state.failing = false;
    expect(await users.isDeactivatedNow("U1")).toBe(false);
    expect(await users.account("U1")).toBe("guest");
    // A success is cached as before.
    now += 10 * 60_000;
    expect(await users.account("U1")).toBe("guest");
    expect(state.calls).toBe(3);
  });

  it("logs a failing lookup at warn once per person per window, at debug in between", async () => {
    let now = 0;
    const { client: slack } = client();
    const log = recordingLogger();
    const users = new UserDirectory(
      slack,
      log.logger,
      () => HOME,
      () => now,
    );
    await users.account("U1");
    for (let i = 0; i < 5; i++) {
      now += 10_000;
      await users.account("U1");
    }
    await users.account("U2");
    expect(log.warn.mock.calls.map(([fields]) => (fields as { user: string }).user)).toEqual(["U1", "U2"]);
    expect(log.debug).toHaveBeenCalledTimes(5);
    now += 10 * 60_000;
    await users.account("U1");
    expect(log.warn).toHaveBeenCalledTimes(3);
    expect(String(log.warn.mock.calls[0]![1])).toMatch(/users\.info failed/);
  });

  it("calls an is_bot account, and Slackbot (is_bot false in users.info), a bot", async () => {
    const info = async ({ user }: { user: string }) => ({
      ok: true,
      user: { id: user, name: user, is_bot: user === "U0APP", is_restricted: false },
    });
    const users = new UserDirectory(
      { users: { info } } as unknown as WebClient,
      pino({ level: "silent" }),
      () => HOME,
    );
    expect(await users.account("U0APP")).toBe("bot");
    expect(await users.account("USLACKBOT")).toBe("bot");
    expect(await users.account("U1")).toBe("member");
  });

  it("calls a person of another organisation external: is_stranger, or a home team not ours nor our enterprise's", async () => {
    const people: Record<string, object> = {
      U0STRANGER: { is_stranger: true, team_id: "T0HOME" },
      U0PARTNER: { team_id: "T0PARTNER" },
      U0GUEST: { team_id: "T0HOME", is_restricted: true },
      U0HOME: { team_id: "T0HOME" },
      U0SIBLING: { team_id: "T0SIBLING", enterprise_user: { enterprise_id: "E0HOME" } },
      U0ORG: { team_id: "E0HOME" },
    };
    const info = async ({ user }: { user: string }) => ({ ok: true, user: { id: user, ...people[user] } });
    const client = { users: { info } } as unknown as WebClient;
    const users = new UserDirectory(client, pino({ level: "silent" }), () => HOME);
    expect(await users.account("U0STRANGER")).toBe("external");
    expect(await users.account("U0PARTNER")).toBe("external");
    expect(await users.account("U0GUEST")).toBe("guest");
    expect(await users.account("U0HOME")).toBe("member");
    expect(await users.account("U0SIBLING")).toBe("external");
    const grid = new UserDirectory(client, pino({ level: "silent" }), () => ({
      teamId: "T0HOME",
      enterpriseId: "E0HOME",
    }));
    expect(await grid.account("U0SIBLING")).toBe("member");
    expect(await grid.account("U0ORG")).toBe("member");
    expect(await grid.account("U0PARTNER")).toBe("external");
    // Before the channel knows its installation a stated home team cannot be judged.
    let home: Installation | undefined;
    const early = new UserDirectory(client, pino({ level: "silent" }), () => home);
    expect(await early.account("U0PARTNER")).toBeUndefined();
    expect(await early.account("U0STRANGER")).toBe("external");
    home = HOME;
    expect(await early.account("U0HOME")).toBe("member");
    expect(await early.account("U0PARTNER")).toBe("external");
  });
});
