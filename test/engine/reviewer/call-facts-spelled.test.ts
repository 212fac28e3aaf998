/**
 * callFacts' reading of which files a call's arguments spell: each argument is cut into words once
 * for every file of a check (it was cut once per file: 10,000 recorded files against a 15 kB
 * argument held the event loop seconds per reviewed call), with the same answers as before.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { DOWNLOAD_RECORD_FULL } from "../../../src/engine/permissions/download-execution.js";
import { callFacts } from "../../../src/engine/reviewer/review-input.js";

/** The rule as it was (one split of every argument per file), to compare answers with. */
function mentionedBefore(args: Readonly<Record<string, unknown>>, file: string): boolean {
  const trim = (text: string) => text.replace(/\/+$/, "");
  const path = trim(file.replace(/^\.\//, ""));
  const name = path.slice(path.lastIndexOf("/") + 1);
  if (name === "") return false;
  const strings = Object.values(args).filter((v): v is string => typeof v === "string");
  return strings.some((value) =>
    value
      .split(/[\s;&|<>()`'"=]+/)
      .map((token) => trim(token.replace(/^\.\//, "")))
      .some((token) => token === path || token.endsWith(`/${path}`) || token === name),
  );
}

const FILES = [
  "a.sh",
  "./a.sh",
  "dir/a.sh",
  "/work/dir/a.sh",
  "/work/repo/",
  "repo/",
  "./",
  "/",
  "",
  "x/y/z.py",
  "/abs/only.bin",
  "b.txt",
  "deep/er/b.txt",
];

const ARGS: readonly Record<string, unknown>[] = [
  { command: "sh a.sh" },
  { command: "sh ./a.sh" },
  { command: "bash other/dir/a.sh" },
  { command: "bash /work/dir/a.sh" },
  { command: "bash x//work/dir/a.sh" },
  { command: "ls /work/repo/ && cat repo///" },
  { command: "cd repo && ./run" },
  { command: "python3 -c \"exec(open('x/y/z.py').read())\"" },
  { command: "python3 y/z.py; cat z.py" },
  { command: "cat /abs/only.bin", path: "deep/er/b.txt", count: 3 },
  { path: "er/b.txt" },
  { path: "b.txt.bak" },
  { command: "echo /" },
  { command: "echo ./" },
  { command: "" },
  { url: "https://x.test/dir/a.sh?x=1" },
  { command: "VAR=a.sh env" },
  { command: "cat dir/a.sh/" },
  { command: "cat work/dir/a.sh" },
];

afterEach(() => vi.restoreAllMocks());

describe("callFacts: the files a call spells", () => {
  it("spells the same files as before, for every file and argument", () => {
    for (const args of ARGS)
      for (const file of FILES) {
        const facts = callFacts([], { downloadedFiles: new Set([file]) }, args, []);
        expect({ args, file, spelled: facts.length === 1 }).toEqual({
          args,
          file,
          spelled: mentionedBefore(args, file),
        });
      }
  });

  it("spells the same files as before, for random paths and words", () => {
    let seed = 7;
    const pick = (text: string) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return text[seed % text.length] as string;
    };
    const random = (alphabet: string, length: number) =>
      Array.from({ length: 1 + (Math.abs(seed) % length) }, () => pick(alphabet)).join("");
    for (let round = 0; round < 2_000; round++) {
      const file = random("ab/./", 8);
      const args = { command: random("ab/. ;'", 24), path: random("ab/.", 6) };
      const spelled = callFacts([], { downloadedFiles: new Set([file]) }, args, []).length === 1;
      expect({ file, args, spelled }).toEqual({ file, args, spelled: mentionedBefore(args, file) });
    }
  });

  it("cuts each string argument once, however many files it is compared with", () => {
    const command = `echo ${Array.from({ length: 200 }, (_, i) => `w${i}/x`).join(" ")} f7.sh`;
    const files = new Set(Array.from({ length: 1_000 }, (_, i) => `/ws/dl/f${i}.sh`));
    const split = vi.spyOn(String.prototype, "split");
    const facts = callFacts([], { downloadedFiles: files }, { command }, []);
    const cuts = split.mock.contexts.filter((self) => String(self) === command).length;
    expect(cuts).toBe(1);
    expect(facts).toEqual(['"/ws/dl/f7.sh" was downloaded into the workspace by the agent.']);
  });

  // The tails of a word after each `/` were kept whole in a Set (each hashed whole), as long as the
  // longest recorded path: two 16 kB words of `a/a/…` against a recorded 20 kB path sliced 128
  // million characters, a 256 kB argument held the loop 1.6 s. They are now hashed in one pass back.
  it("reads a long word against a long recorded path in work linear in their lengths", () => {
    const recorded = `/ws/${"a/".repeat(10_000)}x.sh`;
    const content = `${"a/".repeat(8_000)}y.sh ${"a/".repeat(8_000)}x.sh`;
    const slice = vi.spyOn(String.prototype, "slice");
    const facts = callFacts([], { downloadedFiles: new Set([recorded]) }, { content }, []);
    const sliced = slice.mock.results.reduce((sum, { value }) => sum + String(value).length, 0);
    expect(sliced).toBeLessThan(10 * (recorded.length + content.length));
    expect(facts).toEqual([]);
    expect(callFacts([], { downloadedFiles: new Set([recorded]) }, { content: `z${recorded}` }, [])).toEqual(
      [],
    );
    expect(
      callFacts([], { downloadedFiles: new Set([recorded]) }, { content: `q/${recorded}` }, []),
    ).toHaveLength(1);
    const tail = callFacts([], { downloadedFiles: new Set(["a/a/x.sh"]) }, { content }, []);
    expect(tail).toEqual(['"a/a/x.sh" was downloaded into the workspace by the agent.']);
  });

  it("shows no fact for the mark of a full record, which is no file", () => {
    const downloadedFiles = new Set([DOWNLOAD_RECORD_FULL, "get.sh"]);
    const command = "sh get.sh; cat *";
    expect(callFacts([], { downloadedFiles }, { command }, [], command)).toEqual([
      '"get.sh" was downloaded into the workspace by the agent.',
    ]);
  });
});
