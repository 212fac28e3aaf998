/**
 * AuditLog: the audit records (the engine's proposals, decisions, approvals, results; thread
 * commands that change a session: mode, grants revoke, new, stop) as an append-only JSONL file
 * in the data dir (created 0700 when missing), owner-only (0600: one left
 * from before with more access is tightened before the first record; core/private-files.ts), mirrored to the
 * logger at debug level. Secrets are redacted before anything is written, with the shared
 * redactor (logging/redact.ts: token-shaped strings, authorisation and cookie headers, secret
 * flags on command lines, secret-named fields), the same one the logs use. A proposal's `arguments` arrives
 * already redacted: the engine takes the secret-named fields out of a call's arguments while
 * they are whole, before it cuts them to a preview (src/engine/tool-authorizer.ts).
 */
import { appendFile, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import type { Logger } from "pino";
import { ensurePrivateFile } from "../core/private-files.js";
import { AUDIT_RECORD_VERSION, type AuditRecord, type AuditSink } from "../engine/audit-record.js";
import { redactDeep } from "../logging/redact.js";

/**
 * A deep copy of an audit record with every secret replaced by `[redacted]`: the shared redactor
 * alone, on every string (a proposal's `arguments` is JSON text, and each rule there stops at a
 * quote or a backslash, so that text stays JSON).
 */
export function redactAudit(record: AuditRecord): Record<string, unknown> {
  return redactDeep(record) as Record<string, unknown>;
}

/** Appends redacted audit records to a JSONL file in order; `sink` is what the engine calls. */
export class AuditLog {
  private tail: Promise<void> = Promise.resolve();
  /** The folder made and the file owner-only, once, before the first record. */
  private fileReady: Promise<unknown> | undefined;
  private failures = 0;

  constructor(
    private readonly path: string,
    private readonly logger: Logger,
  ) {}

  /** The engine-facing sink: never throws, never blocks the turn. */
  readonly sink: AuditSink = (record: AuditRecord) => {
    const clean = { v: AUDIT_RECORD_VERSION, ...redactAudit(record) };
    this.logger.debug({ audit: clean }, `audit ${record.kind} ${record.tool}`);
    const line = `${JSON.stringify(clean)}\n`;
    this.tail = this.tail.then(() => this.write(line));
  };

  /** Resolves once every record handed to `sink` so far is on disk (or reported as failed). */
  flush(): Promise<void> {
    return this.tail;
  }

  /** How many records could not be written (each is logged at error level). */
  get failedWrites(): number {
    return this.failures;
  }

  private async write(line: string): Promise<void> {
    try {
      this.fileReady ??= mkdir(dirname(this.path), { recursive: true, mode: 0o700 }).then(() =>
        ensurePrivateFile(this.path),
      );
      await this.fileReady;
      await appendFile(this.path, line, { encoding: "utf8", mode: 0o600 });
    } catch (error) {
      this.failures++;
      this.logger.error({ err: error, path: this.path }, "audit log write failed");
    }
  }
}
