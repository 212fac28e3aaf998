/**
 * AnchoredDir.again where there is no /proc/self/fd (anchored-fs's fallback reopens a held folder
 * by the path it had): when the identity check cannot stat (the held handle is closed), the
 * reopened handle is closed too, not leaked.
 */
import { readdirSync } from "node:fs";
import { afterEach, expect, it, vi } from "vitest";

vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  const existsSync: typeof real.existsSync = (file) => file !== "/proc/self/fd" && real.existsSync(file);
  return { ...real, default: { ...real, existsSync }, existsSync };
});

const { AnchoredDir, FD_DIRECTORY } = await import("../../../src/tools/files/anchored-fs.js");
const { tempDir } = await import("../../support/engine-fixtures.js");

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => cleanup?.());

/** How many file descriptors this process has open (read where the host lists them). */
const openDescriptors = () => readdirSync("/proc/self/fd").length;

it.runIf(process.platform === "linux")(
  "a reopen whose identity check fails to stat closes what it opened",
  async () => {
    expect(FD_DIRECTORY).toBeUndefined();
    const temp = await tempDir("coworker-again-");
    cleanup = temp.cleanup;
    const held = await AnchoredDir.openRoot(temp.dir);
    await held.close();
    const before = openDescriptors();
    await expect(held.again("folder")).rejects.toThrow();
    expect(openDescriptors()).toBe(before);
  },
);
