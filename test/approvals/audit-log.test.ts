import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { AuditLog, redactAudit } from "../../src/approvals/audit-log.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
import { makeHarness, message, tempDir } from "../sessions/helpers/harness.js";
import { allowFirstCardOnce, auditLines, auditRecord } from "./audit-helpers.js";

describe("audit log", () => {
  it("redacts tokens, keys and authorisation headers", () => {
    const clean = redactAudit(
      auditRecord({
        arguments: JSON.stringify({
          command: `curl -H 'Authorization: token ghp_abcdefgh12345' -H "X-Api-Key: k3y-v4lue" https://x`,
          env: "SLACK=xoxb-1234-5678-abcdefgh OPENAI=sk-proj-abcdefghijklmnop TG=123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawXX",
        }),
        headers: { authorization: "Bearer abc.def.ghi" },
      }),
    );
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

  // The engine redacts a call's arguments while they are whole, before it cuts them to the
  // proposal's 1,000-character preview (src/engine/tool-authorizer.ts): no secret-named value
  // reaches the file, in short arguments, in long ones cut short, or in text that is no JSON.
  it("never writes a secret-named argument of a proposed call to the file", async () => {
    const secrets = {
      short: "plain-secret-short-0001",
      nested: "plain-secret-nested-0002",
      beforeCut: "plain-secret-before-cut-0003",
      acrossCut: "plain-secret-across-cut-0004",
      mangled: "plain-secret-mangled-0005",
    };
    const long = "x".repeat(2_000);
    const mangled = `{"name":"e","client_secret":"${secrets.mangled}","content":"${long}`;
    // Compact JSON `{"content":"yyy…","api_key":"…"}`: the 1,000-character cut falls inside the key's value.
    const acrossCut = {
      content: "y".repeat(1_000 - 25 - '{"content":"","api_key":"'.length),
      api_key: secrets.acrossCut,
    };
    expect(JSON.stringify(acrossCut).indexOf(secrets.acrossCut)).toBeLessThan(999);
    expect(JSON.stringify(acrossCut).length).toBeGreaterThan(1_000);
    const h = await makeHarness({
      steps: [
        toolStep(
          ["c1", "read_note", { name: "a", api_key: secrets.short }],
          ["c2", "read_note", { name: "b", headers: { "X-Api-Key": secrets.nested }, note: "one\ntwo" }],
          ["c3", "read_note", { name: "c", password: secrets.beforeCut, content: long }],
          ["c4", "read_note", { name: "d", ...acrossCut }],
          ["c5", "read_note", mangled],
        ),
        textStep("ok"),
      ],
    });
    await h.manager.receive(message("read them"));
    await h.manager.idle();
    await h.manager.drain(10);
    const text = readFileSync(h.auditLogPath, "utf8");
    for (const secret of Object.values(secrets)) expect(text).not.toContain(secret);
    const proposals = text
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((r) => r.kind === "proposal");
    const args = Object.fromEntries(proposals.map((r) => [r.callId, r.arguments as string]));
    expect(JSON.parse(args.c1 ?? "")).toEqual({ name: "a", api_key: "[redacted]" });
    expect(JSON.parse(args.c2 ?? "")).toEqual({
      name: "b",
      headers: { "X-Api-Key": "[redacted]" },
      note: "one\ntwo",
    });
    expect(args.c3).toContain('"password":"[redacted]"');
    expect(args.c3?.length).toBe(1_000);
    expect(args.c3?.endsWith("…")).toBe(true);
    expect(args.c4).toContain('"api_key":"[redacted]"');
    expect(args.c5).toBe(`[unparsed arguments: ${mangled.length} characters]`);
  });

  it("appends one JSON line per record, in order, and mirrors them to the logger at debug", async () => {
    const path = join(tempDir(), "nested", "audit.jsonl");
    const lines: string[] = [];
    const logger = pino({ level: "debug" }, { write: (line: string) => lines.push(line) });
    const log = new AuditLog(path, logger);
    log.sink(auditRecord({ kind: "proposal", note: "first" }));
    log.sink(auditRecord({ kind: "decision", note: "second" }));
    await log.flush();
    log.sink(auditRecord({ kind: "result", note: "third" }));
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
      log.sink(auditRecord({ kind: "proposal" }));
      await log.flush();
      expect((statSync(dirname(path)).mode & 0o777).toString(8)).toBe("700");
      expect((statSync(path).mode & 0o777).toString(8)).toBe("600");
    } finally {
      process.umask(umask);
    }
  });

  it("takes group and other access off an audit log left from before", async () => {
    const path = join(tempDir(), "audit.jsonl");
    writeFileSync(path, "", { mode: 0o644 });
    chmodSync(path, 0o644);
    const log = new AuditLog(path, pino({ level: "silent" }));
    log.sink(auditRecord({ kind: "proposal" }));
    await log.flush();
    expect((statSync(path).mode & 0o777).toString(8)).toBe("600");
    expect(log.failedWrites).toBe(0);
  });

  it("receives the engine's records for a session's approval round trip", async () => {
    const h = await makeHarness({
      steps: [toolStep(["c1", "write_note", { text: "token xoxb-9999-8888-secretvalue" }]), textStep("ok")],
    });
    await h.manager.receive(message("write it"));
    await allowFirstCardOnce(h);
    const text = readFileSync(h.auditLogPath, "utf8");
    const kinds = auditLines(text).map((r) => r.kind);
    expect(kinds).toEqual(["proposal", "decision", "approval_requested", "approval_resolved", "result"]);
    expect(text).not.toContain("secretvalue");
  });
});
