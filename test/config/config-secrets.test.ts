/**
 * Loading a configuration registers nothing; registering a loaded configuration's secrets hands them
 * to the redactor: afterwards, text holding one shows `[redacted]` instead, also for secrets no
 * token pattern knows (a signing secret, a webhook secret, a store password, an MCP server's
 * credentials, every env value and header of an MCP server whatever its name, NOTION_KEY included);
 * an MCP header's credential without its scheme, and a Basic one's password, too (not the last word
 * of another two-word header), and the keys in a
 * remote MCP server's URL (path, query, password), though not its long parts made of words;
 * an MCP server's short env values ("eu", "1") are left alone, and a store password that cannot be
 * decoded (a bare %) is taken as written. A short webhook secret is refused.
 */
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { registerConfigSecrets } from "../../src/config/config-secrets.js";
import { loadConfig } from "../../src/config/load-config.js";
import { createLogger } from "../../src/logging/logger.js";
import { scrubSecrets } from "../../src/logging/redact.js";

function project(yaml: string): string {
  const cwd = mkdtempSync(join(tmpdir(), "config-secrets-"));
  mkdirSync(join(cwd, "config"));
  writeFileSync(join(cwd, "config/coworker.yaml"), yaml);
  return cwd;
}

/** A logger at info writing its JSON lines into `lines`. */
function capturingLogger() {
  const lines: string[] = [];
  const logger = createLogger({
    level: "info",
    destination: { write: (line: string) => void lines.push(line) },
    pretty: false,
  });
  return { logger, lines };
}

const SIGNING = "0f9e8d7c6b5a49382716aabbccddeeff";
const WEBHOOK = "tg-webhook-Secret_0123456789";
const STORE = "store-pass-2f8c91";
const MCP_TOKEN = "mcp-credential-77a1b2c3";
const MCP_HEADER = "Bearer-ish-0b1c2d3e4f";
// Named so that no secret-name rule knows it: an MCP server's env values count whatever their name.
const MCP_NOTION = "ntn_4a5b6c7d8e9f0a1b";
const MCP_LANG = "en-GB-oxendict";

