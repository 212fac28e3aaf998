/**
 * Nothing of web_fetch reaches the network for a host before that host is approved — not even a
 * DNS lookup, which already tells the name's DNS server the name (a secret spelled into a
 * subdomain: `secret.attacker.test`). The card of a first hop is built from the arguments alone;
 * a redirect to a new host is put to the permission engine (`reauthorize`) before its lookup.
 * The resolver here counts lookups, so each test sees which happened before the decision.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createWebFetchTool, type WebFetchOptions } from "../../../src/tools/web/web-fetch.js";
import { type RecordingHttpServer, startRecordingHttpServer } from "../../support/recording-http-server.js";
import { call, makeContext, tempDir } from "../support/tool-context.js";
import { toolWorkspace } from "../support/tool-workspace.js";

const hits: string[] = [];
let server: RecordingHttpServer;
let port: string;
let ws: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  server = await startRecordingHttpServer((req, res) => {
    hits.push(`${req.headers.host?.split(":")[0]}${req.path}`);
    const url = new URL(req.path ?? "/", "http://local");
    if (url.pathname === "/redirect") {
      res.writeHead(302, { location: url.searchParams.get("to") ?? "/" }).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/plain" }).end("the page");
  });
  port = new URL(server.url).port;
  ({ dir: ws, cleanup } = await tempDir("web-approval-dns-"));
});

afterAll(async () => {
  await server.close();
  await cleanup();
});

let looked: string[];
beforeEach(() => {
  hits.length = 0;
  looked = [];
});

/** Every name resolves to the local server; each lookup is recorded. */
const resolver = async (host: string): Promise<string[]> => {
  looked.push(host);
  return ["127.0.0.1"];
};

const webFetch = (options: Partial<WebFetchOptions> = {}) =>
  createWebFetchTool({ workspace: toolWorkspace({ root: ws }), resolver, allowPrivate: true, ...options });

const at = (host: string, path: string) => `http://${host}:${port}${path}`;
const redirectTo = (host: string, target: string) => at(host, `/redirect?to=${encodeURIComponent(target)}`);

/** A context whose permission engine answers `answer` for a hop, noting the lookups made by then. */
function deciding(answer: boolean) {
  const lookedWhenAsked: string[][] = [];
  const context = {
    ...makeContext(),
    reauthorize: async () => {
      lookedWhenAsked.push([...looked]);
      return answer;
    },
  };
  return { context, lookedWhenAsked };
}

describe("web_fetch before approval", () => {
  it("builds the first hop's card without a lookup or a connection", async () => {
    const tool = webFetch();
    await tool.preview?.({ url: at("secret.attacker.test", "/") }, makeContext());
    await tool.preview?.({ url: at("secret.attacker.test", "/"), save_to: "page.txt" }, makeContext());
    expect(looked).toEqual([]);
    expect(hits).toEqual([]);
  });

  it("does not look up a redirect's new host before the hop is decided, nor ever when it is refused", async () => {
    const { context, lookedWhenAsked } = deciding(false);
    const result = await call(
      webFetch(),
      { url: redirectTo("start.test", at("secret.attacker.test", "/page")) },
      context,
    );
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/a host this call was not approved for/);
    expect(lookedWhenAsked).toEqual([["start.test"]]);
    expect(looked).toEqual(["start.test"]);
    expect(hits.filter((hit) => hit.startsWith("secret.attacker.test"))).toEqual([]);
  });

  it("looks the new host up only once the hop is approved", async () => {
    const { context, lookedWhenAsked } = deciding(true);
    const result = await call(
      webFetch(),
      { url: redirectTo("start.test", at("secret.attacker.test", "/page")) },
      context,
    );
    expect(result.ok).toBe(true);
    expect(lookedWhenAsked).toEqual([["start.test"]]);
    expect(looked).toEqual(["start.test", "secret.attacker.test"]);
    expect(hits).toContain("secret.attacker.test/page");
  });

  it("refuses a redirect to a refused address without asking anyone", async () => {
    const { context, lookedWhenAsked } = deciding(true);
    const result = await call(
      webFetch({ allowPrivate: false, allowAddress: (_address, hop) => hop === 0 }),
      { url: redirectTo("start.test", at("127.0.0.1", "/secret")) },
      context,
    );
    expect(result).toEqual({
      ok: false,
      output: "refusing to fetch a loopback address: web_fetch only reaches public internet addresses",
    });
    expect(lookedWhenAsked).toEqual([]);
    expect(hits.filter((hit) => hit.includes("/secret"))).toEqual([]);
  });
});
