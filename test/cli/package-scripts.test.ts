/**
 * Install and start (issue #18): `npm start` and `npm run doctor` run the built CLI without
 * compiling (the build happens once, at install, through `prepare`), and the `coworker` bin is
 * the built CLI with a shebang, so `npx coworker …` works.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  scripts: Record<string, string>;
  bin: Record<string, string>;
};

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
});
