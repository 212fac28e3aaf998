/**
 * unsubscribe_channel's approval card and the removal agree: the card names exactly the
 * subscription the call then ends (SubscriptionService.toRemove is the one choice both use), and
 * when the call ends none the card shows only the channel asked for — for creators, for another
 * person in a shared thread, and for a configured approver, here by name or from anywhere by id.
 */
import { afterEach, describe, expect, it } from "vitest";
import { markdownToMrkdwn } from "../../src/channels/slack/slack-markdown.js";
import { markdownToTelegramHtml } from "../../src/channels/telegram/telegram-html.js";
import { markdownLiteral } from "../../src/core/person-text.js";
import { createRequest } from "../../src/core/request.js";
import type { AnyTool, ToolContext } from "../../src/core/tool.js";
import type { ThreadTarget } from "../../src/core/thread-target.js";
import { createSubscriptionTools } from "../../src/subscriptions/subscription-tools.js";
import { ALICE, type Harness, HOME, openHarness } from "./support.js";

const BOB = { id: "UBOB", name: "Bob" };
const BOB_DM_SESSION = "slack:T1:D1BOB:-";
const BOB_DM: ThreadTarget = { ...HOME, channel: "D1BOB", thread: undefined };

/** A person's own turn in a conversation. */
function turn(person: { id: string; name: string }, target: ThreadTarget, sessionId: string): ToolContext {
  return {
    request: createRequest({
      prompt: "stop watching",
      messages: [],
      sessionId,
      platform: "slack",
      model: "m",
      workspace: { root: "/tmp", context: "" },
      requester: { userId: person.id, displayName: person.name },
      mode: "interactive",
      metadata: { target },
    }),
    callId: "call_1",
    signal: new AbortController().signal,
    emitOutput: () => undefined,
    facts: { downloadedFiles: new Set() },
  };
}

const bobHere = () => turn(BOB, HOME, ALICE.sessionId);
const bobInDm = () => turn(BOB, BOB_DM, BOB_DM_SESSION);

