/**
 * A workspace root that is, or contains, the folder Coworker starts from (where `.env` and
 * `config/coworker.yaml` are read) or Coworker's own folder (its code) is refused at load: the
 * file tools and the sandbox drop a protected folder that contains a root from their off-limits
 * list, so the agent could rewrite the configuration it is started with, or the code it runs. A
 * workspace inside the start folder (./workspace, the usual layout) still loads.
 */
import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { SERVICE_DIR } from "../../src/core/service-dir.js";

const LOCAL = { OPENAI_BASE_URL: "http://localhost:11434/v1" };
const project = () => realpathSync(mkdtempSync(join(tmpdir(), "coworker-service-roots-")));

function problems(cwd: string, env: Record<string, string>): string {
  const result = loadConfig({ env: { ...LOCAL, ...env }, cwd });
  return result.ok ? "" : result.problems.join("\n");
}

describe("workspace roots and Coworker's own folders", () => {
  it("refuses COWORKER_WORKSPACE=. (the start folder), naming it and the fix", () => {
    const cwd = project();
    const text = problems(cwd, { COWORKER_WORKSPACE: "." });
    expect(text).toContain(
      `workspace.root (COWORKER_WORKSPACE): ${cwd} contains the folder Coworker starts from (where .env and config/coworker.yaml are read), ${cwd}`,
    );
    expect(text).toContain("Give the workspace a folder of its own");
  });

  it("refuses a workspace above the start folder, and one that contains Coworker's code", () => {
    const cwd = project();
    expect(problems(cwd, { COWORKER_WORKSPACE: dirname(cwd) })).toContain(
      "contains the folder Coworker starts from",
    );
    expect(problems(cwd, { COWORKER_WORKSPACE: SERVICE_DIR })).toContain(
      `contains Coworker's own folder (its code and dependencies), ${realpathSync(SERVICE_DIR)}`,
    );
  });

  it("loads a workspace inside the start folder, the usual layout", () => {
    const cwd = project();
    expect(problems(cwd, { COWORKER_WORKSPACE: "./workspace" })).toBe("");
  });
});
