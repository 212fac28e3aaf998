/**
 * What the console's person may approve. The console checks no one (whoever types at the
 * terminal), so beside Slack or Telegram (`console.enabled: true`) they approve their own console
 * sessions' calls only: a change that steers every later session — a skill, AGENTS.md, anything
 * under .coworker/ — is theirs only when `approvals.approvers` names them (`console:local`). Alone,
 * the console's person owns the deployment and decides it, as before. Any other console id is a
 * config error, since it would name no one.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ChannelStarter } from "../../src/app/app-parts.js";
import { approvalsOf } from "../../src/app/conversation-assembly.js";
import { loosenersFor, mayDecide, steeringDecidersFor } from "../../src/approvals/authorisation.js";
import { CONSOLE_TARGET } from "../../src/channels/console/console-channel.js";
import { loadConfig } from "../../src/config/load-config.js";
import { tempProject } from "../cli/io.js";

const SLACK_ENV = { SLACK_BOT_TOKEN: "xoxb-1-2-3", SLACK_APP_TOKEN: "xapp-1-2-3" };

const slack: ChannelStarter = {
  platform: "slack",
  hasCredentials: (config) => config.slack.bot_token !== undefined,
  start: async () => {
    throw new Error("not started here");
  },
};

function load(yaml: string, env: Record<string, string> = {}) {
  const cwd = tempProject();
  writeFileSync(join(cwd, "coworker.yaml"), yaml);
  return loadConfig({
    env: { OPENAI_API_KEY: "sk-test-0123456789abcdef", ...env },
    cwd,
    argv: ["-c", "coworker.yaml"],
  });
}

/** Whether the console's person may approve a change that steers every session, under `yaml`. */
function consoleMaySteer(yaml: string, env: Record<string, string> = {}): boolean {
  const loaded = load(yaml, env);
  if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
  const approvals = approvalsOf(loaded.config, [slack]);
  // The console session's looseners: its one person, who started it.
  const looseners = loosenersFor(approvals, CONSOLE_TARGET, "local");
  expect(mayDecide(looseners, "console", "local")).toBe(true);
  return mayDecide(steeringDecidersFor(approvals, "console", looseners), "console", "local");
}

describe("the console's person and changes that steer every session", () => {
  it("beside Slack, without console:local among the approvers, may not approve one", () => {
    expect(consoleMaySteer("console: { enabled: true }\n", SLACK_ENV)).toBe(false);
    expect(
      consoleMaySteer("console: { enabled: true }\napprovals: { approvers: [slack:U0123ABCD] }\n", SLACK_ENV),
    ).toBe(false);
  });

  it("beside Slack, named as console:local in approvals.approvers, may", () => {
    expect(
      consoleMaySteer(
        "console: { enabled: true }\napprovals: { approvers: [slack:U0123ABCD, console:local] }\n",
        SLACK_ENV,
      ),
    ).toBe(true);
  });

  it("alone (no platform configured) owns the deployment and may, as before", () => {
    expect(consoleMaySteer("")).toBe(true);
    expect(consoleMaySteer("console: { enabled: true }\n")).toBe(true);
  });

  it("gives Slack no decider without approvers: a DM's owner may not approve a change to every session", () => {
    const loaded = load("console: { enabled: true }\n", SLACK_ENV);
    if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
    const approvals = approvalsOf(loaded.config, [slack]);
    expect(steeringDecidersFor(approvals, "slack", ["slack:U1"])).toEqual([]);
  });

  it("refuses a console approver other than console:local, which would name no one", () => {
    const loaded = load("approvals: { approvers: [console:bob] }\n");
    expect(loaded.ok).toBe(false);
    if (!loaded.ok)
      expect(loaded.problems.join("\n")).toContain('the console\'s one person is "console:local"');
  });
});
