/** Captured streams and a CliIo for driving `runCli` in tests. */
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { expect } from "vitest";
import type { CliIo } from "../../src/cli/cli-io.js";
import { runCli } from "../../src/cli/run-cli.js";

export interface TestIo {
  readonly io: CliIo;
  readonly stdin: PassThrough;
  stdout(): string;
  stderr(): string;
  readonly forced: number[];
}

function collect(stream: PassThrough): () => string {
  let text = "";
  stream.on("data", (chunk: Buffer) => {
    text += chunk.toString("utf8");
  });
  return () => text;
}

/** A fresh project directory with a workspace folder. */
export function tempProject(): string {
  const dir = mkdtempSync(join(tmpdir(), "coworker-cli-"));
  mkdirSync(join(dir, "workspace"));
  return dir;
}

/** A CliIo over in-memory streams; `overrides` adds env, assembly, signals, doctor deps. */
export function testIo(cwd: string, env: Record<string, string>, overrides: Partial<CliIo> = {}): TestIo {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const forced: number[] = [];
  return {
    io: { env, cwd, stdin, stdout, stderr, forceExit: (code) => forced.push(code), ...overrides },
    stdin,
    stdout: collect(stdout),
    stderr: collect(stderr),
    forced,
  };
}

/**
 * Both `start` and `doctor` refuse the configuration `env` gives in `cwd` (exit 1), each saying
 * `line`: start on stderr, doctor under its failed configuration check.
 */
export async function expectStartAndDoctorRefuse(
  cwd: string,
  env: Record<string, string>,
  line: string,
): Promise<void> {
  const start = testIo(cwd, env);
  expect(await runCli(["start"], start.io)).toBe(1);
  expect(start.stderr()).toContain(line);
  const doctor = testIo(cwd, env);
  expect(await runCli(["doctor"], doctor.io)).toBe(1);
  expect(doctor.stdout()).toContain("✗ configuration");
  expect(doctor.stdout()).toContain(line);
}
