/**
 * The bubblewrap probe's answer: one run of bwrap says it works here, is not installed, or is
 * broken with what it said (or why it could not start) — no made-up error stands for "not
 * installed" — and each answer becomes the sandbox status people see.
 */
import { chmod, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NOT_INSTALLED, probeStatus, runProbe } from "../../src/tools/shell/bubblewrap-probe.js";
import { tempDir } from "./support/tool-context.js";

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir("bubblewrap-probe-"));
});
afterEach(async () => {
  await cleanup();
});

describe("runProbe", () => {
  it("reads exit 0 as working", async () => {
    expect(await runProbe("/bin/sh", ["-c", "exit 0"])).toEqual({ kind: "works" });
  });

  it("reads a program that is not there as not installed", async () => {
    expect(await runProbe(path.join(dir, "no-bwrap"), [])).toEqual({ kind: "not-installed" });
  });

  it("reads a failed run as broken, with the first line it wrote", async () => {
    const run = "echo 'bwrap: No permissions to create a new namespace' >&2; echo 'second line' >&2; exit 1";
    expect(await runProbe("/bin/sh", ["-c", run])).toEqual({
      kind: "broken",
      detail: "bwrap: No permissions to create a new namespace",
    });
    expect(await runProbe("/bin/sh", ["-c", "exit 1"])).toEqual({ kind: "broken", detail: "" });
  });

  it("reads a program that cannot start for another reason as broken, with that reason", async () => {
    const file = path.join(dir, "bwrap");
    await writeFile(file, "not a program");
    await chmod(file, 0o644);
    const result = await runProbe(file, []);
    expect(result.kind).toBe("broken");
    expect(result.kind === "broken" && result.detail).toMatch(/EACCES/);
  });
});

describe("probeStatus", () => {
  it("tells how to install bubblewrap when it is not installed", () => {
    const status = probeStatus(NOT_INSTALLED, "bwrap", false);
    expect(status).toMatchObject({ kind: "unavailable", reason: "bubblewrap (bwrap) is not installed" });
    expect(status.kind === "unavailable" && status.fix).toMatch(/apt-get install bubblewrap/);
  });

  it("reads a working probe as sandboxed, with or without the host network", () => {
    expect(probeStatus({ kind: "works" }, "bwrap", false)).toEqual({
      kind: "sandboxed",
      description: "bubblewrap sandbox, no network",
    });
    expect(probeStatus({ kind: "works" }, "bwrap", true)).toEqual({
      kind: "sandboxed",
      description: "bubblewrap sandbox, host network shared (tools.shell.network)",
    });
  });

  it("reports a broken probe's detail, and tells how to allow namespaces", () => {
    const status = probeStatus(
      { kind: "broken", detail: "bwrap: setting up uid map: Permission denied" },
      "bwrap",
      false,
    );
    expect(status).toMatchObject({
      kind: "unavailable",
      reason: "bubblewrap cannot create its namespaces (bwrap: setting up uid map: Permission denied)",
    });
    expect(status.kind === "unavailable" && status.fix).toMatch(/unprivileged_userns_clone/);
    expect(probeStatus({ kind: "broken", detail: "" }, "bwrap", false)).toMatchObject({
      reason: "bubblewrap cannot create its namespaces",
    });
  });
});
