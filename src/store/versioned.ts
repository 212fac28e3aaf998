/**
 * Versioned persisted state: every record Coworker stores is wrapped as `{ v, kind, data }` so a
 * build can tell what it is reading. A record with no version, an unknown version or one written
 * by a newer build fails loudly instead of being misread.
 */
import type { z } from "zod";

/** The schema version this build writes and reads. Bump it (and add fixtures) when a stored shape changes. */
export const SCHEMA_VERSION = 1;

/** The stored envelope around one record. */
export interface VersionedRecord<D> {
  readonly v: number;
  readonly kind: string;
  readonly data: D;
}

/** Thrown when stored data cannot be read: wrong version, wrong kind, missing or corrupt. */
export class StoredDataError extends Error {
  override readonly name = "StoredDataError";
}

/** Wrap `data` for storage with the current schema version. */
export function toVersioned<D>(kind: string, data: D): VersionedRecord<D> {
  return { v: SCHEMA_VERSION, kind, data };
}

/** The JSON of `toVersioned(kind, data)`, from the JSON text of `data`. */
export function versionedText(kind: string, dataText: string): string {
  return `{"v":${SCHEMA_VERSION},"kind":${JSON.stringify(kind)},"data":${dataText}}`;
}

/** What to expect when reading a record back. */
export interface RecordSpec<D> {
  readonly kind: string;
  readonly schema: z.ZodType<D>;
  /** Where it came from, for the error message (e.g. `session "slack:T1:C1:17.2"`). */
  readonly where?: string;
}

/**
 * Read a stored record: checks the envelope, the version and the kind, then validates `data`
 * with the spec's schema. Throws a StoredDataError naming the record; never returns bad data.
 */
export function fromVersioned<D>(raw: unknown, spec: RecordSpec<D>): D {
  const label = `stored ${spec.kind}${spec.where ? ` (${spec.where})` : ""}`;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw) || !("v" in raw)) {
    throw new StoredDataError(
      `${label} has no schema version: it was not written by Coworker, or it is corrupt`,
    );
  }
  const { v, kind, data } = raw as { v: unknown; kind?: unknown; data?: unknown };
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1) {
    throw new StoredDataError(
      `${label} has an unknown schema version (${JSON.stringify(v)}); this build reads v${SCHEMA_VERSION}`,
    );
  }
  if (v > SCHEMA_VERSION) {
    throw new StoredDataError(
      `${label} was written by a newer Coworker (schema v${v}); this build reads v${SCHEMA_VERSION} — upgrade Coworker to use this data`,
    );
  }
  if (kind !== spec.kind) {
    throw new StoredDataError(`${label} holds a record of kind ${JSON.stringify(kind)} instead`);
  }
  const parsed = spec.schema.safeParse(data);
  if (!parsed.success) throw new StoredDataError(`${label} is corrupt: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

/** "messages.3.content: Invalid input…; …" — a zod error as one readable line. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "(root)"}: ${issue.message}`)
    .join("; ");
}
