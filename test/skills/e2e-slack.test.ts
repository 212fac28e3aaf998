/**
 * Skills end to end on Slack (real Bolt app against the fake Slack, real SessionManager and
 * engine factory, the fake OpenAI server as the puppet model): the catalog reaches the model and
 * the body does not; load_skill returns the body; save_skill asks even in auto mode, writes on
 * Approve and nothing on Deny; `/coworker skill` and a typed `skill <name> …` start a turn with
 * the skill loaded; a skill disabled mid-session by an approver gets the countermand next turn.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  ANA,
  BOSS,
  buttonId,
  type E2E,
  GENERAL,
  MENTION,
  messageWithButton,
  startE2E,
  thread,
  userTexts,
} from "../channels/slack/e2e-harness.js";
import { blockTexts } from "../channels/slack/support.js";
import type { PermissionMode } from "../../src/core/modes.js";
import { call, PuppetModel } from "../subscriptions/e2e-support.js";
import { slackSkills } from "./e2e-support.js";
import { skillMd, writeSkill } from "./support.js";

const BODY = "Step 1: open the deploy dashboard and compare the build id.";

let e2e: E2E;
afterEach(async () => e2e?.close());

async function start(mode: PermissionMode = "interactive"): Promise<E2E> {
  e2e = await startE2E(new PuppetModel().handler, {}, slackSkills([`slack:${BOSS}`], mode));
  writeSkill(
    path.join(e2e.dataDir, ".coworker", "skills"),
    "check-deploy",
    skillMd("check-deploy", "Check that a deploy went out", BODY),
  );
  return e2e;
}

function post(text: string, ts?: string): string {
  return e2e.fake.userPosts({
    user: ANA,
    channel: GENERAL,
    text: `${MENTION} ${text}`,
    ...(ts ? { threadTs: ts } : {}),
  }).ts;
}

/** Wait for a slash-command reply (posted to its response_url) containing `text`. */
function commandReply(text: string): Promise<unknown> {
  return e2e.fake.waitFor(
    () => e2e.fake.state.responses.find((r) => String(r.body.text).includes(text)),
    `a command reply with "${text}"`,
  );
}

function reply(ts: string, pattern: RegExp): Promise<string> {
  return e2e.fake.waitFor(
    () => thread(e2e.fake, GENERAL, ts).find((text) => pattern.test(text)),
    `a reply matching ${pattern}`,
  );
}

/** The last user message of the newest model request. */
function lastUserText(): string {
  return userTexts(e2e.openai, e2e.openai.requests.length - 1).at(-1) ?? "";
}

describe("Skills end to end on Slack", () => {
  it("the catalog is in the model request and the body is not; load_skill returns the body", async () => {
    await start();
    const ts = post("hello there");
    await reply(ts, /You said: hello there/);
    const first = lastUserText();
    expect(first).toContain("- check-deploy: Check that a deploy went out");
    expect(first).not.toContain(BODY);

    post(call("load_skill", { name: "check-deploy" }), ts);
    expect(await reply(ts, /Tool said/)).toContain(BODY);
  });

  it("save_skill asks even in auto mode, decided in a channel by an approver: Deny writes nothing, Approve writes the skill", async () => {
    await start("auto");
    const dir = path.join(e2e.dataDir, ".coworker", "skills", "weekly-report");
    const args = {
      name: "weekly-report",
      description: "Write the weekly report",
      instructions: "Gather, then write.",
    };
    const ts = post(call("save_skill", args));
    let card = await e2e.fake.waitFor(() => messageWithButton(e2e.fake, GENERAL, ts, "Deny"), "a card");
    expect(blockTexts(card.blocks).join("\n")).toContain("name: weekly-report");
    e2e.fake.pressButton({
      user: BOSS,
      channel: GENERAL,
      messageTs: card.ts,
      actionId: buttonId(card, "Deny")!,
    });
    await reply(ts, /Tool said/);
    expect(existsSync(dir)).toBe(false);

    post(call("save_skill", args), ts);
    card = await e2e.fake.waitFor(() => messageWithButton(e2e.fake, GENERAL, ts, "Approve"), "a second card");
    // A skill steers every later session: in a channel, the person who asked may not approve it.
    e2e.fake.pressButton({
      user: ANA,
      channel: GENERAL,
      messageTs: card.ts,
      actionId: buttonId(card, "Approve")!,
    });
    await e2e.fake.waitFor(
      () =>
        e2e.fake.state.ephemerals.find((e) => e.user === ANA && /steers every later session/.test(e.text)),
      "the refusal",
    );
    expect(existsSync(dir)).toBe(false);
    e2e.fake.pressButton({
      user: BOSS,
      channel: GENERAL,
      messageTs: card.ts,
      actionId: buttonId(card, "Approve")!,
    });
    await reply(ts, /Tool said: Saved the skill/);
    expect(readFileSync(path.join(dir, "SKILL.md"), "utf8")).toContain("Gather, then write.");
  });

  it("/coworker skill <name> and a typed skill <name> start a turn with the skill loaded", async () => {
    await start();
    const ts = post("hi");
    await reply(ts, /You said: hi/);
    e2e.fake.slashCommand({ user: ANA, channel: GENERAL, text: "skill check-deploy production" });
    await commandReply('Running the skill "check-deploy"');
    await reply(ts, /You said: The person ran the skill "check-deploy"/);
    expect(lastUserText()).toContain(BODY);
    expect(lastUserText()).toContain("Request: production");

    post("skill check-deploy staging", ts);
    await e2e.fake.waitFor(() => lastUserText().includes("Request: staging"), "the typed run");
    expect(lastUserText()).toContain(BODY);
  });

  it("a skill disabled mid-session by an approver gets the countermand on the next turn", async () => {
    await start();
    const ts = post(call("load_skill", { name: "check-deploy" }));
    await reply(ts, /Tool said/);
    e2e.fake.slashCommand({ user: ANA, channel: GENERAL, text: "skills disable check-deploy" });
    await commandReply("Only a configured approver");
    e2e.fake.slashCommand({ user: BOSS, channel: GENERAL, text: "skills disable check-deploy" });
    await commandReply("is now disabled");
    post("what next?", ts);
    await reply(ts, /You said: what next\?/);
    const countermand =
      'The skill "check-deploy" has been disabled — stop following its instructions from here on.';
    expect(lastUserText()).toContain(countermand);
    expect(lastUserText()).not.toContain("- check-deploy:");

    e2e.fake.slashCommand({ user: BOSS, channel: GENERAL, text: "skills enable check-deploy" });
    await commandReply("is now enabled");
    post("and now?", ts);
    await reply(ts, /You said: and now\?/);
    expect(lastUserText()).not.toContain(countermand);
  });
});
