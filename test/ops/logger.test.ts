import { PassThrough } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import { createLogger, turnLogger } from "../../src/logging/logger.js";
import { redactDeep, redactSecretKeys, registerSecret, scrubSecrets } from "../../src/logging/redact.js";

function capture() {
  const lines: string[] = [];
  return { lines, destination: { write: (line: string) => void lines.push(line) } };
}

const SLACK = "xoxb-1234567890-0987654321-AbCdEfGhIjKl";
const APP = "xapp-1-A01234-5678901234-abcdef0123";
const OPENAI = "sk-proj-AbCdEfGhIjKlMnOpQrStUv";
const TELEGRAM = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw";

describe("logger", () => {
  it("writes human-readable lines through pino-pretty when asked, secrets still scrubbed", async () => {
    const out = new PassThrough();
    const chunks: string[] = [];
    out.on("data", (chunk: Buffer) => chunks.push(chunk.toString()));
    const logger = createLogger({ level: "info", destination: out, pretty: true });
    logger.info({ token: SLACK }, `pretty line ${OPENAI}`);
    await new Promise<void>((resolve) => logger.flush(() => resolve()));
    const text = chunks.join("");
    expect(text).toContain("pretty line");
    expect(text).not.toContain(OPENAI);
    expect(text).not.toContain(SLACK);
    expect(() => JSON.parse(text)).toThrow();
  });

  it("writes JSON lines with secrets redacted in fields, nested objects, messages, errors and bindings", () => {
    const { lines, destination } = capture();
    const logger = createLogger({ level: "info", destination, pretty: false });
    const child = logger.child({ channel: `https://api.telegram.org/bot${TELEGRAM}/getMe` });
    child.info(
      { token: SLACK, config: { slack: { app_token: APP, signing_secret: "abc123signing" } } },
      "with fields",
    );
    child.info(
      { req: { headers: { authorization: `Bearer ${OPENAI}`, accept: "json" } } },
      `key ${OPENAI} in text`,
    );
    child.error(
      { err: new Error(`fetch https://api.telegram.org/bot${TELEGRAM}/sendMessage failed`) },
      "boom",
    );
    child.warn("store redis://:hunter2pass@cache:6379 is slow");

    const text = lines.join("");
    for (const secret of [SLACK, APP, OPENAI, TELEGRAM, "abc123signing", "hunter2pass"])
      expect(text).not.toContain(secret);
    const [first, second, third, fourth] = lines.map((line) => JSON.parse(line));
    expect(first).toMatchObject({
      msg: "with fields",
      token: "[redacted]",
      config: { slack: { app_token: "[redacted]" } },
    });
    expect(first.channel).toBe("https://api.telegram.org/bot[redacted]/getMe");
    expect(second.msg).toBe("key sk-[redacted] in text");
    expect(second.req.headers).toEqual({ authorization: "[redacted]", accept: "json" });
    expect(third.err.message).toBe("fetch https://api.telegram.org/bot[redacted]/sendMessage failed");
    expect(third.err.stack).not.toContain(TELEGRAM);
    expect(fourth.msg).toBe("store redis://:[redacted]@cache:6379 is slow");
  });

  it("tags every line of a turn with its session and turn ids", () => {
    const { lines, destination } = capture();
    const turn = turnLogger(createLogger({ level: "debug", destination, pretty: false }), {
      sessionId: "s1",
      turnId: "t9",
    });
    turn.debug({ tool: "read_file" }, "tool started");
    turn.child({ callId: "c1" }).info("tool finished");
    expect(lines.map((line) => JSON.parse(line))).toMatchObject([
      { sessionId: "s1", turnId: "t9", tool: "read_file", msg: "tool started" },
      { sessionId: "s1", turnId: "t9", callId: "c1", msg: "tool finished" },
    ]);
  });

  it("makes a turn's child logger only when the turn first logs", () => {
    const { lines, destination } = capture();
    const base = createLogger({ level: "info", destination, pretty: false });
    const child = vi.spyOn(base, "child");
    const turn = turnLogger(base, { sessionId: "s1", turnId: "t9" });
    expect(child).not.toHaveBeenCalled();
    turn.warn("first");
    turn.level = "error";
    turn.warn("dropped");
    turn.error("second");
    expect(child).toHaveBeenCalledTimes(1);
    expect(base.level).toBe("info");
    expect(lines.map((line) => JSON.parse(line))).toMatchObject([
      { sessionId: "s1", turnId: "t9", msg: "first" },
      { sessionId: "s1", turnId: "t9", msg: "second" },
    ]);
  });

  it("takes a registered secret of any shape out of every line, and ignores one too short to cut safely", () => {
    registerSecret("plainkey-7f3a9c41e2");
    registerSecret("abc");
    const { lines, destination } = capture();
    createLogger({ level: "info", destination, pretty: false }).warn(
      { detail: "proxy said: key plainkey-7f3a9c41e2 rejected" },
      "upstream answered with plainkey-7f3a9c41e2",
    );
    expect(lines.join("")).not.toContain("plainkey-7f3a9c41e2");
    expect(lines.join("")).toContain("key [redacted] rejected");
    expect(scrubSecrets("abc and abcdef")).toBe("abc and abcdef");
  });

  it("redacts by key without patterns, and scrubs token-shaped values under innocent keys from the line", () => {
    const { lines, destination } = capture();
    createLogger({ level: "info", destination, pretty: false }).info(
      {
        db: { password: "hunter2-not-token-shaped" },
        deep: { a: { b: { note: `the key was ${OPENAI}` } } },
        list: [`bearer for ${SLACK}`],
        max_output_tokens: 2048,
      },
      "fields",
    );
    const text = lines.join("");
    for (const secret of ["hunter2-not-token-shaped", OPENAI, SLACK]) expect(text).not.toContain(secret);
    expect(JSON.parse(lines[0] ?? "")).toMatchObject({
      db: { password: "[redacted]" },
      deep: { a: { b: { note: "the key was sk-[redacted]" } } },
      list: ["bearer for xoxb-[redacted]"],
      max_output_tokens: 2048,
    });
    // The key layer leaves other strings to the line's one pattern pass.
    expect(redactSecretKeys({ api_key: "abc", note: `use ${SLACK}` })).toEqual({
      api_key: "[redacted]",
      note: `use ${SLACK}`,
    });
  });

  it("takes a registered secret holding quotes or backslashes out of the JSON line", () => {
    const quoted = 'pa"ss\\word-9c1e77';
    registerSecret(quoted);
    const { lines, destination } = capture();
    createLogger({ level: "info", destination, pretty: false }).warn(
      { detail: `server echoed ${quoted}` },
      `login with ${quoted} failed`,
    );
    const line = JSON.parse(lines[0] ?? "") as { detail: string; msg: string };
    expect(line.detail).toBe("server echoed [redacted]");
    expect(line.msg).toBe("login with [redacted] failed");
  });

  it("keeps numbers under token-like names readable and scrubs strings", () => {
    expect(redactDeep({ usage: { max_output_tokens: 2048 }, note: `use ${SLACK}` })).toEqual({
      usage: { max_output_tokens: 2048 },
      note: "use xoxb-[redacted]",
    });
    expect(scrubSecrets("Authorization: Bot abcdefgh12345678")).toBe("Authorization: Bot [redacted]");
    expect(scrubSecrets("x-api-key: abc123, next")).toBe("x-api-key: [redacted], next");
    expect(scrubSecrets("authorization=Bearer short")).toBe("authorization=Bearer [redacted]");
    expect(scrubSecrets(scrubSecrets("Authorization: Bearer abcdefgh12345678"))).toBe(
      "Authorization: Bearer [redacted]",
    );
    expect(scrubSecrets("plain text with 12:30 times")).toBe("plain text with 12:30 times");
  });

  it("scrubs URL passwords, and reads a long run of scheme-like words once", () => {
    expect(scrubSecrets("redis://:pw@host and postgres://me:pw@db/x")).toBe(
      "redis://:[redacted]@host and postgres://me:[redacted]@db/x",
    );
    expect(scrubSecrets("--url=git+ssh://me:pw@host")).toBe("--url=git+ssh://me:[redacted]@host");
    expect(scrubSecrets("see http://host/a:b@c")).toBe("see http://host/a:b@c");
    // A word start before each `a` once read the whole run to its end: about a minute here.
    const run = "a.".repeat(100_000);
    expect(scrubSecrets(run)).toBe(run);
    expect(scrubSecrets(`${run}://me:pw@host`)).toBe(`${run}://me:[redacted]@host`);
  });

  it("keeps every line valid JSON when scrubbing near quotes", () => {
    const { lines, destination } = capture();
    createLogger({ level: "info", destination, pretty: false }).info({ a: "http://host", b: "me:x@y" }, "ok");
    expect(JSON.parse(lines[0] ?? "")).toMatchObject({ a: "http://host", b: "me:x@y" });
  });

  it("writes readable redacted lines in pretty mode", async () => {
    const out = new PassThrough();
    let text = "";
    out.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    createLogger({ level: "info", destination: out, pretty: true }).info(
      { sessionId: "s1" },
      `posting with ${SLACK}`,
    );
    await expect.poll(() => text).toContain("posting with xoxb-[redacted]");
    expect(text).toContain('sessionId: "s1"');
    expect(text).not.toContain(SLACK);
  });
});
