/** .env.example lists every variable the code reads: each env override, and the config file's. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ENV_OVERRIDES } from "../../src/config/env-overrides.js";
import { CONFIG_FILE_VARIABLE } from "../../src/config/load-config.js";

const example = readFileSync(new URL("../../.env.example", import.meta.url), "utf8");
/** Names assigned in the file, commented out or not ("# NAME=…" or "NAME=…"). */
const listed = new Set([...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((match) => match[1] ?? ""));

describe(".env.example", () => {
  it("lists every variable of the env overrides table and COWORKER_CONFIG", () => {
    const read = [...ENV_OVERRIDES.map(({ env }) => env), CONFIG_FILE_VARIABLE];
    expect(read.filter((name) => !listed.has(name))).toEqual([]);
  });

  it("lists nothing the code does not read", () => {
    const read = new Set([...ENV_OVERRIDES.map(({ env }) => env), CONFIG_FILE_VARIABLE]);
    expect([...listed].filter((name) => !read.has(name))).toEqual([]);
  });

  it("lists each variable once, and a line uncommented holds only its value", () => {
    const assignments = [...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=(.*)$/gm)];
    const names = assignments.map((match) => match[1]);
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
    // dotenv keeps what follows `=` up to a ` #` comment: a note in brackets would join the value.
    const noted = assignments.filter((match) => /\s/.test(match[2] ?? "")).map((match) => match[0]);
    expect(noted).toEqual([]);
  });

  it("leaves every secret blank", () => {
    const filled = [...example.matchAll(/^([A-Z_]*(KEY|TOKEN|SECRET))=(.+)$/gm)].map((match) => match[1]);
    expect(filled).toEqual([]);
  });
});
