/**
 * Subscriptions stored under a channel id the platform has since replaced (canonical-channels.ts):
 * when the directory registers, each is moved to the id the directory says the channel goes by
 * now — in the store, so a restart keeps it — and then wakes for the channel's messages; one whose
 * session already watches that id, or that would watch its own conversation, is closed instead;
 * a directory that cannot say leaves the subscription as it was.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Caller } from "../../src/core/thread-target.js";
import { ALICE, type Harness, message } from "./support.js";
import { closeOnFakeTime, openOnFakeTime } from "./support-fake-time.js";

/** Alice in #home itself (not in a thread of it). */
const IN_HOME: Caller = {
  ...ALICE,
  sessionId: "slack:T1:CHOME",
  target: { platform: "slack", workspace: "T1", channel: "CHOME" },
};

/** #deploys after its id changed (Telegram: the group's supergroup, under the id its session keeps). */
const NEW_ID = "CDEPLOYNEW";

describe("subscriptions under a channel's former id", () => {
  let h: Harness;

  beforeEach(async () => {
    h = await openOnFakeTime();
    h.directory.add(NEW_ID, "deploys-now", ["UALICE", "UBOB"]);
  });

  afterEach(() => closeOnFakeTime(h));

  it("are moved to the current id when the directory registers, wake for its messages, and stay moved after a restart", async () => {
    await h.service.subscribe(ALICE, { channel: "#deploys" });
    h.directory.renamed.set("CDEPLOY", NEW_ID);
    expect(await h.service.observe(message("deploy 7 FAILED", { channel: NEW_ID }))).toEqual({
      status: "ignored",
    });

    await h.service.registerDirectory(h.directory);
    expect(await h.service.observe(message("deploy 8 FAILED", { channel: NEW_ID }))).toEqual({
      status: "buffered",
      matched: 1,
    });
    expect((await h.service.listFor(ALICE.sessionId)).map((s) => s.channelRef.channel)).toEqual([NEW_ID]);

    // Stored so: after a restart the directory no longer needs to say it.
    h.directory.renamed.clear();
    await h.restart();
    expect((await h.service.listFor(ALICE.sessionId)).map((s) => s.channelRef.channel)).toEqual([NEW_ID]);
    expect(await h.service.observe(message("deploy 9 FAILED", { channel: NEW_ID }))).toMatchObject({
      matched: 1,
    });
    expect(h.errors).toEqual([]);
  });

  it("one whose session already watches the current id, or that would watch its own conversation, is closed", async () => {
    await h.service.subscribe(ALICE, { channel: "#deploys" });
    await h.service.subscribe(ALICE, { channel: NEW_ID });
    await h.service.subscribe(IN_HOME, { channel: "#deploys" });
    h.directory.renamed.set("CDEPLOY", NEW_ID);
    await h.service.registerDirectory(h.directory);
    expect((await h.service.listFor(ALICE.sessionId)).map((s) => s.channelRef.channel)).toEqual([NEW_ID]);
    expect((await h.service.listFor(IN_HOME.sessionId)).map((s) => s.channelRef.channel)).toEqual([NEW_ID]);

    // #deploys now goes by the id of #home, whose own conversation watches it.
    h.directory.renamed.set(NEW_ID, "CHOME");
    await h.service.registerDirectory(h.directory);
    expect(await h.service.listFor(IN_HOME.sessionId)).toEqual([]);
    expect((await h.service.listFor(ALICE.sessionId)).map((s) => s.channelRef.channel)).toEqual(["CHOME"]);
    expect(h.errors).toEqual([]);
  });

  it("a directory that cannot say leaves the subscription under its id, and says why", async () => {
    await h.service.subscribe(ALICE, { channel: "#deploys" });
    h.directory.canonicalChannel = async () => {
      throw new Error("the platform is down");
    };
    await h.service.registerDirectory(h.directory);
    expect((await h.service.listFor(ALICE.sessionId)).map((s) => s.channelRef.channel)).toEqual(["CDEPLOY"]);
    expect(h.errors.map((e) => `${e.context}: ${String(e.error)}`)).toEqual([
      "finding the current id of slack channel CDEPLOY: Error: the platform is down",
    ]);
  });
});
