/**
 * What a person or the model wrote — a subscription's instructions, keywords and channel label (a
 * Telegram chat title is whatever its owner typed), a task's text, a wake-up's note, a grant's
 * arguments and command — reads as plain text wherever people see it listed or quoted: `status`,
 * the `subscriptions` and `schedules` listings and their cards, the approval cards that quote them,
 * `grants`. None of it becomes a link or a mention on Slack or Telegram, nor formatting on Telegram. The model's own
 * tool replies keep it as written, so it can name a channel back.
 */
import { describe, expect, it } from "vitest";
import { markdownToMrkdwn } from "../../src/channels/slack/slack-markdown.js";
import { markdownToTelegramHtml } from "../../src/channels/telegram/telegram-html.js";
import type { Grant } from "../../src/engine/permissions/grants.js";
import type { ScheduledTask } from "../../src/schedules/scheduled-task.js";
import { cancellationSummary, creationPreview, taskLines } from "../../src/schedules/task-text.js";
import { describeGrants } from "../../src/sessions/session-status.js";
import type { Subscription } from "../../src/subscriptions/subscription.js";
import {
  asWritten,
  describeSubscription,
  personLines,
  statusLines,
} from "../../src/subscriptions/subscription-text.js";

const HOSTILE = "<!channel> [Approve](https://evil.example) *now* <b>x</b> `y` _z_";
const HOME = { platform: "telegram", workspace: "tg", channel: "42" };

const subscription: Subscription = {
  id: "sub_0123456789ab",
  sessionId: "telegram:tg:42:-",
  subscriberTarget: HOME,
  channelRef: { platform: "telegram", workspace: "tg", channel: "-100", name: "[Ops](https://evil.example)" },
  trigger: { type: "keywords", keywords: ["[k](https://evil.example)"] },
  instructions: HOSTILE,
  createdAt: "2026-11-30T10:00:00.000Z",
  createdBy: { id: "7", name: "Ana" },
};

const task: ScheduledTask = {
  id: "tsk_0123456789ab",
  kind: "task",
  sessionId: "telegram:tg:42:-",
  target: HOME,
  createdBy: { id: "7", name: "Ana" },
  prompt: HOSTILE,
  promptBy: "agent",
  schedule: { type: "once", at: "2026-12-01T09:00:00.000Z" },
  status: "active",
  createdAt: "2026-11-30T10:00:00.000Z",
  nextRunAt: "2026-12-01T09:00:00.000Z",
  runs: 0,
  failures: 0,
};
const wake: ScheduledTask = { ...task, id: "wak_0123456789ab", kind: "wake" };

/**
 * Markdown text as each platform shows it must hold no link or mention, and on Telegram no
 * formatting (Slack's mrkdwn has no way to show a `*` around a word as text).
 */
function expectPlainEverywhere(markdown: string): void {
  const mrkdwn = markdownToMrkdwn(markdown);
  expect(mrkdwn).not.toMatch(/<https?:|<!channel>|<@|<[^>]*\|/);
  const html = markdownToTelegramHtml(markdown);
  expect(html).not.toMatch(/<(a|b|i|code)[ >]/);
  expect(html).toContain("[Approve](https://evil.example)");
}

describe("written text in listings and cards", () => {
  it("a subscription's instructions, keywords and channel label in status and the subscriptions listing", () => {
    for (const text of [...statusLines([subscription]), ...personLines([subscription], undefined)])
      if (text.startsWith("- ")) {
        expectPlainEverywhere(text);
        expect(markdownToTelegramHtml(text)).toContain("[Ops](https://evil.example)");
      }
  });

  it("the model's own reply keeps them as written", () => {
    expect(describeSubscription(subscription, asWritten)).toContain(`instructions: "${HOSTILE}"`);
    expect(personLines([subscription], undefined, asWritten).join("\n")).toContain(
      "[Ops](https://evil.example) (telegram",
    );
  });

  it("a task's text and a wake-up's note in the schedules listing and status", () => {
    for (const line of taskLines([task, wake], undefined, "UTC").slice(1)) expectPlainEverywhere(line);
  });

  it("a task's text on the approval cards that create and cancel it", () => {
    const preview = creationPreview({
      prompt: HOSTILE,
      schedule: task.schedule,
      target: HOME,
      zone: "UTC",
      nowMs: Date.parse("2026-11-30T10:00:00.000Z"),
    });
    expectPlainEverywhere(preview.summary);
    expectPlainEverywhere(preview.detail.split("\n").find((line) => line.startsWith("Runs: ")) ?? "");
    expectPlainEverywhere(cancellationSummary(task, undefined));
  });

  it("a grant's arguments and a command that would end its code span in grants and status", () => {
    const once: Grant = {
      kind: "once",
      tool: "web_fetch",
      args: HOSTILE,
      requester: "telegram:7",
      expiresAt: "2026-12-06T05:38:00.000Z",
    };
    const command: Grant = { kind: "command", command: "ls` [Approve](https://evil.example) `" };
    const text = describeGrants([once, command], new Date("2026-12-06T05:00:00.000Z"));
    expectPlainEverywhere(text);
    expect(describeGrants([{ kind: "command", command: "npm test" }], new Date())).toBe(
      "1. always allow command `npm test`",
    );
  });
});
