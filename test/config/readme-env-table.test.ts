/** The README's table of environment variables is one table and names every variable the code reads. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ENV_OVERRIDES } from "../../src/config/env-overrides.js";
import { CONFIG_FILE_VARIABLE } from "../../src/config/load-config.js";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8").split("\n");

/** Where the table whose header is `| variable | sets |` starts, and the first line after it. */
function envTableBounds(): [number, number] {
  const start = readme.findIndex((line) => line.startsWith("| variable | sets |"));
  return [start, readme.findIndex((line, i) => i > start && !line.startsWith("|"))];
}

describe("README environment variables", () => {
  it("is one table: no table row follows the line that ends it", () => {
    const [start, end] = envTableBounds();
    expect(start).toBeGreaterThan(-1);
    expect(readme[end + 1]?.startsWith("| `")).toBe(false);
  });

  it("names every variable of the env overrides table and COWORKER_CONFIG", () => {
    const table = readme.slice(...envTableBounds()).join("\n");
    const read = [...ENV_OVERRIDES.map(({ env }) => env), CONFIG_FILE_VARIABLE];
    expect(read.filter((name) => !table.includes(`\`${name}\``))).toEqual([]);
  });
});
