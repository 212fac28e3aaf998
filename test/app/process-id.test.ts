/** Process id: host, pid and a random tail, never a "/" (lease tokens use it). */
import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { newProcessId } from "../../src/app/process-id.js";

describe("newProcessId", () => {
  it("is host, pid and a random tail that differs between calls", () => {
    const a = newProcessId();
    expect(a.startsWith(`${hostname().replaceAll("/", "-")}-${process.pid}-`)).toBe(true);
    expect(a).not.toContain("/");
    expect(newProcessId()).not.toBe(a);
  });
});
