/**
 * Shared by the audit log tests: an audit record with fixed ids over the given fields, the records
 * in a JSON-lines audit text, and a session turn's first approval card allowed once.
 */
import type { AuditRecord } from "../../src/engine/audit-record.js";
import { type Harness, pressCard, thread } from "../sessions/helpers/harness.js";

/** A run_command proposal of session s1, turn t1, call c1, with `fields` over it. */
export const auditRecord = (fields: Record<string, unknown>): AuditRecord => ({
  kind: "proposal",
  sessionId: "s1",
  turnId: "t1",
  callId: "c1",
  tool: "run_command",
  at: "2026-01-02T03:04:05.000Z",
  ...fields,
});

/** The records of an audit log's text, one a line. */
export const auditLines = (text: string): Record<string, unknown>[] =>
  text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** Allow the first card in the default thread once, as Ana, and wait until the turn and its records are done. */
export async function allowFirstCardOnce(h: Harness): Promise<void> {
  const out = h.outputs.for(thread());
  const card = await h.outputs.until(() => out.latestCards[0], "card");
  await pressCard(h, card);
  await h.manager.idle();
  await h.manager.drain(10);
}
