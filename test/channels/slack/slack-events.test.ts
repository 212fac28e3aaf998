/** plainText: Slack's message markup as the text the agent reads. */
import { describe, expect, it } from "vitest";
import { plainText } from "../../../src/channels/slack/slack-events.js";

const BOT = "U0BOT";

describe("plainText", () => {
  it("drops the bot's mention and resolves people, channels, specials, groups and links", () => {
    const text =
      "<@U0BOT> ask <@U1ANA|ana> and <@U2BEN> in <#C1GEN|general> or <#C2OPS>, <!here>, <!subteam^S1|@ops>: " +
      "see <https://example.org/a?b=1|the doc> and <mailto:x@example.org> &lt;not a tag&gt; &amp; co";
    expect(plainText(text, BOT)).toBe(
      "ask @ana and @U2BEN in #general or #C2OPS, @here, @ops: " +
        "see the doc (https://example.org/a?b=1) and mailto:x@example.org <not a tag> & co",
    );
  });

  it.each(["<a:", "<#C1|", "<@U1|", "<https://a|", "<!here|"])(
    "reads 200,000 characters of unclosed %s runs in one pass, leaving them as they are",
    (run) => {
      // Scanning each run to the end of the text made this quadratic: 40,000 characters of
      // "<a:" took over a second, 200,000 would take half a minute.
      const text = run.repeat(Math.ceil(200_000 / run.length));
      expect(plainText(text, BOT)).toBe(text);
    },
  );
});
