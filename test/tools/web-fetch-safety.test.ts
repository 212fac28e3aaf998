import { link, mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { GrantSet } from "../../src/engine/permissions/grants.js";
import { PermissionEngine } from "../../src/engine/permissions/permission-engine.js";
import { markdownLiteral } from "../../src/core/person-text.js";
import { callCategory } from "../../src/core/tool.js";
import { createWebFetchTool } from "../../src/tools/web/web-fetch.js";
import { type RecordingHttpServer, startRecordingHttpServer } from "../support/recording-http-server.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
import { collect, makeHarness, makeRequest, resultOf } from "../engine/helpers/harness.js";
import { call, makeContext, tempDir } from "./support/tool-context.js";
import { toolWorkspace } from "./support/tool-workspace.js";

const hits: string[] = [];
let server: RecordingHttpServer;
let port: string;

beforeAll(async () => {
  server = await startRecordingHttpServer((req, res) => {
    hits.push(`${req.headers.host?.split(":")[0]}${req.path}`);
    const url = new URL(req.path ?? "/", "http://local");
    if (url.pathname === "/redirect") {
      res.writeHead(302, { location: url.searchParams.get("to") ?? "/page" }).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/plain" }).end("downloaded body");
  });
  port = new URL(server.url).port;
});

afterAll(async () => {
  await server.close();
});

let ws: string;
let outside: string;
const cleanups: Array<() => Promise<void>> = [];
beforeEach(async () => {
  hits.length = 0;
  const dirs = await Promise.all([tempDir("web-ws-"), tempDir("web-out-")]);
  cleanups.push(...dirs.map((d) => d.cleanup));
  [ws, outside] = dirs.map((d) => d.dir) as [string, string];
});
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

/** Every `.test` name is this machine's test server, treated as public. */
const webFetch = () =>
  createWebFetchTool({
    workspace: toolWorkspace({ root: ws }),
    resolver: async () => ["127.0.0.1"],
    allowAddress: () => true,
  });
const at = (host: string, rest: string) => `http://${host}:${port}${rest}`;
const redirectTo = (from: string, to: string) => at(from, `/redirect?to=${encodeURIComponent(to)}`);

describe("web_fetch save_to is a write", () => {
  it("is categorised as a write only when it saves", () => {
    const tool = webFetch();
    expect(callCategory(tool, { url: at("a.test", "/") })).toBe("network");
    expect(callCategory(tool, { url: at("a.test", "/"), save_to: "f.txt" })).toBe("write");
  });

  it("asks in interactive mode even with a domain grant; a plain fetch of the domain does not", () => {
    const permissions = new PermissionEngine({ allowedCommandPrefixes: [], hardDenyPatterns: [] });
    const context = {
      mode: "interactive" as const,
      grants: new GrantSet([{ kind: "domain", domain: `a.test:${port}` }]),
      facts: { downloadedFiles: new Set<string>() },
      provenance: { kind: "user" as const },
    };
    const tool = webFetch();
    expect(permissions.decide(tool, { url: at("a.test", "/") }, context).action).toBe("allow");
    expect(permissions.decide(tool, { url: at("a.test", "/"), save_to: "f.txt" }, context)).toMatchObject({
      action: "ask",
      reason: "web_fetch (write) needs approval",
    });
  });

  it("says overwrite on the card when the file exists", async () => {
    await writeFile(path.join(ws, "data.csv"), "old");
    const tool = webFetch();
    const context = makeContext({ root: ws });
    expect((await tool.preview?.({ url: at("a.test", "/f"), save_to: "data.csv" }, context))?.summary).toBe(
      "Fetch a URL and overwrite data\\.csv (it exists)",
    );
    expect((await tool.preview?.({ url: at("a.test", "/f"), save_to: "new.csv" }, context))?.summary).toBe(
      "Fetch a URL and save it to new\\.csv",
    );
    const saved = await call(tool, { url: at("a.test", "/f"), save_to: "data.csv" }, context);
    expect(saved.output).toMatch(/to data\.csv \(replacing the file that was there\)\.$/);
    expect(await readFile(path.join(ws, "data.csv"), "utf8")).toBe("downloaded body");
  });

  it("refuses .git/ in every spelling, before fetching anything", async () => {
    await mkdir(path.join(ws, ".git/hooks"), { recursive: true });
    const tool = webFetch();
    for (const target of [".git/hooks/pre-commit", "./.git/config", "sub/../.git/hooks/post-merge"]) {
      const result = await call(tool, { url: at("a.test", "/hook"), save_to: target });
      expect(result).toEqual({ ok: false, output: expect.stringMatching(/inside a \.git folder/) });
      const card = await tool.preview?.({ url: at("a.test", "/hook"), save_to: target }, makeContext());
      expect(card?.summary).toMatch(/will fail: .* inside a \\\.git folder/);
    }
    expect(hits).toEqual([]);
  });

  it("refuses a steering file (.coworker/, AGENTS.md) in every spelling and through links, before fetching anything", async () => {
    await mkdir(path.join(ws, ".coworker/skills/deploy"), { recursive: true });
    await writeFile(path.join(ws, ".coworker/skills/deploy/SKILL.md"), "old skill");
    await mkdir(path.join(ws, "docs"));
    await writeFile(path.join(ws, "docs/conventions.md"), "be kind");
    await symlink("docs/conventions.md", path.join(ws, "AGENTS.md"));
    await symlink(".coworker/skills/deploy", path.join(ws, "deploy-skill"));
    const steers = (shown: string) =>
      `${shown} steers every later session, so web_fetch does not save there: fetch it without save_to and write it with write_file, which asks a person first`;
    const tool = webFetch();
    for (const [target, shown] of [
      [".coworker/skills/new/SKILL.md", ".coworker/skills/new/SKILL.md"],
      [
        "./.coworker/../.Coworker/skills/deploy/SKILL.md",
        ".Coworker/skills/deploy/SKILL.md (.coworker/skills/deploy/SKILL.md)",
      ],
      [".coworker/notes.txt", ".coworker/notes.txt"],
      ["AGENTS.md", "docs/conventions.md (AGENTS.md)"],
      ["docs/conventions.md", "docs/conventions.md (AGENTS.md)"],
      ["deploy-skill/SKILL.md", ".coworker/skills/deploy/SKILL.md"],
    ] as const) {
      const context = makeContext({ root: ws });
      expect(await call(tool, { url: at("a.test", "/f"), save_to: target }, context), target).toEqual({
        ok: false,
        output: steers(shown),
      });
      const card = await tool.preview?.({ url: at("a.test", "/f"), save_to: target }, context);
      expect(card?.summary).toBe(`Fetch a URL — will fail: ${markdownLiteral(steers(shown))}`);
    }
    expect(hits).toEqual([]);
    expect(await readFile(path.join(ws, ".coworker/skills/deploy/SKILL.md"), "utf8")).toBe("old skill");
    expect(await readFile(path.join(ws, "docs/conventions.md"), "utf8")).toBe("be kind");
    expect(await readdir(path.join(ws, ".coworker"))).toEqual(["skills"]);
    for (const lookalike of ["docs/AGENTS.md", "coworker/skills/x/SKILL.md", ".coworker.md"])
      expect((await call(tool, { url: at("a.test", "/f"), save_to: lookalike })).ok, lookalike).toBe(true);
  });

  it("refuses credential paths and hard links to outside files", async () => {
    await writeFile(path.join(outside, "victim.txt"), "outside");
    await link(path.join(outside, "victim.txt"), path.join(ws, "shared.txt"));
    const tool = webFetch();
    expect((await call(tool, { url: at("a.test", "/f"), save_to: ".env" })).output).toMatch(/off limits/);
    expect((await call(tool, { url: at("a.test", "/f"), save_to: "shared.txt" })).output).toMatch(
      /2 hard links/,
    );
    expect(await readFile(path.join(outside, "victim.txt"), "utf8")).toBe("outside");
  });
});

describe("web_fetch checks every redirect hop's host", () => {
  it("follows same-host redirects without asking and refuses a new host when nobody can authorise it", async () => {
    const tool = webFetch();
    const same = await call(tool, { url: redirectTo("a.test", "/page") });
    expect(same.ok).toBe(true);
    const other = await call(tool, { url: redirectTo("a.test", at("b.test", "/page")) });
    expect(other).toEqual({
      ok: false,
      output: expect.stringMatching(
        /redirected to http:\/\/b\.test:\d+\/page, a host this call was not approved for/,
      ),
    });
    expect(hits.filter((hit) => hit.startsWith("b.test"))).toEqual([]);
  });

  it("puts the new host to the permission engine with the hop's URL", async () => {
    const tool = webFetch();
    const asked: Array<[Readonly<Record<string, unknown>>, string]> = [];
    const allow = {
      ...makeContext(),
      reauthorize: async (changed: Readonly<Record<string, unknown>>, hop: string) => {
        asked.push([changed, hop]);
        return true;
      },
    };
    const result = await call(tool, { url: redirectTo("a.test", at("b.test", "/page")) }, allow);
    expect(result.ok).toBe(true);
    expect(asked).toEqual([[{ url: at("b.test", "/page") }, "redirect-1"]]);
  });

  it("in a turn: a hop to an ungranted domain raises its own card; deny stops, always_domain grants", async () => {
    const tool = { ...webFetch(), name: "fetch_web" };
    const url = redirectTo("granted.test", at("elsewhere.test", "/page"));
    const h = makeHarness({
      steps: [
        toolStep(["f1", "fetch_web", { url }]),
        toolStep(["f2", "fetch_web", { url }]),
        textStep("done"),
      ],
      grants: [{ kind: "domain", domain: `granted.test:${port}` }],
      extraTools: [tool],
    });
    const turn = collect(h.engine.run(makeRequest({ mode: "interactive" })));
    const first = await h.broker.next("f1~redirect-1");
    expect(first.kind === "approval" && first.request).toMatchObject({
      tool: "fetch_web",
      args: { url: at("elsewhere.test", "/page") },
      alwaysOptions: ["always_domain"],
    });
    h.broker.approve("f1~redirect-1", "deny");
    const second = await h.broker.next("f2~redirect-1");
    expect(second.kind).toBe("approval");
    h.broker.approve("f2~redirect-1", "always_domain");
    await turn;
    expect(resultOf(h.history.messages, "f1")).toMatch(/a host this call was not approved for/);
    expect(resultOf(h.history.messages, "f2")).toMatch(/downloaded body/);
    expect(h.grants.hasDomain(`elsewhere.test:${port}`)).toBe(true);
    expect(hits.filter((hit) => hit.startsWith("elsewhere.test"))).toEqual(["elsewhere.test/page"]);
  });
});
