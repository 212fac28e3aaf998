/**
 * writeChecked from a folder held open (AnchoredPath): the walk starts at the handle, so the
 * folder's name swapped for a link to a folder outside sends nothing there (on Linux the file
 * lands in the held folder, wherever it was moved), and a path climbing out of the folder (`..`)
 * is refused before anything is opened.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import {
  AnchoredDir,
  FD_DIRECTORY,
  UnsafeFileError,
  writeChecked,
} from "../../../src/tools/files/anchored-fs.js";
import { tempDir } from "../../support/engine-fixtures.js";

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => cleanup?.());

it("a write below a held folder whose name became a link lands in the held folder, not the link's target", async () => {
  const temp = await tempDir("coworker-anchored-");
  cleanup = temp.cleanup;
  const folder = path.join(temp.dir, "folder");
  const outside = path.join(temp.dir, "outside");
  mkdirSync(folder);
  mkdirSync(outside);
  const dir = await AnchoredDir.openRoot(folder);
  try {
    renameSync(folder, path.join(temp.dir, "moved"));
    symlinkSync(outside, folder);
    const write = writeChecked({ dir, relative: "sub/file.txt", display: "folder/sub/file.txt" }, "x\n");
    if (FD_DIRECTORY) {
      await write;
      expect(readFileSync(path.join(temp.dir, "moved", "sub", "file.txt"), "utf8")).toBe("x\n");
    } else await expect(write).rejects.toThrow(UnsafeFileError);
    expect(readdirSync(outside)).toEqual([]);
  } finally {
    await dir.close();
  }
});

it("a path below a held folder that climbs out of it is refused, and nothing is written", async () => {
  const temp = await tempDir("coworker-anchored-");
  cleanup = temp.cleanup;
  const folder = path.join(temp.dir, "folder");
  mkdirSync(folder);
  const dir = await AnchoredDir.openRoot(folder);
  try {
    for (const relative of ["../escaped.txt", "a/../../escaped.txt", "./a.txt", "a//b.txt"])
      await expect(writeChecked({ dir, relative, display: relative }, "x\n")).rejects.toThrow(
        UnsafeFileError,
      );
    expect(readdirSync(temp.dir)).toEqual(["folder"]);
    expect(readdirSync(folder)).toEqual([]);
  } finally {
    await dir.close();
  }
});

it("writes a file whose name is as long as the file system allows (its temporary file fits too)", async () => {
  const temp = await tempDir("coworker-anchored-");
  cleanup = temp.cleanup;
  const name = `${"n".repeat(251)}.txt`;
  const dir = await AnchoredDir.openRoot(temp.dir);
  try {
    await writeChecked({ dir, relative: name, display: name }, "x\n");
    expect(readFileSync(path.join(temp.dir, name), "utf8")).toBe("x\n");
    expect(readdirSync(temp.dir)).toEqual([name]);
  } finally {
    await dir.close();
  }
});
