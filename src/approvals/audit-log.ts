/**
 * AuditLog: the engine's audit records (proposals, decisions, approvals, results) as an
 * append-only JSONL file (0600) in the data dir (created 0700 when missing), mirrored to the
 * logger at debug level. Secrets are redacted before anything is written, with the shared
 * redactor (token-shaped strings, secret-named fields) plus authorisation header values quoted
 * inside tool arguments ("-H 'Authorization: token abc'"). A proposal's `arguments` is the model's JSON text (a preview
 * of at most 1,000 characters): it is parsed so its secret-named fields are redacted like any
 * other, and stored again as compact JSON text (still a string); a preview cut short, which does
 * not parse, has the string values of its secret-named fields redacted in the text.
 */
import { appendFile, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import type { Logger } from "pino";
import type { AuditRecord, AuditSink } from "../engine/audit-record.js";
import { isSecretKey, REDACTED, redactDeep } from "../logging/redact.js";

const HEADER_VALUE =
  /\b(authorization|proxy-authorization|x-api-key|api-key|x-auth-token)(\s*[:=]\s*)(?!\[redacted\])(?:(bearer|basic|token|bot)\s+)?[^\s"',;]+/gi;

/**
 * A `"name": "value"` pair in JSON text; the value may run to the end (a preview cut inside it).
 * Pairs are matched whole, left to right, so a value is read as a key only in contrived text.
 */
const JSON_STRING_FIELD = /"((?:[^"\\]|\\.)*)"(\s*:\s*)"((?:[^"\\]|\\.)*)("|$)/g;

/** What `preview` (src/engine/tool-results.ts) puts for a line break. */
const PREVIEW_LINE_BREAK = /⏎ /g;

/**
 * The model's JSON arguments text with secret-named fields redacted: parsed and re-serialised when
 * it parses to an object or array, else (a preview cut short) with the string values of
 * secret-named fields replaced in the text. Either way every other string is scrubbed later.
 */
function redactArgumentsText(text: string): string {
  for (const candidate of [text, text.replace(PREVIEW_LINE_BREAK, "\n")]) {
    try {
      const parsed: unknown = JSON.parse(candidate);
      if (parsed !== null && typeof parsed === "object") return JSON.stringify(redactDeep(parsed));
    } catch {
      // Not JSON (or cut short): try the next reading, then fall back to the text.
    }
  }
  return text.replace(JSON_STRING_FIELD, (match, key: string, sep: string, _value, close: string) =>
    isSecretKey(key) ? `"${key}"${sep}"${REDACTED}${close}` : match,
  );
}

/** A deep copy of an audit record with every secret replaced by `[redacted]`. */
export function redactAudit(record: AuditRecord): Record<string, unknown> {
  const scrubHeaders = (value: unknown): unknown => {
    if (typeof value === "string")
      return value.replace(HEADER_VALUE, (_m, name: string, sep: string, scheme?: string) =>
        scheme ? `${name}${sep}${scheme} ${REDACTED}` : `${name}${sep}${REDACTED}`,
      );
    if (Array.isArray(value)) return value.map(scrubHeaders);
    if (value !== null && typeof value === "object")
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrubHeaders(v)]));
    return value;
  };
  const args = record.arguments;
  const withArgs = typeof args === "string" ? { ...record, arguments: redactArgumentsText(args) } : record;
  return scrubHeaders(redactDeep(withArgs)) as Record<string, unknown>;
}

/** Appends redacted audit records to a JSONL file in order; `sink` is what the engine calls. */
export class AuditLog {
  private tail: Promise<void> = Promise.resolve();
  private directoryReady: Promise<unknown> | undefined;
  private failures = 0;

  constructor(
    private readonly path: string,
    private readonly logger: Logger,
  ) {}

  /** The engine-facing sink: never throws, never blocks the turn. */
  readonly sink: AuditSink = (record: AuditRecord) => {
    const clean = redactAudit(record);
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
      this.directoryReady ??= mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
      await this.directoryReady;
      await appendFile(this.path, line, { encoding: "utf8", mode: 0o600 });
    } catch (error) {
      this.failures++;
      this.logger.error({ err: error, path: this.path }, "audit log write failed");
    }
  }
}
