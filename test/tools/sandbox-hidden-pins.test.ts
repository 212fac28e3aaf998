/**
 * A hidden path inside the workspace stays covered from one command to the next: every folder
 * between the workspace and it is pinned (a mount point), so no command can rename or remove one
 * and have the next command find the hidden path at a new, uncovered place.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bubblewrapBackend } from "../../src/tools/shell/bubblewrap-backend.js";
import { call, tempDir } from "./support/tool-context.js";
import { quickRunCommand } from "./support/quick-run-command.js";

let ws: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  let base: string;
  ({ dir: base, cleanup } = await tempDir("sandbox-pins-"));
  ws = path.join(base, "workspace");
  await mkdir(path.join(ws, "outer", "state", "data"), { recursive: true });
  await writeFile(path.join(ws, "outer", "state", "data", "store.sqlite"), "OTHER-SESSION-TEXT");
});
afterEach(async () => {
  await cleanup();
});

const tool = () =>
  quickRunCommand(ws, { sandbox: bubblewrapBackend({ hidden: [path.join(ws, "outer", "state", "data")] }) });

describe("hidden paths inside the workspace", () => {
  it("cannot be uncovered by renaming a folder above them between commands", async () => {
    const run = tool();
    await call(run, { command: "mv outer/state outer/state2; mv outer outer2; true" });
    const output = (
      await call(run, {
        command:
          "cat outer/state/data/store.sqlite outer2/state/data/store.sqlite outer/state2/data/store.sqlite outer2/state2/data/store.sqlite 2>/dev/null; true",
      })
    ).output;
    expect(output).not.toContain("OTHER-SESSION-TEXT");
  });

  it("cannot be uncovered by removing a folder above them", async () => {
    const run = tool();
    await call(run, { command: "rm -rf outer 2>/dev/null; mkdir -p outer/state/data; true" });
    const again = (
      await call(run, { command: "cat outer/state/data/store.sqlite 2>/dev/null; ls outer/state" })
    ).output;
    expect(again).not.toContain("OTHER-SESSION-TEXT");
  });

  it("leaves the folders above them writable", async () => {
    const output = (
      await call(tool(), { command: "echo x > outer/state/note && mkdir outer/state/more && ls outer/state" })
    ).output;
    expect(output).toBe("data\nmore\nnote\n[exit code 0]");
  });
});
