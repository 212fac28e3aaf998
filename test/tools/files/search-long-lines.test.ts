/**
 * search_files on lines whose report outgrows what the service can hold although the file is
 * under maxFileBytes: ripgrep's JSON report of a match lists every submatch (12 MB of "a" searched
 * for `a` is a report of some 900 MB, which readline threw uncaught, ending the service), and a
 * match kept its whole line (200 matches on 20 MB lines held 4 GB).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import { onBoundedLines } from "../../../src/tools/files/bounded-lines.js";
import { LINE_TOO_LONG, matchText } from "../../../src/tools/files/search-backends.js";
import { createSearchFilesTool } from "../../../src/tools/files/search-files.js";
import { searchWithJs } from "../../../src/tools/files/search-js.js";
import { call, makeContext } from "../support/tool-context.js";
import { useTempWorkspace } from "../support/tool-workspace.js";

const temp = useTempWorkspace("search-long-lines-");

describe("search_files on lines with a huge report", () => {
  it("answers a match whose ripgrep report is over 16 MiB with its file, not its line, and keeps going", async () => {
    // 400,000 submatches of some 45 characters each: an 18 MB report for a 400 KB file.
    await writeFile(path.join(temp.dir, "a.txt"), `${"a".repeat(400_000)}\n`);
    await writeFile(path.join(temp.dir, "b.txt"), "a short one\n");
    const tool = createSearchFilesTool({ workspace: temp.workspace, useRipgrep: true });
    expect(await call(tool, { pattern: "a" })).toEqual({
      ok: true,
      output: `a.txt: ${LINE_TOO_LONG}\nb.txt:1: a short one`,
    });
  });
});

describe("search_files on lines with many submatches", () => {
  it("parses no report's submatches, so no report holds the event loop", async () => {
    // Six lines of 290,000 "a": a report of some 15 MB listing 290,000 submatches each, under
    // 16 MiB so read whole. Parsing one whole held the event loop some 350 ms; its head (path,
    // line, line number) is some 290 KB.
    const line = "a".repeat(290_000);
    await writeFile(path.join(temp.dir, "a.txt"), `${line}\n`.repeat(6));
    const tool = createSearchFilesTool({ workspace: temp.workspace, useRipgrep: true });
    const realParse = JSON.parse;
    let longestParsed = 0;
    const parse = vi.spyOn(JSON, "parse").mockImplementation((text, reviver) => {
      longestParsed = Math.max(longestParsed, text.length);
      return realParse(text, reviver);
    });
    const result = await call(tool, { pattern: "a" }).finally(() => parse.mockRestore());
    expect(result.ok).toBe(true);
    expect(result.output.split("\n").slice(0, 6)).toEqual(
      [1, 2, 3, 4, 5, 6].map((n) => expect.stringMatching(new RegExp(`^a\\.txt:${n}: a+…$`))),
    );
    expect(longestParsed).toBeGreaterThan(line.length);
    expect(longestParsed).toBeLessThan(2 * line.length);
  });
});

describe("bounded lines", () => {
  it("keeps the first maxChars of a line, marks it cut, drops the rest and reads on", async () => {
    const stream = new PassThrough();
    const lines: Array<[string, boolean]> = [];
    const ended = new Promise((resolve) => stream.on("end", resolve));
    onBoundedLines(stream, 5, (line, whole) => lines.push([line, whole]));
    stream.write("abc\nabcdef");
    stream.write("ghij\nxy");
    stream.end("z");
    await ended;
    expect(lines).toEqual([
      ["abc", true],
      ["abcde", false],
      ["xyz", true],
    ]);
  });
});

describe("a match's text", () => {
  it("keeps at most 10,000 characters of its line, never cutting a character in two", () => {
    expect(matchText("x".repeat(20_000))).toBe("x".repeat(10_000));
    expect(matchText(`${"x".repeat(9_999)}😀tail`)).toBe("x".repeat(9_999));
    expect(matchText("short")).toBe("short");
  });

  it("is kept that short by the JS engine too, however long the matching line", async () => {
    await writeFile(path.join(temp.dir, "long.txt"), `needle ${"b".repeat(50_000)}\n`);
    const target = await temp.workspace.forRequest(makeContext({ root: temp.dir }).request).resolve(".");
    const matches = await searchWithJs({
      pattern: "needle",
      target,
      limit: 10,
      maxFileBytes: 1_000_000,
      hidden: () => false,
      signal: new AbortController().signal,
    });
    expect(matches.map((match) => [match.line, match.text.length])).toEqual([[1, 10_000]]);
  });
});
