/**
 * web_fetch's one deadline and the turn's interrupt cover each hop's DNS lookup, not only its
 * request: a DNS server that never answers must not keep a call past its time limit or past stop.
 * The resolver here never answers, so a call that waits for it fails by vitest's own timeout.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createWebFetchTool } from "../../../src/tools/web/web-fetch.js";
import { call, makeContext, tempDir } from "../support/tool-context.js";
import { toolWorkspace } from "../support/tool-workspace.js";

let ws: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir: ws, cleanup } = await tempDir("web-deadline-"));
});
afterEach(async () => {
  await cleanup();
});

/** A resolver that never answers; `asked` settles when a lookup starts, with the signal it was given. */
function silentResolver() {
  let started: (signal: AbortSignal | undefined) => void = () => {};
  const asked = new Promise<AbortSignal | undefined>((resolve) => {
    started = resolve;
  });
  const resolver = (_host: string, signal?: AbortSignal): Promise<string[]> => {
    started(signal);
    return new Promise(() => {});
  };
  return { resolver, asked };
}

describe("web_fetch's DNS lookup", () => {
  it("ends at the call's deadline with the timeout result when DNS never answers", async () => {
    const { resolver } = silentResolver();
    const tool = createWebFetchTool({ workspace: toolWorkspace({ root: ws }), resolver, timeoutMs: 50 });
    expect(await call(tool, { url: "http://slow-dns.test/" })).toEqual({
      ok: false,
      output: "the fetch timed out after 50 ms",
    });
  });

  it("ends as interrupted when the turn is stopped during the lookup", async () => {
    const { resolver, asked } = silentResolver();
    const tool = createWebFetchTool({ workspace: toolWorkspace({ root: ws }), resolver });
    const context = makeContext();
    const result = call(tool, { url: "http://slow-dns.test/" }, context);
    const signal = await asked;
    context.controller.abort();
    expect(await result).toEqual({ ok: false, output: "the fetch was interrupted" });
    expect(signal?.aborted).toBe(true);
  });

  it("does not look up at all when the turn was already stopped", async () => {
    const resolved: string[] = [];
    const tool = createWebFetchTool({
      workspace: toolWorkspace({ root: ws }),
      resolver: async (host) => {
        resolved.push(host);
        return ["93.184.215.14"];
      },
    });
    const context = makeContext();
    context.controller.abort();
    expect(await call(tool, { url: "http://stopped.test/" }, context)).toEqual({
      ok: false,
      output: "the fetch was interrupted",
    });
    expect(resolved).toEqual([]);
  });
});
