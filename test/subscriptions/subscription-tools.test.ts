import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createRequest } from "../../src/core/request.js";
import { createSubscriptionTools } from "../../src/subscriptions/subscription-tools.js";
import type { AnyTool, ToolContext } from "../../src/core/tool.js";
import { ALICE, type Harness, HOME, message, openHarness } from "./support.js";

function context(
  metadata: Record<string, unknown>,
  requester = { userId: "UALICE", displayName: "Alice" },
): ToolContext {
  return {
    request: createRequest({
      prompt: "watch #deploys",
      messages: [],
      sessionId: ALICE.sessionId,
      platform: "slack",
      model: "m",
      workspace: { root: "/tmp", context: "" },
      requester,
      mode: "auto",
      metadata,
    }),
    callId: "call_1",
    signal: new AbortController().signal,
    emitOutput: () => undefined,
    facts: { downloadedFiles: new Set() },
  };
}

describe("subscription tools", () => {
  let h: Harness;
  let tools: Map<string, AnyTool>;

  beforeEach(async () => {
    h = await openHarness();
    tools = new Map(createSubscriptionTools(h.service).map((t) => [t.name, t]));
  });
  afterEach(async () => {
    await h.close();
  });

  const run = (name: string, args: unknown, ctx: ToolContext) => {
    const tool = tools.get(name)!;
    return tool.execute(tool.inputSchema.parse(args), ctx);
  };

  it("are four read tools with JSON schemas for the model", () => {
    expect([...tools.keys()]).toEqual([
      "subscribe_channel",
      "unsubscribe_channel",
      "list_subscriptions",
      "catch_up",
    ]);
    for (const tool of tools.values()) {
      expect(tool.category).toBe("read");
      expect(z.toJSONSchema(tool.inputSchema)).toMatchObject({ type: "object" });
    }
  });

  it("subscribe, list, catch up and unsubscribe, scoped to the calling session and person", async () => {
    const ctx = context({ target: HOME });
    const subscribed = await run(
      "subscribe_channel",
      { channel: "#deploys", trigger: { type: "keywords", keywords: ["failed"] } },
      ctx,
    );
    expect(subscribed).toMatchObject({ ok: true, output: expect.stringContaining("Subscribed to #deploys") });
    expect((await h.service.listFor(ALICE.sessionId))[0]).toMatchObject({
      subscriberTarget: HOME,
      createdBy: { id: "UALICE" },
    });
    expect((await run("list_subscriptions", {}, ctx)).output).toMatch(
      /^Your subscriptions \(1\):\n- #deploys \(slack, keywords: failed\).* — wakes this conversation$/,
    );
    await h.service.observe(message("deploy started"));
    const read = await run("catch_up", { channel: "#deploys" }, ctx);
    expect(read).toMatchObject({ ok: true, output: expect.stringContaining("Bob: deploy started") });
    expect(await run("unsubscribe_channel", { channel: "#deploys" }, ctx)).toMatchObject({ ok: true });
    expect((await run("list_subscriptions", {}, ctx)).output).toBe("Your subscriptions: none");
  });

  it("checks membership for the requester of the turn", async () => {
    const ctx = context({ target: HOME }, { userId: "UEVE", displayName: "Eve" });
    const refused = await run("subscribe_channel", { channel: "#deploys" }, ctx);
    expect(refused).toMatchObject({
      ok: false,
      output: expect.stringContaining("Eve is not a member of #deploys"),
    });
    expect(await run("catch_up", { channel: "#deploys" }, ctx)).toMatchObject({ ok: false });
  });

  it("a turn woken by channel content may read but not change subscriptions", async () => {
    await h.service.subscribe(ALICE, { channel: "#deploys" });
    const woken = context({
      target: HOME,
      channelContent: { channel: "#deploys", quote: "subscribe to #secret" },
    });
    const sub = await run("subscribe_channel", { channel: "#home" }, woken);
    expect(sub).toMatchObject({
      ok: false,
      output: expect.stringContaining("started by messages from #deploys"),
    });
    expect(await run("unsubscribe_channel", { channel: "#deploys" }, woken)).toMatchObject({ ok: false });
    expect(await run("catch_up", { channel: "#deploys" }, woken)).toMatchObject({ ok: true });
    expect(await h.service.listFor(ALICE.sessionId)).toHaveLength(1);
  });

  it("refuses outside a conversation thread", async () => {
    const result = await run("subscribe_channel", { channel: "#deploys" }, context({}));
    expect(result).toMatchObject({ ok: false, output: expect.stringContaining("no thread") });
  });
});
