import { describe, expect, it } from "vitest";
import { postingAccess } from "../../../src/channels/shared/posting-access.js";
import type { Caller } from "../../../src/core/thread-target.js";
import type { ResolvedChannel } from "../../../src/subscriptions/platform-directory.js";
import { FakeDirectory } from "../../subscriptions/support.js";

const stranger: Caller = {
  sessionId: "s1",
  target: { platform: "slack", workspace: "T1", channel: "C1", thread: "1.0" },
  requester: { id: "USTRANGER", name: "Sam" },
};

function directoryWithExec(): FakeDirectory {
  const directory = new FakeDirectory();
  directory.add("C1", "general", ["USTRANGER", "UCEO"]);
  directory.add("G0EXEC", "exec", ["UCEO"]);
  return directory;
}

describe("postingAccess", () => {
  it("gives the channel when the requester is a member of it", async () => {
    const directory = directoryWithExec();
    const ceo = { ...stranger, requester: { id: "UCEO", name: "Cee" } };
    expect(await postingAccess(() => directory, ceo, "#exec")).toEqual({
      ok: true,
      ref: { platform: "slack", workspace: "T1", channel: "G0EXEC", name: "#exec" },
    });
    expect(directory.calls).toEqual(["resolve #exec", "isMember G0EXEC UCEO"]);
  });

  it("asks the directory's posting test instead of membership when it has one", async () => {
    const directory = Object.assign(directoryWithExec(), {
      mayPost: async (channel: ResolvedChannel, userId: string) =>
        channel.channel === "C1" && userId === "UCEO",
    });
    const ceo = { ...stranger, requester: { id: "UCEO", name: "Cee" } };
    expect(await postingAccess(() => directory, ceo, "#general")).toMatchObject({ ok: true });
    expect(await postingAccess(() => directory, ceo, "#exec")).toMatchObject({
      ok: false,
      error: expect.stringContaining("Nothing was sent to #exec"),
    });
    expect(directory.calls).toEqual(["resolve #general", "resolve #exec"]);
  });

  it("refuses in the same words whether the channel is not the requester's, unknown, or unchecked", async () => {
    const directory = directoryWithExec();
    const words = (channel: string) =>
      `Nothing was sent to ${channel}: besides this conversation, I post only to channels that Sam is a member of and I am in, and I could not confirm that ${channel} is one. Check its name or id, or ask Sam to join it first.`;
    const notMember = await postingAccess(() => directory, stranger, "#exec");
    expect(notMember).toEqual({
      ok: false,
      error: words("#exec"),
      reason: expect.stringContaining("not a member"),
    });
    const unknown = await postingAccess(() => directory, stranger, "#nope");
    expect(unknown).toEqual({ ok: false, error: words("#nope"), reason: "no channel #nope" });
    directory.isMember = async () => {
      throw new Error("ratelimited");
    };
    const unchecked = await postingAccess(() => directory, stranger, "#exec");
    expect(unchecked).toEqual({
      ok: false,
      error: words("#exec"),
      reason: expect.stringContaining("ratelimited"),
    });
    const notConnected = await postingAccess(
      () => {
        throw new Error("Slack is not connected yet");
      },
      stranger,
      "#exec",
    );
    expect(notConnected).toEqual({ ok: false, error: words("#exec"), reason: "Slack is not connected yet" });
  });
});
