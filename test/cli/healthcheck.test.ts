/**
 * `coworker healthcheck`, the Docker image's HEALTHCHECK, finds the ops port the way `start` does:
 * run as its own process against a running ops server whose port is set only in the config file
 * COWORKER_CONFIG names (no COWORKER_OPS_PORT), it asks that port and exits 0 while healthy, 1
 * with the problems once /healthz fails, and 1 when nothing listens there.
 */
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { OpsServer } from "../../src/ops/ops-server.js";
import { startTestOpsServer } from "../support/test-ops-server.js";
import { tempProject } from "./io.js";

const CLI = fileURLToPath(new URL("../../src/cli.ts", import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const DOCKERFILE = fileURLToPath(new URL("../../Dockerfile", import.meta.url));

let server: OpsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** `coworker healthcheck` in its own process, in `cwd`, with only PATH and `env` set. */
function healthcheck(cwd: string, env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      ["--import", TSX, CLI, "healthcheck"],
      { cwd, env: { PATH: process.env.PATH ?? "", ...env } },
      (error, stdout, stderr) =>
        resolve({
          code: error ? Number(error.code ?? 1) : 0,
          stdout: String(stdout),
          stderr: String(stderr),
        }),
    ),
  );
}

/** A project whose mounted config file (named by COWORKER_CONFIG) alone sets ops.port. */
function projectWithOpsPort(port: number): { cwd: string; env: Record<string, string> } {
  const cwd = tempProject();
  const file = join(cwd, "mounted.yaml");
  writeFileSync(file, `ops:\n  host: 0.0.0.0\n  port: ${port}\n`);
  return { cwd, env: { COWORKER_CONFIG: file } };
}

describe("coworker healthcheck", () => {
  it("asks the ops port set only in the config file: 0 while healthy, 1 with the problems when not", async () => {
    let problems: string[] = [];
    server = await startTestOpsServer({ health: async () => problems });
    const { cwd, env } = projectWithOpsPort(server.port);

    const healthy = await healthcheck(cwd, env);
    expect(healthy).toEqual({
      code: 0,
      stdout: `healthy: http://127.0.0.1:${server.port}/healthz\n`,
      stderr: "",
    });

    problems = ["telegram down for 301 s"];
    const sick = await healthcheck(cwd, env);
    expect(sick.code).toBe(1);
    expect(sick.stderr).toContain(`unhealthy: http://127.0.0.1:${server.port}/healthz answered 503`);
    expect(sick.stderr).toContain("telegram down for 301 s");
  }, 30_000);

  it("fails when nothing listens on that port", async () => {
    server = await startTestOpsServer();
    const { cwd, env } = projectWithOpsPort(server.port);
    await server.close();
    server = undefined;
    const down = await healthcheck(cwd, env);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^unhealthy: cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED\n$/);
  }, 30_000);

  it("is what the Docker image's HEALTHCHECK runs", () => {
    const dockerfile = readFileSync(DOCKERFILE, "utf8");
    expect(dockerfile).toMatch(/^HEALTHCHECK [^\n]*\\\n\s+CMD \["node", "dist\/cli\.js", "healthcheck"\]$/m);
  });
});
