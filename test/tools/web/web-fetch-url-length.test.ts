/**
 * web_fetch refuses a URL over 8,192 characters, the model's or a redirect's: no real page's
 * address is that long, and a padded one would only fill the card (and the file posted beside it),
 * the logs and the grants. The limit counts the URL as the parser writes it — escapes included,
 * so "é" in a path counts as its six characters "%C3%A9" — since that is what the card shows.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWebFetchTool } from "../../../src/tools/web/web-fetch.js";
import { call } from "../support/tool-context.js";
import { toolWorkspace } from "../support/tool-workspace.js";

const webFetch = () =>
  createWebFetchTool({ workspace: toolWorkspace({ root: "/nonexistent-ws" }), allowPrivate: true });

let server: http.Server;
let base: string;
beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === "/long") res.writeHead(302, { location: `/${"a".repeat(9_000)}` }).end();
    else res.writeHead(200, { "content-type": "text/plain" }).end("fetched");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("web_fetch's URL length limit", () => {
  it("refuses a URL over 8,192 characters, naming the limit", () => {
    const schema = webFetch().inputSchema;
    const at = (length: number) =>
      `https://example.com/${"a".repeat(length - "https://example.com/".length)}`;
    expect(schema.safeParse({ url: at(8_192) }).success).toBe(true);
    const refused = schema.safeParse({ url: at(8_193) });
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.message).toMatch(/^A URL is at most 8,192 characters/);
  });

  it("counts the URL as the parser writes it: escapes included", () => {
    const url = `https://example.com/${"é".repeat(2_000)}`;
    expect(url.length).toBeLessThan(8_192);
    expect(webFetch().inputSchema.safeParse({ url }).success).toBe(false);
  });

  it("does not follow a redirect to a URL over the limit", async () => {
    expect(await call(webFetch(), { url: `${base}/short` })).toMatchObject({ ok: true });
    expect(await call(webFetch(), { url: `${base}/long` })).toEqual({
      ok: false,
      output: `${base}/long redirected to a URL over 8,192 characters; it was not followed`,
    });
  });
});
