/**
 * The JS engine of search_files holds a directory handle open for every folder level it is inside,
 * so a folder nested thousands deep (a loop of `mkdir d; cd d` in the shell) would hold thousands
 * of file descriptors at once — past a usual limit of 1,024, every other open of the service
 * (sockets, the store, other sessions' files) fails until the walk gives up. The walk goes no
 * deeper than a fixed number of levels.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { readdirSync } from "node:fs";
import path from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { createSearchFilesTool } from "../../../src/tools/files/search-files.js";
import { call } from "../support/tool-context.js";
import { useTempWorkspace } from "../support/tool-workspace.js";

const temp = useTempWorkspace("search-depth-");

const openDescriptors = (): number => readdirSync("/proc/self/fd").length;

describe.runIf(process.platform === "linux")("search_files' JS engine in a deeply nested folder", () => {
  it("holds a bounded number of folders open, whatever the depth, and still searches the rest", async () => {
    const deep = path.join(temp.dir, ...Array.from({ length: 1_200 }, () => "d"));
    await mkdir(deep, { recursive: true });
    await writeFile(path.join(deep, "bottom.txt"), "needle\n");
    await writeFile(path.join(temp.dir, "top.txt"), "needle\n");
    // Folders down to 100 levels below the searched one are searched; deeper ones are not.
    const levels = (name: string, count: number) => Array.from({ length: count }, () => name);
    for (const [name, count] of [
      ["e", 100],
      ["f", 101],
    ] as const) {
      await mkdir(path.join(temp.dir, ...levels(name, count)), { recursive: true });
      await writeFile(path.join(temp.dir, ...levels(name, count), "edge.txt"), "needle\n");
    }
    const tool = createSearchFilesTool({
      workspace: temp.workspace,
      useRipgrep: false,
      jsLimits: { sliceMs: 0 },
    });

    const before = openDescriptors();
    let most = before;
    let searching = true;
    const sampler = (async () => {
      while (searching) {
        most = Math.max(most, openDescriptors());
        await nextTurn();
      }
    })();
    const result = await call(tool, { pattern: "needle" });
    searching = false;
    await sampler;

    expect(most - before).toBeLessThan(150);
    const edge = `${levels("e", 100).join("/")}/edge.txt:1: needle`;
    expect(result).toEqual({ ok: true, output: `${edge}\ntop.txt:1: needle` });
  }, 60_000);
});
