/**
 * redactAudit on a proposal whose `arguments` is JSON text: the redacted text still parses, with
 * an authorisation header in an escaped-quoted curl argument (the audit's own header rule once ate
 * the backslash before the closing quote) and the command-line secret shapes the shared redactor knows.
 */
import { describe, expect, it } from "vitest";
import { redactAudit } from "../../src/approvals/audit-log.js";
import type { AuditRecord } from "../../src/engine/audit-record.js";
import { auditRecord } from "./audit-helpers.js";

const proposal = (args: unknown): AuditRecord => auditRecord({ arguments: JSON.stringify(args) });

describe("audit redaction of JSON arguments", () => {
  it("keeps an Authorization header inside JSON arguments parseable", () => {
    const clean = redactAudit(
      proposal({ command: `curl -H "Authorization: Bearer abc123456789" https://api.example/x` }),
    );
    const args = clean.arguments as string;
    expect(args).not.toContain("abc123456789");
    expect(JSON.parse(args)).toEqual({
      command: `curl -H "Authorization: Bearer [redacted]" https://api.example/x`,
    });
  });

  it("redacts the command-line shapes and leaves other flags alone", () => {
    const command = [
      "mytool --password Sup3rS3cret --token abcd1234efgh",
      "curl -u admin:Sup3rS3cret -H 'Cookie: session=Sup3rS3cret' https://x",
      "mysql -uroot -pSup3rS3cret app",
      "STRIPE=sk_live_51HAbCdEfGhIjKlMn",
      "mkdir -p build && cp -p a b",
    ].join("; ");
    const args = redactAudit(proposal({ command })).arguments as string;
    expect(args).not.toMatch(/Sup3rS3cret|abcd1234efgh|51HAbCdEfGhIjKlMn/);
    expect((JSON.parse(args) as { command: string }).command).toContain("mkdir -p build && cp -p a b");
  });
});
