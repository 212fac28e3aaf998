import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  isWithin,
  MAX_LINK_HOPS,
  realPathAllowingMissing,
  realPathAllowingMissingSync,
  TooManyLinksError,
} from "../../src/core/real-paths.js";

describe("realPathAllowingMissing and realPathAllowingMissingSync", () => {
  let dir: string;
  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), "coworker-real-paths-")));
    mkdirSync(join(dir, "ws"));
    mkdirSync(join(dir, "elsewhere", "deep"), { recursive: true });
    writeFileSync(join(dir, "ws", "file"), "x");
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Both variants, in both modes, agree on `path`'s answer. */
  async function resolvedBoth(path: string): Promise<string> {
    const sync = realPathAllowingMissingSync(path);
    expect(realPathAllowingMissingSync(path, { bestEffort: true })).toBe(sync);
    expect(await realPathAllowingMissing(path)).toBe(sync);
    expect(await realPathAllowingMissing(path, { bestEffort: true })).toBe(sync);
    return sync;
  }

  it("gives the real path of what exists, links followed", async () => {
    symlinkSync(join(dir, "ws"), join(dir, "ws-link"));
    expect(await resolvedBoth(join(dir, "ws-link", "file"))).toBe(join(dir, "ws", "file"));
    expect(await resolvedBoth("/")).toBe("/");
  });

  it("appends a missing tail to the real path of what exists", async () => {
    symlinkSync(join(dir, "elsewhere"), join(dir, "ws", "out"));
    expect(await resolvedBoth(join(dir, "ws", "new", "deeper", "x"))).toBe(
      join(dir, "ws", "new", "deeper", "x"),
    );
    expect(await resolvedBoth(join(dir, "ws", "out", "new", "x"))).toBe(join(dir, "elsewhere", "new", "x"));
    // Below a file: nothing can be there, the path is kept as written.
    expect(await resolvedBoth(join(dir, "ws", "file", "under"))).toBe(join(dir, "ws", "file", "under"));
  });

  it("follows a dangling link to where it points, also on the way to a missing path", async () => {
    symlinkSync(join(dir, "elsewhere", "missing"), join(dir, "ws", "dangling"));
    symlinkSync("../gone", join(dir, "ws", "dangling-relative"));
    expect(await resolvedBoth(join(dir, "ws", "dangling"))).toBe(join(dir, "elsewhere", "missing"));
    expect(await resolvedBoth(join(dir, "ws", "dangling", "x"))).toBe(join(dir, "elsewhere", "missing", "x"));
    expect(await resolvedBoth(join(dir, "ws", "dangling-relative"))).toBe(join(dir, "gone"));
  });

  it("reads a relative link target from the link's real folder, as the kernel does", async () => {
    // ws/a/b/c leads back to ws/a, whose link "up" points two folders above it: outside ws, though
    // read by name from ws/a/b/c it would seem to stay inside (ws/a/outside).
    mkdirSync(join(dir, "ws", "a", "b"), { recursive: true });
    symlinkSync(join(dir, "ws", "a"), join(dir, "ws", "a", "b", "c"));
    symlinkSync("../../outside", join(dir, "ws", "a", "up"));
    expect(await resolvedBoth(join(dir, "ws", "a", "b", "c", "up"))).toBe(join(dir, "outside"));
  });

  it("stops a loop of links: best effort keeps the path, otherwise it throws", async () => {
    symlinkSync("b", join(dir, "ws", "a"));
    symlinkSync("a", join(dir, "ws", "b"));
    const loop = join(dir, "ws", "a", "x");
    expect([join(dir, "ws", "a", "x"), join(dir, "ws", "b", "x")]).toContain(
      realPathAllowingMissingSync(loop, { bestEffort: true }),
    );
    expect(await realPathAllowingMissing(loop, { bestEffort: true })).toBe(
      realPathAllowingMissingSync(loop, { bestEffort: true }),
    );
    expect(() => realPathAllowingMissingSync(loop)).toThrow(expect.objectContaining({ code: "ELOOP" }));
    await expect(realPathAllowingMissing(loop)).rejects.toMatchObject({ code: "ELOOP" });
  });

  it("follows at most MAX_LINK_HOPS links that the kernel sees as missing", async () => {
    // "missing/../spin" fails in the kernel (ENOENT) but is "spin" again once resolved by name.
    const spin = join(dir, "ws", "spin");
    symlinkSync("missing/../spin", spin);
    expect(realPathAllowingMissingSync(join(spin, "x"), { bestEffort: true })).toBe(join(spin, "x"));
    expect(await realPathAllowingMissing(join(spin, "x"), { bestEffort: true })).toBe(join(spin, "x"));
    expect(() => realPathAllowingMissingSync(spin)).toThrow(TooManyLinksError);
    await expect(realPathAllowingMissing(spin)).rejects.toThrow(`too many symbolic links at ${spin}`);
  });

  it("follows a chain of exactly MAX_LINK_HOPS dangling links to its end", async () => {
    for (let i = 0; i < MAX_LINK_HOPS; i++) symlinkSync(`missing/../l${i + 1}`, join(dir, "ws", `l${i}`));
    expect(await resolvedBoth(join(dir, "ws", "l0"))).toBe(join(dir, "ws", `l${MAX_LINK_HOPS}`));
    symlinkSync("missing/../end", join(dir, "ws", `l${MAX_LINK_HOPS}`));
    expect(() => realPathAllowingMissingSync(join(dir, "ws", "l0"))).toThrow(TooManyLinksError);
    expect(realPathAllowingMissingSync(join(dir, "ws", "l0"), { bestEffort: true })).toBe(
      join(dir, "ws", `l${MAX_LINK_HOPS}`),
    );
  });
});

describe("isWithin", () => {
  it("counts the root itself and what lies below it", () => {
    expect(isWithin("/a/b", "/a/b")).toBe(true);
    expect(isWithin("/a/b/c", "/a/b")).toBe(true);
    expect(isWithin("/a/b/c/d", "/a/b")).toBe(true);
    expect(isWithin("/a/b/..c", "/a/b")).toBe(true);
    expect(isWithin("/x", "/")).toBe(true);
    expect(isWithin("/", "/")).toBe(true);
  });

  it("refuses what lies outside, a parent and a sibling sharing the prefix", () => {
    expect(isWithin("/a/bc", "/a/b")).toBe(false);
    expect(isWithin("/a", "/a/b")).toBe(false);
    expect(isWithin("/c/d", "/a/b")).toBe(false);
    expect(isWithin("/", "/a")).toBe(false);
  });
});
