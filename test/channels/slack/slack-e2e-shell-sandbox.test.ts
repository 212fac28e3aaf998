/**
 * End to end through Slack with the real run_command in the real bubblewrap sandbox: after
 * "Allow read-only commands this session" every read-only bypass still gets a card (while a
 * read-only git command runs unasked, with a planted fsmonitor switched off), and in auto mode
 * the commands an attacker would try find no token, no other session's text, no way to outlive
 * the command, write to the host or reach the network.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { createWorkspacePaths } from "../../../src/tools/files/workspace-paths.js";
import { interactiveTools } from "../../../src/tools/interactive-tools.js";
import { ToolRegistry } from "../../../src/tools/registry.js";
import { bubblewrapBackend } from "../../../src/tools/shell/bubblewrap-backend.js";
import { createRunCommandTool } from "../../../src/tools/shell/run-command.js";
import type { FakeHandler } from "../../fakes/fake-openai.js";
import type { FakeMessage } from "../../fakes/fake-slack/index.js";
import { engineFactory } from "../../support/session-stack.js";
import {
  ANA,
  BOSS,
  buttonId,
  DM,
  type E2E,
  GENERAL,
  MENTION,
  type ProcessExtension,
  startE2E,
  thread,
} from "./e2e-harness.js";
import { blockTexts } from "./support.js";

let e2e: E2E | undefined;
afterEach(async () => {
  await e2e?.close();
  e2e = undefined;
  delete process.env.SLACK_BOT_TOKEN;
  delete process.env.OPENAI_API_KEY;
});

const BOT_TOKEN = "xoxb-e2e-service-token";
const API_KEY = "sk-e2e-service-key";
const OTHER_SESSION_TEXT = "PURPLE-ELEPHANT-SECRET";

/** Each process gets the real run_command on <dataDir>/workspace, in the real sandbox. */
function realShell(mode: "interactive" | "auto"): ProcessExtension {
  return async ({ provider, dataDir }) => {
    const workspace = join(dataDir, "workspace");
    await mkdir(workspace, { recursive: true });
    const registry = new ToolRegistry();
    registry.register(
      createRunCommandTool({
        paths: createWorkspacePaths({ root: workspace }),
        sandbox: bubblewrapBackend({ hidden: [dataDir] }),
        drainMs: 200,
        killGraceMs: 300,
      }),
    );
    for (const tool of interactiveTools) registry.register(tool);
    return {
      createEngine: engineFactory(provider, registry),
      manager: {
        workspace: { root: workspace, context: "" },
        defaults: { model: "fake-model", provider: "openai", mode, maxSteps: 30, queueMode: "steer" },
      },
    };
  };
}

/** The model runs `commands` one after another (one call per step), then says "done". */
function runsInTurn(commands: readonly string[]): FakeHandler {
  return ({ body }) => {
    const done = body.messages.filter((m: { role: string }) => m.role === "tool").length;
    const command = commands[done];
    if (command === undefined) return { text: "done" };
    return {
      toolCalls: [{ id: `call_${done}`, name: "run_command", arguments: JSON.stringify({ command }) }],
    };
  };
}

/** The tool results the model was shown, in order. */
function toolResults(): string[] {
  const last = e2e?.openai.requests.at(-1)?.messages ?? [];
  return (last as { role: string; content: unknown }[])
    .filter((m) => m.role === "tool")
    .map((m) => String(m.content));
}

function openCards(ts: string): FakeMessage[] {
  return (e2e as E2E).fake.state.botMessages(GENERAL, ts).filter((m) => buttonId(m, "Deny") !== undefined);
}

function press(card: FakeMessage, label: string, user = ANA): void {
  const actionId = buttonId(card, label);
  if (!actionId) throw new Error(`no "${label}" button on ${blockTexts(card.blocks).join(" | ")}`);
  (e2e as E2E).fake.pressButton({ user, channel: GENERAL, messageTs: card.ts, actionId });
}

const BYPASSES = [
  "find . -maxdepth 0 -exe{c..c} sh -c 'touch pwned' \\;",
  "find . -type f -{delete,print}",
  "printf -vA -- -delete; find . $A",
  "sort -oFILE notes.txt",
  "sort --out=FILE notes.txt",
  "echo x | uniq - FILE",
  "xxd notes.txt FILE",
  "git grep -O'sh -c \"touch pwned\"' a",
];

/** The finished reply: "done" under the turn's tool lines (posted) or alone (streamed with task cards). */
const endsDone = (text: string) => /(^|\n)done$/.test(text);

