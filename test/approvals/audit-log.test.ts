import { readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { AuditLog, redactAudit } from "../../src/approvals/audit-log.js";
import type { AuditRecord } from "../../src/engine/audit-record.js";
import { preview } from "../../src/engine/tool-results.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
import { ANA, makeHarness, message, tempDir, thread } from "../sessions/helpers/harness.js";

const record = (fields: Record<string, unknown>): AuditRecord => ({
  kind: "proposal",
  sessionId: "s1",
  turnId: "t1",
  callId: "c1",
  tool: "run_command",
  at: "2026-01-02T03:04:05.000Z",
  ...fields,
});

describe("audit log", () => {
  // The engine audits a proposal's arguments as the model's JSON text, cut to a 1,000-character
  // preview (src/engine/tool-authorizer.ts): that is the shape these tests hand in.
  const proposed = (args: Record<string, unknown>) =>
    record({ arguments: preview(JSON.stringify(args), 1_000) });

  it("redacts tokens, keys and authorisation headers", () => {
    const clean = redactAudit({
      ...proposed({
        command: `curl -H 'Authorization: token ghp_abcdefgh12345' -H "X-Api-Key: k3y-v4lue" https://x`,
        env: "SLACK=xoxb-1234-5678-abcdefgh OPENAI=sk-proj-abcdefghijklmnop TG=123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawXX",
      }),
      headers: { authorization: "Bearer abc.def.ghi" },
    });
    const text = JSON.stringify(clean);
    for (const secret of [
      "ghp_abcdefgh12345",
      "k3y-v4lue",
      "1234-5678-abcdefgh",
      "abcdefghijklmnop",
      "AAHdqTcv",
      "abc.def.ghi",
    ])
      expect(text).not.toContain(secret);
    expect(text).toContain("Authorization: token [redacted]");
  });

  it("redacts secret-named fields inside the JSON text of a proposal's arguments", () => {
    const clean = redactAudit(
      proposed({
        url: "https://api.example.com",
        headers: { "X-Api-Key": "abcd1234secretvalue" },
        api_key: "myservicekey123456",
        password: "hunter2hunter2",
        note: "line one\nline two",
      }),
    );
    // Stored again as compact JSON text, with the secret-named values redacted.
    expect(typeof clean.arguments).toBe("string");
    expect(JSON.parse(clean.arguments as string)).toEqual({
      url: "https://api.example.com",
      headers: { "X-Api-Key": "[redacted]" },
      api_key: "[redacted]",
      password: "[redacted]",
      note: "line one\nline two",
    });
  });

  it("reads pretty-printed arguments whose line breaks the preview marked", () => {
    const args = preview(JSON.stringify({ path: "a.txt", token: "plain-value-123" }, null, 2), 1_000);
    expect(args).toContain("⏎");
    const clean = redactAudit(record({ arguments: args }));
    expect(JSON.parse(clean.arguments as string)).toEqual({ path: "a.txt", token: "[redacted]" });
  });

  it("redacts secret-named fields in a preview cut short, which does not parse", () => {
    const clean = redactAudit(
      proposed({
        password: "hunter2hunter2",
        client_secret: "cut-inside-this-value",
        content: "x".repeat(2_000),
      }),
    );
    const text = clean.arguments as string;
    expect(text.endsWith("…")).toBe(true);
    expect(text).not.toContain("hunter2hunter2");
    expect(text).not.toContain("cut-inside-this-value");
    expect(text).toContain('"password":"[redacted]"');

    const cutInsideSecret = redactAudit(
      record({
        arguments: preview(JSON.stringify({ content: "y".repeat(960), api_key: "abcdef0123456789" }), 1_000),
      }),
    );
    expect(cutInsideSecret.arguments).not.toContain("abcdef");
  });

  it("appends one JSON line per record, in order, and mirrors them to the logger at debug", async () => {
    const path = join(tempDir(), "nested", "audit.jsonl");
    const lines: string[] = [];
    const logger = pino({ level: "debug" }, { write: (line: string) => lines.push(line) });
    const log = new AuditLog(path, logger);
    log.sink(record({ kind: "proposal", note: "first" }));
    log.sink(record({ kind: "decision", note: "second" }));
    await log.flush();
    log.sink(record({ kind: "result", note: "third" }));
    await log.flush();
    const stored = readFileSync(path, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(stored.map((r) => [r.kind, r.note])).toEqual([
      ["proposal", "first"],
      ["decision", "second"],
      ["result", "third"],
    ]);
    expect(lines.filter((l) => l.includes('"audit"'))).toHaveLength(3);
    expect(log.failedWrites).toBe(0);
  });

  it("creates a missing folder 0700 and the file 0600", async () => {
    const umask = process.umask(0o022);
    try {
      const path = join(tempDir(), "data", "audit.jsonl");
      const log = new AuditLog(path, pino({ level: "silent" }));
      log.sink(record({ kind: "proposal" }));
      await log.flush();
      expect((statSync(dirname(path)).mode & 0o777).toString(8)).toBe("700");
      expect((statSync(path).mode & 0o777).toString(8)).toBe("600");
    } finally {
      process.umask(umask);
    }
  });

  it("receives the engine's records for a session's approval round trip", async () => {
    const h = await makeHarness({
      steps: [toolStep(["c1", "write_note", { text: "token xoxb-9999-8888-secretvalue" }]), textStep("ok")],
    });
    await h.manager.receive(message("write it"));
    const out = h.outputs.for(thread());
    const card = await h.outputs.until(() => out.latestCards[0], "card");
    await h.manager.press({
      kind: "card",
      platform: "slack",
      pendingId: card.pendingId,
      action: "once",
      user: ANA,
    });
    await h.manager.idle();
    await h.manager.drain(10);
    const text = readFileSync(h.auditLogPath, "utf8");
    const kinds = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).kind);
    expect(kinds).toEqual(["proposal", "decision", "approval_requested", "approval_resolved", "result"]);
    expect(text).not.toContain("secretvalue");
  });
});
