/**
 * AnchoredDir.again where /proc/self/fd names a held handle (Linux): the reopen goes through the
 * held handle's own name, so it is the held folder with no identity check, wherever the folder was
 * moved; and a held folder already closed is refused, never reopened through a number another open
 * file may have taken since (a closed handle's number reads -1).
 */
import { mkdirSync, renameSync, symlinkSync } from "node:fs";
import { open } from "node:fs/promises";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { AnchoredDir, FD_DIRECTORY } from "../../../src/tools/files/anchored-fs.js";
import { tempDir } from "../../support/engine-fixtures.js";

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => cleanup?.());

it.runIf(FD_DIRECTORY !== undefined)(
  "a reopen is the held folder, though its name now leads through a link elsewhere",
  async () => {
    const temp = await tempDir("coworker-again-");
    cleanup = temp.cleanup;
    const folder = path.join(temp.dir, "folder");
    mkdirSync(folder);
    mkdirSync(path.join(temp.dir, "outside"));
    const held = await AnchoredDir.openRoot(folder);
    try {
      renameSync(folder, path.join(temp.dir, "moved"));
      symlinkSync(path.join(temp.dir, "outside"), folder);
      const reopened = await held.again("folder");
      try {
        const [was, is] = await Promise.all([held.stat(), reopened.stat()]);
        expect([is.dev, is.ino]).toEqual([was.dev, was.ino]);
      } finally {
        await reopened.close();
      }
    } finally {
      await held.close();
    }
  },
);

it.runIf(FD_DIRECTORY !== undefined)(
  "a closed held folder is refused, though its old number names another open folder",
  async () => {
    const temp = await tempDir("coworker-again-");
    cleanup = temp.cleanup;
    mkdirSync(path.join(temp.dir, "held"));
    mkdirSync(path.join(temp.dir, "other"));
    const held = await AnchoredDir.openRoot(path.join(temp.dir, "held"));
    await held.close();
    // A new open takes the lowest free number, most likely the one the held folder had.
    const other = await open(path.join(temp.dir, "other"), "r");
    try {
      await expect(held.again("held")).rejects.toThrow();
    } finally {
      await other.close();
    }
  },
);
