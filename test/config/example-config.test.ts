import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ENV_OVERRIDES } from "../../src/config/env-overrides.js";
import { loadConfig } from "../../src/config/load-config.js";
import { configSchema } from "../../src/config/schema.js";
import { keyIndex } from "../../src/config/schema-walk.js";

const examplePath = fileURLToPath(new URL("../../config/coworker.example.yaml", import.meta.url));
const example = readFileSync(examplePath, "utf8");

describe("config/coworker.example.yaml", () => {
  it("is a valid config equal to the defaults", () => {
    const fromExample = loadConfig({ env: {}, cwd: "/srv/app", argv: ["--config", examplePath] });
    const defaults = loadConfig({ env: {}, cwd: "/srv/app" });
    if (!fromExample.ok) throw new Error(fromExample.problems.join("\n"));
    expect(defaults.ok && fromExample.config).toEqual(defaults.ok && defaults.config);
  });

  it("documents every key of the schema, including the commented-out ones", () => {
    const keys = [...keyIndex(configSchema).keys()];
    const mcpKeys = ["command", "args", "env", "url", "headers", "risk"];
    const missing = [...keys, ...mcpKeys].filter(
      (key) => !new RegExp(`^\\s*(#\\s*)?${key}:`, "m").test(example),
    );
    expect(missing).toEqual([]);
  });

  it("names every environment override next to its key", () => {
    const missing = ENV_OVERRIDES.filter(({ env }) => !example.includes(`[${env}]`)).map(({ env }) => env);
    expect(missing).toEqual([]);
  });
});
