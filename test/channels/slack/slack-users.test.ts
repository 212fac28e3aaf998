/**
 * UserDirectory: a person is looked up once per TTL; a failed lookup falls back to the handle, no
 * guest, and is not repeated for a short while (a message asks twice: its access check and its
 * author), then tried again.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import type { WebClient } from "../../../src/channels/slack/slack-api.js";
import { UserDirectory } from "../../../src/channels/slack/slack-users.js";

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

describe("UserDirectory", () => {
  it("does not ask Slack again for a person whose lookup just failed, and does after a while", async () => {
    let now = 0;
    const { state, client: slack } = client();
    const users = new UserDirectory(slack, pino({ level: "silent" }), () => now);
    expect(await users.isGuest("U1")).toBe(false);
    expect(await users.user("U1", "ana.handle")).toEqual({ id: "U1", name: "ana.handle" });
    expect(state.calls).toBe(1);
    now += 31_000;
    state.failing = false;
    expect(await users.isGuest("U1")).toBe(true);
    expect(await users.user("U1")).toEqual({ id: "U1", name: "Ana" });
    expect(state.calls).toBe(2);
  });
});
