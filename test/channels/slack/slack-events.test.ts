/**
 * plainText: Slack's message markup as the text the agent reads; decide: which edits of a
 * mention still count as a request.
 */
import { describe, expect, it } from "vitest";
import {
  decide,
  EDIT_WINDOW_MS,
  isBotPost,
  type MessageEvent,
} from "../../../src/channels/slack/slack-events.js";
import { plainText } from "../../../src/channels/slack/slack-shown-text.js";

const BOT = "U0BOT";

/** decide's options where `allowedBots` may talk to the bot (a thread needs no mention). */
function withAllowedBots(allowedBots: string[]) {
  return {
    bot: { userId: BOT, botId: "B0BOT", teamId: "T1" },
    allowedBots: new Set(allowedBots),
    requireMentionInThreads: false,
    nowMs: 1_700_000_000_000,
  };
}

describe("plainText", () => {
  it("drops the bot's mention and resolves people and channels (by id), specials, groups and links", () => {
    const text =
      "<@U0BOT> ask <@U1ANA|ana> and <@U2BEN> in <#C1GEN|general> or <#C2OPS>, <!here>, <!subteam^S1|@ops>: " +
      "see <https://example.org/a?b=1|the doc> and <mailto:x@example.org> &lt;not a tag&gt; &amp; co";
    expect(plainText(text, BOT)).toBe(
      "ask @U1ANA and @U2BEN in #C1GEN or #C2OPS, @here, @S1: " +
        "see the doc (https://example.org/a?b=1) and mailto:x@example.org <not a tag> & co",
    );
  });

  it("reads a group, a special or a date by what clients show, never the poster's label", () => {
    const text =
      "<!subteam^S0ADMINS|@security-approvers> <!subteam^S1> <!here|@oncall-leads> <!channel|everyone> " +
      "<!everyone> <!date^1796000000^{date_short}|tomorrow>";
    expect(plainText(text, BOT)).toBe("@S0ADMINS @S1 @here @channel @everyone 2026-11-30T00:53:20Z");
  });

  it.each(["<a:", "<#C1|", "<@U1|", "<https://a|", "<!here|", "<!subteam^S1|", "<!date^1^x|"])(
    "reads 200,000 characters of unclosed %s runs in one pass, leaving them as they are",
    (run) => {
      // Scanning each run to the end of the text made this quadratic: 40,000 characters of
      // "<a:" took over a second, 200,000 would take half a minute.
      const text = run.repeat(Math.ceil(200_000 / run.length));
      expect(plainText(text, BOT)).toBe(text);
    },
  );
});

describe("decide, for an edited mention", () => {
  const options = (nowMs: number) => ({
    bot: { userId: BOT, botId: "B0BOT", teamId: "T1" },
    allowedBots: new Set<string>(),
    requireMentionInThreads: true,
    nowMs,
  });
  const posted = 1_700_000_000;
  const mention: MessageEvent = {
    type: "app_mention",
    channel: "C1",
    user: "U1ANA",
    text: `<@${BOT}> deploy it`,
    ts: `${posted}.000100`,
  };
  const edited: MessageEvent = { ...mention, edited: { user: "U1ANA", ts: `${posted + 30}.000000` } };

  it("acts on an edit made soon after the message (a mention added to it), and on the original", () => {
    const soon = posted * 1_000 + 5 * 60_000;
    expect(decide(edited, options(soon))).toMatchObject({ act: true, kind: "channel" });
    expect(decide(mention, options(soon))).toMatchObject({ act: true });
  });

  it("ignores an edit of an older message: it may have been answered long ago", () => {
    const later = posted * 1_000 + EDIT_WINDOW_MS + 60_000;
    expect(decide(edited, options(later))).toEqual({ act: false, reason: "an edit of an older message" });
    expect(decide(mention, options(later))).toMatchObject({ act: true });
  });
});

describe("decide, for Slackbot's posts", () => {
  // Slackbot posts a reminder or workflow step as a user: no bot_id, no subtype.
  const reminder: MessageEvent = {
    type: "app_mention",
    channel: "C1",
    user: "USLACKBOT",
    text: `Reminder: <@${BOT}> delete the staging bucket.`,
    ts: "1700000000.000100",
  };

  it("ignores them like another bot's, unless USLACKBOT is an allowed bot", () => {
    expect(decide(reminder, withAllowedBots([]))).toEqual({ act: false, reason: "other bot" });
    expect(decide({ ...reminder, channel_type: "im" }, withAllowedBots([]))).toMatchObject({ act: false });
    expect(decide(reminder, withAllowedBots(["USLACKBOT"]))).toMatchObject({
      act: true,
      author: "USLACKBOT",
    });
  });

  it("counts them as a bot's channel talk", () => {
    expect(isBotPost({ user: "USLACKBOT" })).toBe(true);
    expect(isBotPost({ user: "U1ANA" })).toBe(false);
    expect(isBotPost({ bot_id: "B7" })).toBe(true);
  });
});

describe("decide, for an allowed bot's posts", () => {
  const post: MessageEvent = {
    type: "message",
    channel: "D9",
    channel_type: "im",
    subtype: "bot_message",
    bot_id: "B7",
    user: "U0DEPLOY",
    text: "deployed",
    ts: "1700000000.000100",
  };

  it("names the post by the id allowed_bots lists, which the access check then finds there", () => {
    expect(decide(post, withAllowedBots(["B7"]))).toMatchObject({ act: true, author: "B7" });
    expect(decide(post, withAllowedBots(["U0DEPLOY"]))).toMatchObject({ act: true, author: "U0DEPLOY" });
    expect(decide(post, withAllowedBots(["B8"]))).toEqual({ act: false, reason: "other bot" });
  });
});
