/**
 * A port other than the scheme's default is part of what a web approval names: an approval for a
 * host does not reach another service on that host, neither on the model's own call nor through a
 * redirect, while grants for a bare host keep covering the default ports.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GrantSet } from "../../../src/engine/permissions/grants.js";
import { PermissionEngine } from "../../../src/engine/permissions/permission-engine.js";
import { grantHost } from "../../../src/tools/web/grant-host.js";
import { createWebFetchTool } from "../../../src/tools/web/web-fetch.js";
import { type RecordingHttpServer, startRecordingHttpServer } from "../../support/recording-http-server.js";
import { call, makeContext, tempDir } from "../support/tool-context.js";
import { toolWorkspace } from "../support/tool-workspace.js";

let site: RecordingHttpServer;
let service: RecordingHttpServer;
let ws: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  site = await startRecordingHttpServer((req, res) => {
    const url = new URL(req.path ?? "/", "http://local");
    if (url.pathname === "/redirect") {
      res.writeHead(302, { location: url.searchParams.get("to") ?? "/page" }).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/plain" }).end("site page");
  });
  service = await startRecordingHttpServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/plain" }).end("internal service");
  });
  ({ dir: ws, cleanup } = await tempDir("web-port-"));
});

afterAll(async () => {
  await Promise.all([site.close(), service.close(), cleanup()]);
});

/** Every `.test` name is this machine's test servers, treated as public. */
const webFetch = () =>
  createWebFetchTool({
    workspace: toolWorkspace({ root: ws }),
    resolver: async () => ["127.0.0.1"],
    allowAddress: () => true,
  });
const portOf = (server: RecordingHttpServer) => new URL(server.url).port;
const on = (server: RecordingHttpServer, rest: string) => `http://a.test:${portOf(server)}${rest}`;
const redirectTo = (to: string) => on(site, `/redirect?to=${encodeURIComponent(to)}`);

describe("grantHost", () => {
  it("is the bare host on the scheme's default port and host:port on any other", () => {
    expect(grantHost(new URL("https://Example.COM./a"))).toBe("example.com");
    expect(grantHost(new URL("https://example.com:443/a"))).toBe("example.com");
    expect(grantHost(new URL("http://example.com:80/a"))).toBe("example.com");
    expect(grantHost(new URL("http://example.com:443/a"))).toBe("example.com:443");
    expect(grantHost(new URL("http://example.com.:6379/"))).toBe("example.com:6379");
    expect(grantHost(new URL("http://[::1]:8080/"))).toBe("[::1]:8080");
  });
});

describe("a domain grant and ports", () => {
  const permissions = new PermissionEngine({ allowedCommandPrefixes: [], hardDenyPatterns: [] });
  const decide = (url: string, grants: GrantSet) =>
    permissions.decide(
      webFetch(),
      { url },
      {
        mode: "interactive",
        grants,
        facts: { downloadedFiles: new Set<string>() },
        provenance: { kind: "user" },
      },
    );

  it("a grant for a bare host covers its default ports, not another port", () => {
    const grants = new GrantSet([{ kind: "domain", domain: "example.com" }]);
    expect(decide("https://example.com/a", grants).action).toBe("allow");
    expect(decide("http://example.com:80/a", grants).action).toBe("allow");
    expect(decide("https://example.com:443/a", grants).action).toBe("allow");
    expect(decide("http://example.com:6379/", grants)).toMatchObject({
      action: "ask",
      reason: "web_fetch (network) wants to reach example.com:6379",
      alwaysOptions: ["always_domain"],
    });
  });

  it("a grant for host:port covers that port only", () => {
    const grants = new GrantSet([{ kind: "domain", domain: "example.com:8080" }]);
    expect(decide("http://example.com:8080/a", grants).action).toBe("allow");
    expect(decide("https://example.com/a", grants).action).toBe("ask");
    expect(decide("http://example.com:8081/a", grants).action).toBe("ask");
  });
});

describe("a redirect to another port of an authorised host", () => {
  it("is refused when nobody can authorise it, and the other port is never reached", async () => {
    const result = await call(webFetch(), { url: redirectTo(on(service, "/")) });
    expect(result).toEqual({
      ok: false,
      output: expect.stringMatching(/a host this call was not approved for; the redirect was not followed/),
    });
    expect(service.received).toEqual([]);
  });

  it("is put to the permission engine with the hop's URL", async () => {
    const asked: Array<Readonly<Record<string, unknown>>> = [];
    const context = {
      ...makeContext(),
      reauthorize: async (changed: Readonly<Record<string, unknown>>) => {
        asked.push(changed);
        return true;
      },
    };
    const result = await call(webFetch(), { url: redirectTo(on(service, "/")) }, context);
    expect(asked).toEqual([{ url: on(service, "/") }]);
    expect(result.output).toContain("internal service");
  });

  it("is followed without asking when it stays on the same port", async () => {
    const asked: unknown[] = [];
    const context = {
      ...makeContext(),
      reauthorize: async (changed: Readonly<Record<string, unknown>>) => {
        asked.push(changed);
        return false;
      },
    };
    const result = await call(webFetch(), { url: redirectTo(on(site, "/page")) }, context);
    expect(asked).toEqual([]);
    expect(result.output).toContain("site page");
  });
});
