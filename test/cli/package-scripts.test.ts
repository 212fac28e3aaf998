/**
 * Install and start (issue #18): `npm start` and `npm run doctor` run the built CLI without
 * compiling (the build happens once, at install, through `prepare`), and the `coworker` bin is
 * the built CLI with a shebang, so `npx coworker …` works. The package (`npm pack`) holds what
 * runs and documents the bot — the built CLI, the example config, the Slack manifest,
 * `.env.example`, the docs — not the tests, benchmarks, sources or CI scripts.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  scripts: Record<string, string>;
  bin: Record<string, string>;
  files: string[];
};
const root = new URL("../../", import.meta.url).pathname;

describe("package scripts", () => {
  it("start and doctor never compile; prepare builds at install", () => {
    for (const name of ["start", "doctor"]) {
      expect(pkg.scripts[name]).toMatch(/^node dist\/cli\.js /);
      expect(pkg.scripts[`pre${name}`]).toBeUndefined();
    }
    expect(pkg.scripts.prepare).toBe("npm run build");
    expect(pkg.scripts.build).toContain("tsc");
  });

  it("ships the coworker bin as the built CLI with a node shebang", () => {
    expect(pkg.bin.coworker).toBe("dist/cli.js");
    const source = readFileSync(new URL("../../src/cli.ts", import.meta.url), "utf8");
    expect(source.startsWith("#!/usr/bin/env node\n")).toBe(true);
  });

  it("packs the built CLI and what documents it, and nothing of the test suite or the sources", () => {
    const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
      cwd: root,
      encoding: "utf8",
    });
    const paths = (JSON.parse(out) as { files: { path: string }[] }[])[0]?.files.map((f) => f.path) ?? [];
    const allowed = [
      /^dist\//,
      /^docs\//,
      /^config\/(coworker\.example|slack-app-manifest)\.yaml$/,
      /^(package\.json|README\.md|LICENSE|\.env\.example)$/,
    ];
    expect(paths.filter((path) => !allowed.some((re) => re.test(path)))).toEqual([]);
    for (const path of [
      "config/coworker.example.yaml",
      "config/slack-app-manifest.yaml",
      ".env.example",
      "LICENSE",
    ])
      expect(paths).toContain(path);
    expect(pkg.files).toContain(pkg.bin.coworker?.split("/")[0]);
  });
});
