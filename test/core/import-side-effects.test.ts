import { readdirSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { REPO_ROOT } from "../support/repo-root.js";

/** Every module under src/ but the CLI's entry point (importing it starts the program). */
function sourceModules(): string[] {
  const src = path.join(REPO_ROOT, "src");
  return readdirSync(src, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts") && file !== "cli.ts")
    .map((file) => path.join(src, file));
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("importing the service's modules", () => {
  it("formats no number through ICU: its first use keeps 7.6 MB of RSS, paid at every start", async () => {
    const numberToLocale = vi.spyOn(Number.prototype, "toLocaleString");
    const numberFormat = vi.spyOn(Intl, "NumberFormat");
    vi.resetModules();
    for (const file of sourceModules()) await import(file);
    expect(numberToLocale).not.toHaveBeenCalled();
    expect(numberFormat).not.toHaveBeenCalled();
  }, 120_000);
});
