/**
 * A workspace root (workspace.root or an extra root) that is the data folder or lies inside it is
 * refused at load, by `start` and `doctor` alike: the file tools and the sandbox drop a protected
 * folder that contains a root from their off-limits list, so the agent would reach the store, the
 * audit log and the MCP servers' folders. The data folder inside the workspace still loads.
 */
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/config/env-overrides.js";
import { loadConfig } from "../../src/config/load-config.js";
import { expectStartAndDoctorRefuse } from "../cli/io.js";

const LOCAL = { OPENAI_BASE_URL: "http://localhost:11434/v1" };
const FIX = "Give the workspace and data_dir separate folders";

const project = () => realpathSync(mkdtempSync(join(tmpdir(), "coworker-data-roots-")));

function at(cwd: string, env: Env, yaml?: string) {
  if (yaml !== undefined) writeFileSync(join(cwd, "coworker.yaml"), yaml);
  return loadConfig({
    env: { ...LOCAL, ...env },
    cwd,
    ...(yaml !== undefined ? { argv: ["-c", "coworker.yaml"] } : {}),
  });
}

function refusal(result: ReturnType<typeof loadConfig>): string {
  if (result.ok) throw new Error("expected the workspace to be refused, got a valid config");
  return result.problems.join("\n");
}

describe("workspace roots and the data folder", () => {
  it("refuses COWORKER_WORKSPACE equal to COWORKER_DATA_DIR, naming both paths and the fix", () => {
    const cwd = project();
    const data = join(cwd, "data");
    const text = refusal(at(cwd, { COWORKER_WORKSPACE: data, COWORKER_DATA_DIR: data }));
    expect(text).toContain(
      `workspace.root (COWORKER_WORKSPACE): ${data} is the data folder (data_dir (COWORKER_DATA_DIR): ${data}), ` +
        "where Coworker keeps its database, audit log, skills and MCP server folders",
    );
    expect(text).toContain(FIX);
  });

  it("refuses workspace.root: ./data with the default data_dir, also once the folder exists", () => {
    const cwd = project();
    const yaml = "workspace:\n  root: ./data\n";
    expect(refusal(at(cwd, {}, yaml))).toContain(
      `workspace.root: ${join(cwd, "data")} is the data folder (data_dir: ${join(cwd, "data")})`,
    );
    mkdirSync(join(cwd, "data"));
    writeFileSync(join(cwd, "data", "coworker.sqlite"), "");
    expect(refusal(at(cwd, {}, yaml))).toContain(FIX);
  });

  it("refuses an extra root that is the data folder", () => {
    const cwd = project();
    const yaml = `workspace:\n  root: ./ws\n  extra_roots: [./shared, ${join(cwd, "data")}]\n`;
    const text = refusal(at(cwd, {}, yaml));
    expect(text).toContain(`workspace.extra_roots[1]: ${join(cwd, "data")} is the data folder`);
    expect(text).not.toContain("workspace.root:");
    expect(text).not.toContain("extra_roots[0]");
  });

  it("refuses a root inside the data folder, where the service's own folders are", () => {
    const cwd = project();
    const text = refusal(at(cwd, { COWORKER_WORKSPACE: "data/skills" }));
    expect(text).toContain(
      `workspace.root (COWORKER_WORKSPACE): ${join(cwd, "data", "skills")} lies inside the data folder (data_dir: ${join(cwd, "data")})`,
    );
  });

  it("follows links: a workspace linked to the data folder is refused", () => {
    const cwd = project();
    mkdirSync(join(cwd, "data"));
    symlinkSync(join(cwd, "data"), join(cwd, "ws-link"));
    expect(refusal(at(cwd, { COWORKER_WORKSPACE: "ws-link" }))).toContain(
      `workspace.root (COWORKER_WORKSPACE): ${join(cwd, "ws-link")} → ${join(cwd, "data")} is the data folder`,
    );
    // A data folder reached through a link to a folder not made yet.
    symlinkSync(join(cwd, "state"), join(cwd, "data-link"));
    expect(at(cwd, { COWORKER_WORKSPACE: "state", COWORKER_DATA_DIR: "data-link" }).ok).toBe(false);
  });

  it("still loads the data folder as a folder inside the workspace, or beside it", () => {
    const cwd = project();
    expect(at(cwd, { COWORKER_WORKSPACE: "ws", COWORKER_DATA_DIR: "ws/data" }).ok).toBe(true);
    expect(at(cwd, { COWORKER_WORKSPACE: "ws", COWORKER_DATA_DIR: "data" }).ok).toBe(true);
    expect(at(cwd, {}).ok).toBe(true);
    // A sibling whose name starts like the data folder's is not inside it.
    expect(at(cwd, { COWORKER_WORKSPACE: "data-ws" }).ok).toBe(true);
  });

  it("start and doctor both refuse it with the same line", async () => {
    const cwd = project();
    const env = { ...LOCAL, COWORKER_WORKSPACE: "data", COWORKER_DATA_DIR: "data" };
    const line = `workspace.root (COWORKER_WORKSPACE): ${join(cwd, "data")} is the data folder`;
    await expectStartAndDoctorRefuse(cwd, env, line);
  });
});
