/**
 * Edits and deletions reported by a channel (SubscriptionService.observeChange): the buffered copy
 * and the wake-up batches still waiting follow them, and an edit never wakes anyone.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ALICE, type Harness, message } from "./support.js";
import { closeOnFakeTime, openOnFakeTime, settle } from "./support-fake-time.js";

const DEBOUNCE = 8_000;

/** The change of `id` in #deploys. */
const deleted = (id: string) =>
  ({ platform: "slack", workspace: "T1", channel: "CDEPLOY", id, change: "deleted" }) as const;
const edited = (id: string, text: string) =>
  ({
    platform: "slack",
    workspace: "T1",
    channel: "CDEPLOY",
    id,
    change: "edited",
    text,
    mentionsBot: false,
  }) as const;

describe("SubscriptionService.observeChange (edits and deletions on the platform)", () => {
  let h: Harness;

  beforeEach(async () => {
    h = await openOnFakeTime();
  });
  afterEach(() => closeOnFakeTime(h));

  it("a deleted message is gone from catch_up and from the wake-up still waiting for it", async () => {
    await h.service.subscribe(ALICE, { channel: "#deploys" });
    const secret = message("oops: AWS_SECRET=abc123");
    await h.service.observe(message("deploy 41 started"));
    await h.service.observe(secret);
    expect(await h.service.observeChange(deleted(secret.id))).toEqual({ status: "deleted" });
    await settle(h, DEBOUNCE);
    expect(h.sink.wakes.flatMap((w) => w.batch.entries.map((e) => e.text))).toEqual(["deploy 41 started"]);
    const caught = await h.service.catchUp(ALICE, { channel: "#deploys", since: "2026-01-01" });
    expect(caught.message).toContain("deploy 41 started");
    expect(caught.message).not.toContain("abc123");
  });

  it("a batch left with only deleted messages wakes nobody", async () => {
    await h.service.subscribe(ALICE, { channel: "#deploys" });
    const only = message("token ghp_XYZ");
    await h.service.observe(only);
    await h.service.observeChange(deleted(only.id));
    await settle(h, DEBOUNCE * 2);
    expect(h.sink.wakes).toHaveLength(0);
  });

  it("an edit replaces the text (also in the waiting wake-up) and never wakes by itself", async () => {
    await h.service.subscribe(ALICE, {
      channel: "#deploys",
      trigger: { type: "keywords", keywords: ["failed"] },
    });
    const quiet = message("deploy 41 ok");
    const loud = message("deploy 42 faild");
    const failing = message("deploy 43 failed");
    for (const m of [quiet, loud, failing]) await h.service.observe(m);
    // The old text did not match the trigger: its edit to a matching text does not wake.
    expect(await h.service.observeChange(edited(loud.id, "deploy 42 failed"))).toEqual({ status: "edited" });
    expect(await h.service.observeChange(edited(failing.id, "deploy 43 failed on web-3"))).toEqual({
      status: "edited",
    });
    await settle(h, DEBOUNCE);
    expect(h.sink.wakes.flatMap((w) => w.batch.entries.map((e) => e.text))).toEqual([
      "deploy 43 failed on web-3",
    ]);
    const caught = await h.service.catchUp(ALICE, { channel: "#deploys", since: "2026-01-01" });
    expect(caught.message).toContain("deploy 42 failed");
    expect(caught.message).not.toContain("faild");
    // An edit of a message already delivered wakes nobody either.
    await h.service.observeChange(edited(quiet.id, "deploy 41 failed"));
    await settle(h, DEBOUNCE * 2);
    expect(h.sink.wakes).toHaveLength(1);
  });

  it("a change of a message never buffered, or an unreadable one, changes nothing", async () => {
    await h.service.subscribe(ALICE, { channel: "#deploys" });
    expect(await h.service.observeChange(deleted("1.000000"))).toEqual({ status: "absent" });
    expect(await h.service.observeChange({ ...deleted("x"), id: "" })).toMatchObject({ status: "invalid" });
  });
});
