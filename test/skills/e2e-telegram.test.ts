/**
 * Skills end to end on Telegram (real grammY bot against the fake Telegram, real SessionManager
 * and engine factory, the fake OpenAI server as the puppet model): `/skills` lists them,
 * `/skill <name> [text]` runs one with the skill loaded, and a disable by an approver through
 * `/skills disable` brings the countermand on the next turn.
 */
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ALICE, ALICE_DM, BOB, BOB_DM } from "../channels/telegram/harness.js";
import { type Stack, startStack } from "../channels/telegram/stack.js";
import type { FakeOpenAI } from "../fakes/fake-openai.js";
import { call, PuppetModel } from "../subscriptions/e2e-support.js";
import { telegramSkills } from "./e2e-support.js";
import { skillMd, writeSkill } from "./support.js";

const BODY = "Triage: read the alert, find the owner, open an incident.";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

function lastUserText(openai: FakeOpenAI): string {
  const messages = (openai.requests.at(-1)?.messages ?? []) as { role: string; content: unknown }[];
  const user = messages.filter((m) => m.role === "user").at(-1);
  return typeof user?.content === "string" ? user.content : "";
}

async function says(s: Stack, chat: number, text: string): Promise<string> {
  return s.tg.waitFor(() => s.tg.state.botMessages(chat).find((m) => m.text.includes(text))?.text);
}

describe("Skills end to end on Telegram", () => {
  it("/skills lists, /skill runs with the skill loaded, an approver's disable brings the countermand", async () => {
    const s = await startStack({
      allowedUsers: [ALICE.id, BOB.id],
      handler: new PuppetModel().handler,
      extend: telegramSkills([`telegram:${BOB.id}`]),
    });
    stack = s;
    writeSkill(
      path.join(s.dataDir, "workspace", ".coworker", "skills"),
      "triage",
      skillMd("triage", "Triage an alert", BODY),
    );
    s.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/skills" });
    expect(await says(s, ALICE.id, "Skills (1 of 1 enabled)")).toContain(
      "triage — on · workspace — Triage an alert",
    );

    s.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/skill triage the disk alert" });
    await says(s, ALICE.id, 'You said: The person ran the skill "triage"');
    expect(lastUserText(s.openai)).toContain(BODY);
    expect(lastUserText(s.openai)).toContain("Request: the disk alert");

    s.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: call("load_skill", { name: "triage" }) });
    await says(s, ALICE.id, "Tool said");
    s.tg.sendUserMessage({ chat: BOB_DM, from: BOB, text: "/skills disable triage" });
    await says(s, BOB.id, 'The skill "triage" is now disabled');
    s.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "anything else?" });
    await says(s, ALICE.id, "You said: anything else?");
    expect(lastUserText(s.openai)).toContain('The skill "triage" has been disabled — stop following');
  });
});
