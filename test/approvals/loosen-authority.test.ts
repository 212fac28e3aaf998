/**
 * Who may loosen a session: in a DM its owner; in a shared thread (Slack channel, Telegram group
 * or topic) the configured approvers, or — with none configured — whoever started the session.
 * Table tests on the rule, then the `mode` command and "always" presses through the session layer.
 */
import { describe, expect, it } from "vitest";
import { markdownToMrkdwn } from "../../src/channels/slack/slack-markdown.js";
import { LOOSEN_REFUSAL, loosenersFor, loosenRefusal } from "../../src/approvals/authorisation.js";
import { loosensMode } from "../../src/core/modes.js";
import { isSharedThread, type ThreadTarget } from "../../src/core/thread-target.js";
import { ANA, BEN, BOSS, makeHarness, thread } from "../sessions/helpers/harness.js";

const slack = (channel: string): ThreadTarget => ({
  platform: "slack",
  workspace: "T1",
  channel,
  thread: "1.1",
});
const telegram = (channel: string, topic?: string): ThreadTarget => ({
  platform: "telegram",
  workspace: "tg",
  channel,
  ...(topic ? { thread: topic } : {}),
});
const NONE = { approvers: [] };
const GLOBAL = { approvers: ["slack:U_BOSS", "telegram:9"] };

describe("loosenersFor", () => {
  it.each([
    ["a Slack DM, approvers configured", slack("D1"), GLOBAL, ["slack:U_ANA"]],
    ["a Slack DM, none configured", slack("D1"), NONE, ["slack:U_ANA"]],
    ["a Slack channel thread, approvers configured", slack("C1"), GLOBAL, ["slack:U_BOSS"]],
    ["a Slack channel thread, none configured", slack("C1"), NONE, ["slack:U_ANA"]],
    ["a Telegram private chat", telegram("1001"), GLOBAL, ["telegram:U_ANA"]],
    ["a Telegram group, approvers configured", telegram("-100200"), GLOBAL, ["telegram:9"]],
    ["a Telegram topic, none configured", telegram("-100200", "7"), NONE, ["telegram:U_ANA"]],
    ["the console", { platform: "console", workspace: "", channel: "local" }, GLOBAL, ["console:U_ANA"]],
  ])("%s", (_name, target, config, expected) => {
    expect(loosenersFor(config, target as ThreadTarget, ANA.id)).toEqual(expected);
  });

  it("counts a channel's own approvers, and only those of the thread's platform", () => {
    const config = { approvers: ["telegram:9"], perChannel: { "slack:C1": ["slack:U_LEAD"] } };
    expect(loosenersFor(config, slack("C1"), ANA.id)).toEqual(["slack:U_LEAD"]);
    expect(loosenersFor(config, slack("C2"), ANA.id)).toEqual(["slack:U_ANA"]);
    expect([isSharedThread(slack("G1")), isSharedThread(telegram("5"))]).toEqual([true, false]);
  });

  it("refuses only loosening actions by people not on the list", () => {
    const item = {
      kind: "approval" as const,
      mayLoosen: ["slack:U_BOSS"],
      requester: { platform: "slack", userId: ANA.id, name: "Ana" },
    };
    for (const action of ["always_tool", "always_command", "always_domain", "readonly_session"]) {
      expect(loosenRefusal(item, action, "slack", ANA.id)).toBe(LOOSEN_REFUSAL);
      expect(loosenRefusal(item, action, "slack", BOSS.id)).toBeUndefined();
    }
    for (const action of ["once", "deny"])
      expect(loosenRefusal(item, action, "slack", ANA.id)).toBeUndefined();
    const legacy = { kind: "approval" as const, requester: item.requester };
    expect(loosenRefusal(legacy, "always_tool", "slack", ANA.id)).toBeUndefined();
    expect(loosenRefusal(legacy, "always_tool", "slack", BOSS.id)).toBe(LOOSEN_REFUSAL);
  });

  it("counts approving a plan, into either mode, as loosening: it leaves read-only plan mode", () => {
    const plan = {
      kind: "plan" as const,
      mayLoosen: ["slack:U_BOSS"],
      requester: { platform: "slack", userId: ANA.id, name: "Ana" },
    };
    for (const action of ["plan_interactive", "plan_auto"]) {
      expect(loosenRefusal(plan, action, "slack", ANA.id)).toMatch(
        /^Approving this plan takes the session out of read-only plan mode, so only a configured approver \(or, without one, whoever started the session\) can approve it\. Ana \(id U_ANA\) can still reject it/,
      );
      expect(loosenRefusal(plan, action, "slack", BOSS.id)).toBeUndefined();
    }
    expect(loosenRefusal(plan, "plan_reject", "slack", ANA.id)).toBeUndefined();
  });

  it("names a plan's requester with their user id: a name like Boss cannot pose as someone else", () => {
    const plan = {
      kind: "plan" as const,
      mayLoosen: ["slack:U_BOSS"],
      requester: { platform: "slack", userId: "U0MALLORY", name: "Boss" },
    };
    expect(loosenRefusal(plan, "plan_auto", "slack", "U0MALLORY")).toMatch(
      /\. Boss \(id U0MALLORY\) can still reject it or reply with changes\.$/,
    );
  });

  it("knows which mode switches loosen", () => {
    expect(loosensMode("interactive", "auto")).toBe(true);
    expect(loosensMode("plan", "interactive")).toBe(true);
    expect(loosensMode("auto", "interactive")).toBe(false);
    expect(loosensMode("interactive", "discuss")).toBe(false);
    expect(loosensMode("interactive", "reviewed")).toBe(true);
    expect(loosensMode("reviewed", "auto")).toBe(true);
    expect(loosensMode("reviewed", "interactive")).toBe(false);
  });
});

