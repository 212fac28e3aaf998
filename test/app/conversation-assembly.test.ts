import { existsSync, mkdtempSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { approvalsFromConfig } from "../../src/app/conversation-assembly.js";
import { runCli } from "../../src/cli/run-cli.js";
import { mcpServersFolder } from "../../src/config/mcp-server-folders.js";
import { testIo } from "../cli/io.js";
import { type FakeBody, type FakeOpenAI, startFakeOpenAI } from "../fakes/fake-openai.js";
import { makeProject, runCoworker } from "./run-coworker.js";

const FIXTURE = fileURLToPath(new URL("../fixtures/mcp/test-server.mjs", import.meta.url));

let fake: FakeOpenAI | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe("approvalsFromConfig", () => {
  it("turns hours into a whole-millisecond TTL and keeps qualified ids", () => {
    expect(
      approvalsFromConfig({
        approvers: ["slack:U0123", "telegram:4567"],
        per_channel: { "slack:C1": ["slack:U9"] },
        expire_after_h: 0.5,
      }),
    ).toEqual({
      approvers: ["slack:U0123", "telegram:4567"],
      perChannel: { "slack:C1": ["slack:U9"] },
      ttlMs: 1_800_000,
    });
  });

  it("lists every unusable id with its config path", () => {
    expect(() =>
      approvalsFromConfig({
        approvers: ["slack:U0123", "U0999"],
        per_channel: { C1: ["slack:U9"], "slack:C2": ["4567"] },
        expire_after_h: 24,
      }),
    ).toThrowError(
      /approvals\.approvers\.1: approver ids are platform-qualified.*approvals\.per_channel\.C1: .*approvals\.per_channel\.slack:C2\.0: approver ids/,
    );
  });
});

describe("the assembled conversation under coworker start", () => {
  it("refuses to start with an unqualified approver and says which and why", async () => {
    fake = await startFakeOpenAI();
    const project = makeProject();
    const t = testIo(project.dir, {
      OPENAI_BASE_URL: fake.baseURL,
      COWORKER_CONFIG: project.configPath,
      COWORKER_DATA_DIR: project.dataDir,
      COWORKER_WORKSPACE: project.workspace,
      COWORKER_APPROVERS: "U0123",
    });
    expect(await runCli(["start"], t.io)).toBe(1);
    // Caught by the config validation, before the store, the ops port or the model are touched.
    expect(t.stderr()).toContain("✗ Configuration has 1 problem(s):");
    expect(t.stderr()).toContain(
      'approvals.approvers[0] (from COWORKER_APPROVERS): is not platform-qualified: write "slack:U0123ABCD" or "telegram:4567" (got "U0123")',
    );
    expect(fake.requests).toHaveLength(0);
  });

  it("offers the configured MCP server's tools, caps output tokens, and writes the audit log", async () => {
    const cwdFile = join(mkdtempSync(join(tmpdir(), "mcp-cwd-")), "cwd");
    fake = await startFakeOpenAI(({ body }) =>
      body.messages.at(-1).role === "tool"
        ? { text: `The server said: ${body.messages.at(-1).content}` }
        : { toolCalls: [{ name: "fixture__echo", arguments: '{"text":"ping"}' }] },
    );
    const yaml = [
      "model:",
      "  max_output_tokens: 321",
      "tools:",
      "  mcp_servers:",
      "    fixture:",
      `      command: ${JSON.stringify(process.execPath)}`,
      `      args: [${JSON.stringify(FIXTURE)}]`,
      // The fixture marks echo readOnlyHint; only a trusted server's hint lets it run unasked.
      "      trust_annotations: true",
      `      env: { FIXTURE_CWD_FILE: ${JSON.stringify(cwdFile)} }`,
      "",
    ].join("\n");
    const project = makeProject(yaml);
    const run = runCoworker(project, fake.baseURL);
    run.stdin.end("echo something\n");
    expect(await run.exited).toBe(0);
    expect(run.stdout()).toContain("The server said:");
    expect(run.stdout()).toContain("ping");
    const first = fake.requests[0];
    expect(first.max_tokens).toBe(321);
    expect(first.tools.map((tool: FakeBody) => tool.function.name)).toContain("fixture__echo");
    const auditPath = join(project.dataDir, "audit.jsonl");
    expect(existsSync(auditPath)).toBe(true);
    expect(readFileSync(auditPath, "utf8")).toContain("fixture__echo");
    // The server ran in a folder of its own in the data folder, not in the workspace commands write.
    expect(readFileSync(cwdFile, "utf8")).toBe(
      realpathSync(join(mcpServersFolder(project.dataDir), "fixture")),
    );
  });
});
