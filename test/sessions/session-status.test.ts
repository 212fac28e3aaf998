/**
 * What `grants` and `status` show of an "Allow anyway": for whom and until when it holds, and
 * nothing of one that can no longer be used (expired, or stored before those were recorded), the
 * numbers of the others staying the ones `grants revoke n` takes.
 */
import { describe, expect, it } from "vitest";
import { type Grant, GrantSet } from "../../src/engine/permissions/grants.js";
import { markdownToMrkdwn } from "../../src/channels/slack/slack-markdown.js";
import { markdownToTelegramHtml } from "../../src/channels/telegram/telegram-html.js";
import { describeGrant, describeGrants, describeStatus } from "../../src/sessions/session-status.js";
import { sessionRecord } from "./helpers/harness.js";

const bound: Grant = {
  kind: "once",
  tool: "write_note",
  args: '{"path":"a.md"}',
  requester: "slack:U0123",
  expiresAt: "2026-12-06T05:38:00.000Z",
  by: "Boss",
};
/** A grant stored now: its giver a person, whose name is whatever they typed. */
const personGiven: Grant = {
  kind: "tool",
  tool: "read_file",
  by: { platform: "slack", id: "U0MALLORY", name: "Boss" },
};
const unbound: Grant = { kind: "once", tool: "write_note", args: '{"path":"b.md"}' };
const always: Grant = { kind: "tool", tool: "read_file" };
/** Before `bound` expires. */
const NOW = new Date("2026-12-06T05:00:00.000Z");

describe("grants and status text", () => {
  it("says for whom and until when an Allow anyway holds", () => {
    expect(describeGrants([bound], NOW)).toBe(
      '1. allow once (over the reviewer) for slack:U0123, until 2026-12-06 05:38 UTC: write_note \\{\\"path\\"\\:\\"a\\.md\\"\\} (granted by Boss, id not recorded)',
    );
  });

  it("never leaves half an emoji where an Allow anyway's long arguments are cut", () => {
    // The cut at 119 falls between the emoji's two halves: the whole emoji is left off.
    const long: Grant = { ...bound, args: `${"a".repeat(118)}😀 and more` };
    expect(describeGrant(long)).toContain(`write_note ${"a".repeat(118)}… (granted by`);
  });

  it("leaves out an Allow anyway that names no one, keeping the others' numbers for revoke", () => {
    expect(describeGrants([unbound, always, unbound, bound], NOW)).toBe(
      [
        "2. always allow tool read_file",
        '4. allow once (over the reviewer) for slack:U0123, until 2026-12-06 05:38 UTC: write_note \\{\\"path\\"\\:\\"a\\.md\\"\\} (granted by Boss, id not recorded)',
      ].join("\n"),
    );
    expect(describeGrants([unbound], NOW)).toBe("No standing grants in this session.");
    const status = (grants: readonly Grant[]) =>
      describeStatus({
        record: { ...sessionRecord("t1"), grants },
        running: false,
        suspended: false,
        queued: 0,
        extras: [],
        now: NOW,
      });
    expect(status([unbound])).toContain("Grants: none");
    expect(status([unbound, always])).toContain("Grants:\n2. always allow tool read_file\nUsage:");
  });

  it("names a grant's giver with their user id, and says a grant stored with a name alone has none", () => {
    // Both are read back as stored: a grant written before givers were people still loads.
    const stored = new GrantSet([personGiven, bound]).list();
    expect(describeGrants(stored, NOW)).toBe(
      [
        "1. always allow tool read_file (granted by Boss (id U0MALLORY))",
        '2. allow once (over the reviewer) for slack:U0123, until 2026-12-06 05:38 UTC: write_note \\{\\"path\\"\\:\\"a\\.md\\"\\} (granted by Boss, id not recorded)',
      ].join("\n"),
    );
  });

  it("leaves out an Allow anyway once it has expired, keeping the others' numbers", () => {
    const expired = new Date("2026-12-06T05:38:00.000Z");
    expect(describeGrants([always, bound], expired)).toBe("1. always allow tool read_file");
    expect(describeGrants([bound], expired)).toBe("No standing grants in this session.");
    expect(
      describeStatus({
        record: { ...sessionRecord("t1"), grants: [bound] },
        running: false,
        suspended: false,
        queued: 0,
        extras: [],
        now: expired,
      }),
    ).toContain("Grants: none");
  });
});

describe("who the status names", () => {
  const hostile = "[Approve](https://evil.example) <!channel> <https://evil.example|Boss>";
  const status = describeStatus({
    record: {
      ...sessionRecord("t1"),
      mode: "auto",
      startedBy: { id: "U0MALLORY", name: hostile },
      modeSetBy: { id: "U0MALLORY", name: "Boss" },
      grants: [{ kind: "tool", tool: "read_file", by: hostile }],
    },
    running: false,
    suspended: false,
    queued: 0,
    extras: [],
    now: NOW,
  });

  it("names the starter and the mode's setter with their user ids: a name like Boss cannot pose as someone", () => {
    expect(status).toContain("Mode: auto (set by Boss (id U0MALLORY))");
    expect(status).toMatch(/^Started by: .* \(id U0MALLORY\)$/m);
  });

  it("shows a name written as a link or mention as text, on Slack and on Telegram", () => {
    const slack = markdownToMrkdwn(status);
    expect(slack).toContain(
      "Started by: [Approve](https://evil.example) &lt;!channel&gt; &lt;https://evil.example|Boss&gt; (id U0MALLORY)",
    );
    expect(slack).toContain("(granted by [Approve](https://evil.example) &lt;!channel&gt;");
    expect(slack).not.toMatch(/<(https|!channel)/);
    const html = markdownToTelegramHtml(status);
    expect(html).not.toContain("<a ");
    expect(html).toContain("Started by: [Approve](https://evil.example) &lt;!channel&gt;");
  });
});
