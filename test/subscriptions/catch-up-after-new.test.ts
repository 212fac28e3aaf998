/**
 * catch_up's read positions follow the thread into its new session ("new"), for channels it reads
 * without subscribing too: the new session does not get the messages the old one already read
 * again. The move is safe to repeat (a process may finish it after another began it).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Caller } from "../../src/core/thread-target.js";
import { ALICE, type Harness, openHarness } from "./support.js";

describe("catch_up after the thread switched to a new session", () => {
  let h: Harness;
  const inNew: Caller = { ...ALICE, sessionId: "slack:T1:CHOME:1700000000.000100:new" };

  beforeEach(async () => {
    h = await openHarness();
  });
  afterEach(() => h.close());

  /** A message in #deploys' history (nothing is buffered for a channel nobody subscribed to). */
  const posted = (text: string, minutesAgo: number) =>
    h.directory.channels.get("CDEPLOY")!.history.push({
      id: `${1_700_000_000 - minutesAgo}.000100`,
      author: { id: "UBOB", name: "Bob", isBot: false },
      at: new Date(Date.now() - minutesAgo * 60_000).toISOString(),
      text,
    });

  it("continues where the old session read a channel it never subscribed to", async () => {
    posted("read in the old session", 2);
    expect((await h.service.catchUp(ALICE, { channel: "#deploys" })).message).toContain(
      "read in the old session",
    );
    posted("after the read", 1);
    await h.service.moveSession(ALICE.sessionId, inNew.sessionId);
    await h.service.moveSession(ALICE.sessionId, inNew.sessionId);
    const caught = (await h.service.catchUp(inNew, { channel: "#deploys" })).message;
    expect(caught).toContain("after the read");
    expect(caught).not.toContain("read in the old session");
  });
});
