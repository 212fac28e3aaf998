import { chmodSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logging/logger.js";

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

/** Log one line and wait until it is in the file (the destination opens and writes asynchronously). */
async function logOneLine(file: string): Promise<void> {
  const logger = createLogger({ level: "info", file });
  logger.info("hello");
  await expect.poll(() => readFileSync(file, "utf8")).toContain("hello");
}

describe("log file", () => {
  let umask: number;
  beforeEach(() => {
    umask = process.umask(0o022);
  });
  afterEach(() => {
    process.umask(umask);
  });

  it("is created 0600 in a folder created 0700", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "log-")), "data");
    const file = join(dir, "coworker.log");
    await logOneLine(file);
    expect(mode(dir)).toBe("700");
    expect(mode(file)).toBe("600");
  });

  it("tightens a log file made before, and keeps the mode of a folder that exists", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "log-")), "data");
    mkdirSync(dir);
    chmodSync(dir, 0o755);
    const file = join(dir, "coworker.log");
    writeFileSync(file, "earlier\n");
    chmodSync(file, 0o644);
    await logOneLine(file);
    expect(mode(dir)).toBe("755");
    expect(mode(file)).toBe("600");
    expect(readFileSync(file, "utf8")).toMatch(/^earlier\n.*hello/s);
  });
});