describe("the mode command", () => {
  it("in a shared thread with an approver: only the approver switches to auto; anyone may tighten", async () => {
    const h = await makeHarness();
    const target = thread("1.1", "C1");
    expect(await h.manager.command(target, ANA, "mode", ["auto"])).toMatch(/^Only the session's owner/);
    expect(await h.manager.command(target, BOSS, "mode", ["auto"])).toBe("Mode set to auto.");
    expect(await h.manager.command(target, BEN, "mode", ["plan"])).toBe("Mode set to plan.");
    const status = await h.manager.command(target, ANA, "status", []);
    expect(status).toMatch(/Mode: plan \(set by Ben \(id U_BEN\)\)/);
    await h.store.close();
  });

  it("in a shared thread without approvers: the person who started the session decides", async () => {
    const h = await makeHarness({ overrides: { approvals: { approvers: [], ttlMs: 60_000 } } });
    const target = thread("1.1", "C1");
    expect(await h.manager.command(target, ANA, "mode", ["interactive"])).toBe(
      "Mode is already interactive.",
    );
    expect(await h.manager.command(target, BEN, "mode", ["auto"])).toMatch(
      /or, without one, Ana \(id U_ANA\), who started/,
    );
    expect(await h.manager.command(target, ANA, "mode", ["auto"])).toBe("Mode set to auto.");
    expect(await h.manager.command(target, ANA, "status", [])).toMatch(/Started by: Ana/);
    await h.store.close();
  });

  it("names the starter in a refusal with their user id, and a name written as a link as plain text", async () => {
    const h = await makeHarness({ overrides: { approvals: { approvers: [], ttlMs: 60_000 } } });
    const target = thread("1.2", "C1");
    const mallory = { id: "U0MALLORY", name: "[Boss](https://evil.example)" };
    expect(await h.manager.command(target, mallory, "mode", ["interactive"])).toBe(
      "Mode is already interactive.",
    );
    for (const [command, arg] of [
      ["mode", "auto"],
      ["model", "pricey-model"],
    ] as const) {
      const refusal = await h.manager.command(target, BEN, command, [arg]);
      expect(refusal).toContain("\\[Boss\\]\\(https\\:\\/\\/evil\\.example\\) (id U0MALLORY), who started");
      expect(markdownToMrkdwn(refusal)).toContain("[Boss](https://evil.example) (id U0MALLORY), who started");
      expect(markdownToMrkdwn(refusal)).not.toContain("<https");
    }
    await h.store.close();
  });

  it("in a DM: its owner decides, whatever approvers are configured", async () => {
    const h = await makeHarness();
    const target = thread("1.1", "D1");
    expect(await h.manager.command(target, ANA, "mode", ["auto"])).toBe("Mode set to auto.");
    await h.store.close();
  });
});