describe("secrets of a loaded configuration", () => {
  it("are registered by registerConfigSecrets, never by loading; short MCP env values are not", () => {
    const cwd = project(`
model: { api_key: sk-test-0123456789abcdef }
store_url: "redis://:${STORE}@cache:6379"
slack: { bot_token: xoxb-1-2-abc, signing_secret: ${SIGNING} }
telegram:
  webhook: { url: "https://bot.example/tg", secret: ${WEBHOOK} }
tools:
  mcp_servers:
    gh: { command: gh-mcp, env: { GH_TOKEN: ${MCP_TOKEN}, REGION: eu, NOTION_KEY: ${MCP_NOTION}, DEBUG: "1" } }
    docs: { url: "https://docs.example/mcp", headers: { Authorization: ${MCP_HEADER}, Accept-Language: ${MCP_LANG}, X-Tier: gold } }
`);
    const text = (value: string) => `the server said: ${value} was wrong`;
    const all = [SIGNING, WEBHOOK, STORE, MCP_TOKEN, MCP_HEADER, MCP_NOTION, MCP_LANG];
    for (const secret of all) expect(scrubSecrets(text(secret))).toBe(text(secret));
    const loaded = loadConfig({ env: {}, cwd });
    if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
    for (const secret of all) expect(scrubSecrets(text(secret))).toBe(text(secret));
    registerConfigSecrets(loaded.config);
    for (const secret of all) expect(scrubSecrets(text(secret))).toBe(text("[redacted]"));
    for (const short of ["eu", "1", "gold"]) expect(scrubSecrets(text(short))).toBe(text(short));
  });

  it("take an MCP server's NOTION_KEY out of a log line (a name no secret rule knows)", () => {
    const plain = "notion-value-3c4d5e6f7a8b";
    const cwd = project(`
tools:
  mcp_servers:
    notion: { command: notion-mcp, env: { NOTION_KEY: ${plain} } }
`);
    const loaded = loadConfig({ env: {}, cwd });
    if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
    const { logger, lines } = capturingLogger();
    registerConfigSecrets(loaded.config);
    logger.warn({ stderr: `auth failed for key ${plain}` }, `mcp server notion exited: bad key ${plain}`);
    const text = lines.join("");
    expect(text).not.toContain(plain);
    expect(text.split("[redacted]").length - 1).toBe(2);
  });

  it("take an MCP header's credential out without its scheme, and a Basic one's password", () => {
    // A server refusing the header echoes the token alone, which the whole value did not match.
    const token = "mcpTokenAbcdefghIJ";
    const password = "basic-pass-7d8e9f";
    const basic = Buffer.from(`ops:${password}`).toString("base64");
    const cwd = project(`
tools:
  mcp_servers:
    docs: { url: "https://docs.example/mcp", headers: { Authorization: "Bearer ${token}" } }
    wiki: { url: "https://wiki.example/mcp", headers: { Proxy-Authorization: "Basic ${basic}" } }
`);
    const loaded = loadConfig({ env: {}, cwd });
    if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
    registerConfigSecrets(loaded.config);
    expect(scrubSecrets(`invalid token ${token}`)).toBe("invalid token [redacted]");
    expect(scrubSecrets(`bad credentials ${basic}`)).toBe("bad credentials [redacted]");
    expect(scrubSecrets(`user ops with ${password} refused`)).toBe("user ops with [redacted] refused");
    expect(scrubSecrets("Bearer tokens are required")).toBe("Bearer tokens are required");
  });

  it("leave the last word of a two-word header that is no credential alone", () => {
    // Registered alone, 'Engineering' was taken out of every log line and notice.
    const cwd = project(`
tools:
  mcp_servers:
    docs: { url: "https://docs.example/mcp", headers: { X-Team: "Platform Engineering" } }
`);
    const loaded = loadConfig({ env: {}, cwd });
    if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
    registerConfigSecrets(loaded.config);
    expect(scrubSecrets("Engineering asked for a summary")).toBe("Engineering asked for a summary");
    expect(scrubSecrets("sent Platform Engineering")).toBe("sent [redacted]");
  });

  it("take a remote MCP server's key out of its URL's path, query and password, but not short parts", () => {
    // A hosted server's 404 page names the path it was asked, key and all, and the start failure is logged.
    const pathKey = "ak7Hq2LmN9pR4sT6vW8xYzQ";
    const queryKey = "q-key-0a1b2c3d4e5f6a7b";
    const password = "url-pass-9f8e7d6c";
    const cwd = project(`
tools:
  mcp_servers:
    zap: { url: "https://ops:${password}@actions.example/mcp/${pathKey}/sse?api=${queryKey}&format=streamable-http" }
`);
    const loaded = loadConfig({ env: {}, cwd });
    if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
    registerConfigSecrets(loaded.config);
    expect(scrubSecrets(`failed to start: Cannot POST /mcp/${pathKey}/sse`)).toBe(
      "failed to start: Cannot POST /mcp/[redacted]/sse",
    );
    expect(scrubSecrets(`got ${queryKey} and ${password}`)).toBe("got [redacted] and [redacted]");
    expect(scrubSecrets("actions.example answered in streamable-http")).toBe(
      "actions.example answered in streamable-http",
    );
  });

  it("leave a remote MCP server's long URL parts made of words alone: they are names, not keys", () => {
    // Registered, every notice and log line naming the knowledge base or the team lost the words.
    const cwd = project(`
tools:
  mcp_servers:
    kb: { url: "https://mcp.example/company-knowledge-base/mcp?workspace=engineering-department" }
`);
    const loaded = loadConfig({ env: {}, cwd });
    if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
    registerConfigSecrets(loaded.config);
    const notice = "The company-knowledge-base server of engineering-department did not answer";
    expect(scrubSecrets(notice)).toBe(notice);
  });

  it("include the API keys from the file and from OPENAI_API_KEY alone: a log line shows neither", () => {
    // The model, reviewer and transcription clients register nothing themselves: their keys are these.
    const envKey = "env-only-key-5b7c9d1e3f";
    const reviewerKey = "reviewer-file-key-8a6e4c2b";
    const transcriptionKey = "transcribe-file-key-1f3e5d7c";
    const cwd = project(`
reviewer: { api_key: ${reviewerKey} }
transcription: { model: whisper-1, base_url: "https://api.example/v1", api_key: ${transcriptionKey} }
`);
    const loaded = loadConfig({ env: { OPENAI_API_KEY: envKey }, cwd });
    if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
    expect(loaded.config.model.api_key).toBe(envKey);
    const { logger, lines } = capturingLogger();
    registerConfigSecrets(loaded.config);
    for (const key of [envKey, reviewerKey, transcriptionKey])
      logger.warn({ detail: `the endpoint echoed ${key}` }, `rejected ${key}`);
    const text = lines.join("");
    for (const key of [envKey, reviewerKey, transcriptionKey]) expect(text).not.toContain(key);
    expect(text.split("[redacted]").length - 1).toBe(6);
  });

  it("refuse a webhook secret shorter than 16 characters", () => {
    const cwd = project(`telegram:\n  webhook: { url: "https://bot.example/tg", secret: short-secret-1 }\n`);
    const loaded = loadConfig({ env: {}, cwd });
    expect(loaded.ok).toBe(false);
    expect(loaded.ok ? [] : loaded.problems.join("\n")).toContain(
      "telegram.webhook.secret: 16-256 characters",
    );
  });
  it("take a store password as written when it cannot be decoded (a bare %), never throwing", () => {
    const loaded = loadConfig({ env: {}, cwd: project("") });
    if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
    const written = "pa%ss-word-5e6f7a";
    // Loading refuses such a URL (validate-config.ts); registering must not crash on one all the same.
    registerConfigSecrets({ ...loaded.config, store_url: `redis://:${written}@cache:6379` });
    expect(scrubSecrets(`auth failed with ${written}`)).toBe("auth failed with [redacted]");
  });
});