describe("Slack end to end: the read-only grant with the real sandbox", () => {
  it("every bypass gets a card; a read-only git command runs unasked with its fsmonitor off", async () => {
    const commands = ["cat notes.txt", ...BYPASSES, "git status --short"];
    e2e = await startE2E(runsInTurn(commands), {}, realShell("interactive"));
    const workspace = join(e2e.dataDir, "workspace");
    await writeFile(join(workspace, "notes.txt"), "hello\n");
    execFileSync("git", ["init", "-q"], { cwd: workspace });
    execFileSync("git", ["config", "core.fsmonitor", "touch fsmonitor-ran; false"], { cwd: workspace });

    const ts = e2e.fake.userPosts({ user: ANA, channel: GENERAL, text: `${MENTION} look around` }).ts;
    const first = await e2e.fake.waitFor(() => openCards(ts)[0], "the first card");
    // A standing grant in a channel thread is the configured approver's to give.
    press(first, "Allow read-only commands this session", BOSS);
    const pressed = new Set([first.ts]);
    for (const bypass of BYPASSES) {
      const card = await e2e.fake.waitFor(
        () => openCards(ts).find((m) => !pressed.has(m.ts)),
        `a card for ${bypass}`,
      );
      expect(blockTexts(card.blocks).join("\n")).toContain(bypass.slice(0, 12));
      pressed.add(card.ts);
      press(card, "Deny");
    }
    await e2e.fake.waitFor(() => thread((e2e as E2E).fake, GENERAL, ts).find(endsDone), "done");

    const results = toolResults();
    expect(results).toHaveLength(commands.length);
    expect(results[0]).toContain("hello");
    expect(results.at(-1)).toContain("?? notes.txt");
    expect(await readdir(workspace)).not.toEqual(expect.arrayContaining(["FILE", "pwned", "fsmonitor-ran"]));
    expect(existsSync(join(workspace, "notes.txt"))).toBe(true);
  });
});

describe("Slack end to end: auto mode in the real sandbox", () => {
  it("finds no token, no other session's text, no lasting process, no host write, no network", async () => {
    process.env.SLACK_BOT_TOKEN = BOT_TOKEN;
    process.env.OPENAI_API_KEY = API_KEY;
    const marker = `coworker-e2e-${process.pid}-${Date.now()}`;
    const openaiPort = "PORT";
    const commands = [
      "cat /proc/$PPID/environ; echo; cat /proc/1/environ; echo; for f in /proc/*/environ; do cat $f; echo; done; env",
      "ls -la ..; cat ../*.sqlite* ../data/* 2>&1; strings ../*.sqlite* 2>&1 | head -50; cat DATA_DIR/*.sqlite* 2>&1",
      "setsid sh -c 'sleep 1; touch late' & nohup sh -c 'sleep 1; touch late2' >/dev/null 2>&1 & echo started",
      `echo x > /tmp/${marker}; echo y > ../${marker}; ls /tmp`,
      `exec 3<>/dev/tcp/127.0.0.1/${openaiPort} && echo CONNECTED || echo no-network`,
    ];
    let handler: FakeHandler = () => ({ text: `noted ${OTHER_SESSION_TEXT}` });
    e2e = await startE2E((request) => handler(request), {}, realShell("auto"));
    const port = new URL(e2e.openai.baseURL).port;
    const resolved = commands.map((c) => c.replace("DATA_DIR", e2e?.dataDir ?? "").replace(openaiPort, port));

    // Another session holds text that must stay out of reach.
    const dm = e2e.fake.userPosts({ user: ANA, channel: DM, text: `remember ${OTHER_SESSION_TEXT}` }).ts;
    await e2e.fake.waitFor(
      () => e2e?.fake.state.botMessages(DM, dm).find((m) => m.text.includes("noted")) ?? undefined,
      "the other session's reply",
    );

    handler = runsInTurn(resolved);
    const ts = e2e.fake.userPosts({ user: ANA, channel: GENERAL, text: `${MENTION} probe` }).ts;
    await e2e.fake.waitFor(() => thread((e2e as E2E).fake, GENERAL, ts).find(endsDone), "done");
    await delay(1500);

    const results = toolResults();
    expect(results).toHaveLength(resolved.length);
    const all = results.join("\n");
    expect(all).not.toContain(BOT_TOKEN);
    expect(all).not.toContain(API_KEY);
    expect(all).not.toContain(e2e.fake.state.botToken);
    expect(all).not.toContain(OTHER_SESSION_TEXT);
    expect(results[0]).toMatch(/GIT_TERMINAL_PROMPT=0/);
    expect(results[2]).toContain("started");
    const workspace = join(e2e.dataDir, "workspace");
    expect(existsSync(join(workspace, "late"))).toBe(false);
    expect(existsSync(join(workspace, "late2"))).toBe(false);
    expect(existsSync(join("/tmp", marker))).toBe(false);
    expect(existsSync(join(e2e.dataDir, marker))).toBe(false);
    expect(results[4]).toContain("no-network");
    expect(results[4]).not.toContain("CONNECTED");
  });
});
