/**
 * openCheckedDir with `create` (a writer's folder that may not be there yet, save_skill's skills
 * folder): the missing folders are made, each relative to the open folder above it, and a folder
 * on the way swapped for a link to a folder outside after the check is refused, nothing made there.
 */
import { mkdirSync, readdirSync, renameSync, statSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { openCheckedDir, UnsafeFileError } from "../../../src/tools/files/anchored-fs.js";
import { createWorkspacePaths } from "../../../src/tools/files/workspace-paths.js";
import { tempDir } from "../../support/engine-fixtures.js";

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => cleanup?.());

async function workspace() {
  const temp = await tempDir("coworker-checked-dir-");
  cleanup = temp.cleanup;
  const root = path.join(temp.dir, "workspace");
  const outside = path.join(temp.dir, "outside");
  mkdirSync(root);
  mkdirSync(outside);
  return { root, outside, paths: createWorkspacePaths({ root }) };
}

it("makes the missing folders of a checked path and holds the last one open", async () => {
  const { root, paths } = await workspace();
  mkdirSync(path.join(root, "a"));
  const dir = await openCheckedDir(await paths.resolve("a/b/c"), { create: true });
  try {
    expect(statSync(path.join(root, "a", "b", "c")).ino).toBe((await dir.stat()).ino);
  } finally {
    await dir.close();
  }
});

it("without `create` a missing folder is missing", async () => {
  const { paths } = await workspace();
  await expect(openCheckedDir(await paths.resolve("a/b"))).rejects.toMatchObject({ code: "ENOENT" });
});

it("a folder on the way swapped for a link after the check is refused, and nothing is made outside", async () => {
  const { root, outside, paths } = await workspace();
  mkdirSync(path.join(root, "a"));
  const checked = await paths.resolve("a/b/c");
  renameSync(path.join(root, "a"), path.join(root, "moved"));
  symlinkSync(outside, path.join(root, "a"));
  await expect(openCheckedDir(checked, { create: true })).rejects.toThrow(UnsafeFileError);
  expect(readdirSync(outside)).toEqual([]);
});
