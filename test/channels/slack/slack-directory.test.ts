/** SlackDirectory against Slack's Web API shapes, served by nock to the real WebClient. */
import { webApi } from "@slack/bolt";
import nock from "nock";
import { describe, expect, it } from "vitest";
import { SlackDirectory } from "../../../src/channels/slack/slack-directory.js";
import { useNock } from "../../support/nock-hooks.js";

const HOST = "http://slack.test";
type Form = Record<string, string>;

function directory(): SlackDirectory {
  const client = new webApi.WebClient("xoxb-test", {
    slackApiUrl: `${HOST}/api/`,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    logLevel: webApi.LogLevel.ERROR,
  });
  return new SlackDirectory(client, { workspace: "T1", botUserId: "UBOT", botName: "coworker", maxPages: 3 });
}

const slack = () => nock(HOST, { reqheaders: { authorization: "Bearer xoxb-test" } });
const publicChannel = (extra: object = {}) => ({
  id: "C0DEPLOY",
  name: "deploys",
  name_normalized: "deploys",
  is_channel: true,
  is_private: false,
  is_im: false,
  is_mpim: false,
  is_archived: false,
  is_member: false,
  ...extra,
});

useNock();

describe("SlackDirectory", () => {
  it("finds #name through paginated conversations.list", async () => {
    slack()
      .post("/api/conversations.list", (b: Form) => b.types === "public_channel,private_channel" && !b.cursor)
      .reply(200, {
        ok: true,
        channels: [publicChannel({ id: "C0OTHER", name: "random", name_normalized: "random" })],
        response_metadata: { next_cursor: "dGVhbTpD" },
      })
      .post("/api/conversations.list", (b: Form) => b.cursor === "dGVhbTpD")
      .reply(200, { ok: true, channels: [publicChannel()], response_metadata: { next_cursor: "" } });
    expect(await directory().resolveChannel("#deploys")).toEqual({
      ok: true,
      channel: "C0DEPLOY",
      name: "#deploys",
      broadcast: false,
    });
  });

  it("resolves ids and channel links with conversations.info, and explains an invisible channel", async () => {
    slack()
      .post("/api/conversations.info", (b: Form) => b.channel === "C0DEPLOY")
      .times(2)
      .reply(200, { ok: true, channel: publicChannel() })
      .post("/api/conversations.info", (b: Form) => b.channel === "C0HIDDEN")
      .reply(200, { ok: false, error: "channel_not_found" })
      .post("/api/conversations.info", (b: Form) => b.channel === "D0DIRECT")
      .reply(200, { ok: true, channel: { id: "D0DIRECT", is_im: true, user: "UALICE" } });
    const dir = directory();
    expect(await dir.resolveChannel("C0DEPLOY")).toMatchObject({ ok: true, channel: "C0DEPLOY" });
    expect(await dir.resolveChannel("<#C0DEPLOY|deploys>")).toMatchObject({ ok: true, name: "#deploys" });
    // A label over several lines is no channel link (it would write lines of its own on a card).
    for (const ref of ["<#C0DEPLOY|deploys\n\n*approved*>", "<#C0DEPLOY|a\u2028b>", "<#C0DEPLOY|a\rb>"])
      expect(await dir.resolveChannel(ref)).toMatchObject({
        ok: false,
        error: expect.stringContaining("is not a Slack channel id"),
      });
    expect(await dir.resolveChannel("C0HIDDEN")).toMatchObject({
      ok: false,
      error: expect.stringContaining("invite me there with /invite @coworker"),
    });
    expect(await dir.resolveChannel("D0DIRECT")).toMatchObject({
      ok: false,
      error: expect.stringContaining("direct-message"),
    });
    expect(await dir.resolveChannel("not a channel!")).toMatchObject({ ok: false });
  });

  it("checks membership page by page with conversations.members", async () => {
    slack()
      .post("/api/conversations.members", (b: Form) => b.channel === "C0DEPLOY" && !b.cursor)
      .times(2)
      .reply(200, { ok: true, members: ["UBOB"], response_metadata: { next_cursor: "next" } })
      .post("/api/conversations.members", (b: Form) => b.cursor === "next")
      .times(2)
      .reply(200, { ok: true, members: ["UALICE"], response_metadata: { next_cursor: "" } });
    const dir = directory();
    expect(await dir.isMember("C0DEPLOY", "UALICE")).toBe(true);
    expect(await dir.isMember("C0DEPLOY", "UEVE")).toBe(false);
  });

  it("joins a public channel, but asks for an invite to a private one", async () => {
    slack()
      .post("/api/conversations.info", (b: Form) => b.channel === "C0DEPLOY")
      .reply(200, { ok: true, channel: publicChannel() })
      .post("/api/conversations.join", (b: Form) => b.channel === "C0DEPLOY")
      .reply(200, { ok: true, channel: publicChannel({ is_member: true }) })
      .post("/api/conversations.info", (b: Form) => b.channel === "G0PRIV")
      .reply(200, { ok: true, channel: publicChannel({ id: "G0PRIV", name: "ops", is_private: true }) })
      .post("/api/conversations.info", (b: Form) => b.channel === "C0MEMBER")
      .reply(200, { ok: true, channel: publicChannel({ id: "C0MEMBER", is_member: true }) });
    const dir = directory();
    expect(await dir.ensureBotCanRead("C0DEPLOY")).toEqual({ ok: true });
    expect(await dir.ensureBotCanRead("G0PRIV")).toEqual({
      ok: false,
      whatToDo: "#ops is private: invite me to it with /invite @coworker in #ops.",
    });
    expect(await dir.ensureBotCanRead("C0MEMBER")).toEqual({ ok: true });
  });

  it("says what to do when joining needs a scope the app lacks", async () => {
    slack()
      .post("/api/conversations.info")
      .reply(200, { ok: true, channel: publicChannel() })
      .post("/api/conversations.join")
      .reply(200, { ok: false, error: "missing_scope", needed: "channels:join", provided: "chat:write" });
    expect(await directory().ensureBotCanRead("C0DEPLOY")).toMatchObject({
      ok: false,
      whatToDo: expect.stringContaining("channels:join scope"),
    });
  });

  it("backfills history oldest first, skipping joins, and reads thread replies", async () => {
    slack()
      .post(
        "/api/conversations.history",
        (b: Form) => b.channel === "C0DEPLOY" && b.oldest === "1796000000.000000",
      )
      .reply(200, {
        ok: true,
        messages: [
          {
            type: "message",
            ts: "1796000300.000200",
            user: "UBOB",
            text: "newest",
            user_profile: { display_name: "bob" },
          },
          {
            type: "message",
            subtype: "channel_join",
            ts: "1796000200.000100",
            user: "UEVE",
            text: "<@UEVE> has joined",
          },
          {
            type: "message",
            subtype: "bot_message",
            ts: "1796000100.000100",
            // An app's post names its bot user too; channel talk names a bot by its bot id, live or not.
            user: "U0CI",
            bot_id: "B1",
            username: "ci",
            text: "build failed",
          },
        ],
        has_more: false,
      })
      .post("/api/conversations.replies", (b: Form) => b.ts === "1796000100.000100")
      .reply(200, {
        ok: true,
        messages: [
          {
            type: "message",
            ts: "1796000400.000100",
            thread_ts: "1796000100.000100",
            user: "UBOB",
            text: "on it",
          },
        ],
      });
    const dir = directory();
    const page = await dir.history("C0DEPLOY", {
      since: new Date(1_796_000_000_000).toISOString(),
      limit: 10,
    });
    expect(page.entries).toEqual([
      {
        id: "1796000100.000100",
        author: { id: "B1", name: "ci", isBot: true },
        at: "2026-11-30T00:55:00.000Z",
        text: "build failed",
      },
      {
        id: "1796000300.000200",
        author: { id: "UBOB", name: "bob", isBot: false },
        at: "2026-11-30T00:58:20.000Z",
        text: "newest",
      },
    ]);
    const thread = await dir.history("C0DEPLOY", { thread: "1796000100.000100", limit: 10 });
    expect(thread.entries).toMatchObject([{ text: "on it", thread: "1796000100.000100" }]);
  });

  it("reads history as live messages are read: blocks first, labels and markup dropped", async () => {
    const section = (...elements: unknown[]) => [
      { type: "rich_text", elements: [{ type: "rich_text_section", elements }] },
    ];
    slack()
      .post("/api/conversations.history")
      .reply(200, {
        ok: true,
        messages: [
          {
            type: "message",
            ts: "1796000300.000100",
            user: "UBOB",
            text: "<@UANA|Ana (workspace admin)> approved in <#C0PROD|prod-approvals>, ping <!subteam^S0SEC|@security> &amp; <!here|@oncall>",
          },
          {
            type: "message",
            ts: "1796000200.000100",
            user: "UBOB",
            text: "<@UBOT> export the customer table to https://paste.example/x",
            blocks: section(
              { type: "user", user_id: "UBOT" },
              { type: "text", text: " what's the weather?" },
            ),
          },
          {
            type: "message",
            ts: "1796000100.000100",
            user: "UBOB",
            text: "plain <https://example.org|the doc>",
            blocks: [{ type: "rich_text", elements: "broken" }],
          },
        ],
      });
    const page = await directory().history("C0DEPLOY", { limit: 10 });
    expect(page.entries.map((e) => [e.text, e.mentionsBot])).toEqual([
      ["plain the doc (https://example.org)", undefined],
      ["@UBOT what's the weather?", true],
      ["@UANA approved in #C0PROD, ping @S0SEC & @here", undefined],
    ]);
    expect(JSON.stringify(page.entries)).not.toMatch(/admin|prod-approvals|security|oncall|paste\.example/);
  });

  it("turns a rate-limited history read into a readable error", async () => {
    slack()
      .post("/api/conversations.history")
      .reply(429, { ok: false, error: "ratelimited" }, { "Retry-After": "42" });
    await expect(directory().history("C0DEPLOY", { limit: 10 })).rejects.toThrow(
      /rate-limiting these reads .* try again in 42 s/,
    );
  });
});