describe("unsubscribe_channel's card and the removal", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  async function open(approvers?: readonly string[]): Promise<{ harness: Harness; unsubscribe: AnyTool }> {
    const harness = await openHarness(approvers ? { approvers } : {});
    h = harness;
    const unsubscribe = createSubscriptionTools(harness.service).find(
      (t) => t.name === "unsubscribe_channel",
    )!;
    return { harness, unsubscribe };
  }

  /** Alice's #deploys in the shared thread and Bob's own #deploys in his DM; their ids. */
  async function aliceHereAndBobInDm(harness: Harness): Promise<{ alice: string; bob: string }> {
    await harness.service.subscribe(ALICE, { channel: "#deploys", instructions: "Alice's plan" });
    await harness.service.subscribe(
      { sessionId: BOB_DM_SESSION, target: BOB_DM, requester: BOB },
      { channel: "#deploys", instructions: "Bob's plan" },
    );
    const [alice] = await harness.service.listForPerson({ platform: "slack", userId: "UALICE" });
    const [bob] = await harness.service.listForPerson({ platform: "slack", userId: "UBOB" });
    return { alice: alice!.id, bob: bob!.id };
  }

  /** Every subscription's id, of both people. */
  async function allIds(harness: Harness): Promise<readonly string[]> {
    const of = (userId: string) => harness.service.listForPerson({ platform: "slack", userId });
    return [...(await of("UALICE")), ...(await of("UBOB"))].map((s) => s.id);
  }

  /** The card's summary, then the call's outcome and the ids it ended; the card must name exactly those. */
  async function cardThenRemove(
    harness: Harness,
    unsubscribe: AnyTool,
    channel: string,
    ctx: ToolContext,
  ): Promise<{ summary: string; ok: boolean; ended: readonly string[] }> {
    const args = unsubscribe.inputSchema.parse({ channel });
    const { summary } = await unsubscribe.preview!(args, { request: ctx.request } as never);
    const before = await allIds(harness);
    const outcome = await unsubscribe.execute(args, ctx);
    const after = await allIds(harness);
    const ended = before.filter((id) => !after.includes(id));
    if (ended.length === 1) expect(summary).toContain(`[${ended[0]}]`);
    else expect(summary).toBe(`Stop watching ${markdownLiteral(channel)}`);
    for (const id of before) if (!ended.includes(id) && id !== channel) expect(summary).not.toContain(id);
    return { summary, ok: outcome.ok, ended };
  }

  it("an approver in the shared thread: the card shows Alice's subscription here, which the call ends (not Bob's own elsewhere)", async () => {
    const { harness, unsubscribe } = await open(["slack:UBOB"]);
    const ids = await aliceHereAndBobInDm(harness);
    // Before toRemove the card looked only for Bob's own here and showed just "Stop watching #deploys".
    expect(await cardThenRemove(harness, unsubscribe, "#deploys", bobHere())).toEqual({
      summary: `Stop watching \\#deploys (slack, every message; instructions: "Alice\\'s plan") [${ids.alice}] (Alice (id UALICE)'s subscription); it no longer wakes this conversation`,
      ok: true,
      ended: [ids.alice],
    });
  });

  it("the card, whose summary is markdown, names the creator with their user id and a name written as a link as plain text", async () => {
    const { harness, unsubscribe } = await open(["slack:UBOB"]);
    const mallory = { ...ALICE, requester: { id: "UALICE", name: "[Boss](https://evil.example)" } };
    await harness.service.subscribe(mallory, { channel: "#deploys" });
    const [sub] = await harness.service.listFor(ALICE.sessionId);
    for (const [channel, ctx] of [
      ["#deploys", bobHere()],
      [sub!.id, bobInDm()],
    ] as const) {
      const args = unsubscribe.inputSchema.parse({ channel });
      const { summary } = await unsubscribe.preview!(args, { request: ctx.request } as never);
      expect(markdownToMrkdwn(summary)).toContain(
        `[${sub!.id}] ([Boss](https://evil.example) (id UALICE)'s subscription)`,
      );
      expect(markdownToMrkdwn(summary)).not.toContain("<https");
      expect(markdownToTelegramHtml(summary)).not.toContain("<a ");
    }
  });

  it("an approver elsewhere, by id: the card names the subscription the id ends, without its creator's instructions or where it wakes", async () => {
    const { harness, unsubscribe } = await open(["slack:UBOB"]);
    const ids = await aliceHereAndBobInDm(harness);
    expect(await cardThenRemove(harness, unsubscribe, ids.alice, bobInDm())).toEqual({
      summary: `Stop watching \\#deploys [${ids.alice}] (Alice (id UALICE)'s subscription)`,
      ok: true,
      ended: [ids.alice],
    });
    expect(await cardThenRemove(harness, unsubscribe, "#deploys", bobInDm())).toMatchObject({
      ok: true,
      ended: [ids.bob],
    });
  });

  it("not an approver: Alice's subscription here is refused and the card shows nothing of it, nor of Bob's own elsewhere", async () => {
    const { harness, unsubscribe } = await open();
    const ids = await aliceHereAndBobInDm(harness);
    for (const channel of ["#deploys", ids.alice])
      expect(await cardThenRemove(harness, unsubscribe, channel, bobHere())).toEqual({
        summary: `Stop watching ${markdownLiteral(channel)}`,
        ok: false,
        ended: [],
      });
    expect(await cardThenRemove(harness, unsubscribe, ids.alice, bobInDm())).toMatchObject({ ok: false });
    expect(await cardThenRemove(harness, unsubscribe, "#deploys", bobInDm())).toMatchObject({
      ok: true,
      ended: [ids.bob],
    });
  });

  it("toRemove answers as remove does: the subscription it ends, or the same refusal", async () => {
    const { harness } = await open();
    const ids = await aliceHereAndBobInDm(harness);
    const bobHereOwner = { sessionId: ALICE.sessionId, platform: "slack", userId: "UBOB" };
    const refused = await harness.service.toRemove(bobHereOwner, "#deploys");
    expect(refused).toMatchObject({ ok: false });
    expect(await harness.service.remove(bobHereOwner, "#deploys")).toEqual(refused);
    const aliceOwner = { sessionId: ALICE.sessionId, platform: "slack", userId: "UALICE" };
    expect(await harness.service.toRemove(aliceOwner, "#deploys")).toMatchObject({
      ok: true,
      subscription: { id: ids.alice },
    });
    expect(await allIds(harness)).toContain(ids.alice);
    expect(await harness.service.remove(aliceOwner, "#deploys")).toMatchObject({ ok: true });
    expect(await allIds(harness)).not.toContain(ids.alice);
  });
});
