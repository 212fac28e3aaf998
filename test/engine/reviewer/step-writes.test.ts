/**
 * stepWrittenFiles over a step of many calls: every call's files are what a straightforward
 * reading of the calls before it gives (their writes, nearest first), and the step's writes are
 * read once each to answer all of its calls, not once per call (a step of n calls is not n²).
 */
import { describe, expect, it } from "vitest";
import { stepWrittenFiles } from "../../../src/engine/reviewer/step-writes.js";

/** The files the calls before `index` write, nearest first, read off the step directly. */
function reference(written: readonly (string | undefined)[], index: number): string[] {
  const files: string[] = [];
  for (let i = index - 1; i >= 0; i--) {
    const file = written[i];
    if (file !== undefined) files.push(file);
  }
  return files;
}

/** A step of `calls` calls where some write a file (some the same file again) and some none. */
function manyCalls(calls: number): (string | undefined)[] {
  return Array.from({ length: calls }, (_, i) => (i % 3 === 0 ? undefined : `file-${i % 17}.sh`));
}

describe("stepWrittenFiles", () => {
  it("gives every call of a 500-call step the writes of the calls before it, nearest first", () => {
    const written = manyCalls(500);
    const writtenFor = stepWrittenFiles(written);
    for (let index = 0; index <= written.length; index++)
      expect(writtenFor(index)).toEqual(reference(written, index));
  });

  it("reads each of the step's writes once to answer all of its calls", () => {
    const written = manyCalls(500);
    let reads = 0;
    const counted = new Proxy(written, {
      get(target, key, receiver) {
        if (typeof key === "string" && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    const writtenFor = stepWrittenFiles(counted);
    for (let index = 0; index < written.length; index++) writtenFor(index);
    expect(reads).toBeLessThanOrEqual(written.length);
  });

  it("gives the first call nothing and a step without writes nothing", () => {
    expect(stepWrittenFiles(["a.sh", "b.sh"])(0)).toEqual([]);
    expect(stepWrittenFiles([undefined, undefined])(1)).toEqual([]);
  });
});
