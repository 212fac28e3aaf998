/**
 * ReadCursors: per session and channel scope, how far the session has read a channel's buffer
 * (by catch_up, or by being woken with the messages). Stored in the "buffers" space under a hash
 * of session + scope (both can be long), expiring once older than anything the buffer keeps.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { KeyedMutex } from "../store/key-mutex.js";
import type { KeyValueSpace } from "../store/store.js";
import { fromVersioned, toVersioned } from "../store/versioned.js";
import { type BufferPosition, bufferPositionSchema, laterOf } from "./buffer-entry.js";

export const READ_CURSOR_KIND = "read-cursor";

interface CursorRecord {
  readonly sessionId: string;
  readonly scopeKey: string;
  readonly position: BufferPosition;
}

const cursorSchema: z.ZodType<CursorRecord> = z.object({
  sessionId: z.string().min(1),
  scopeKey: z.string().min(1),
  position: bufferPositionSchema,
});

/** The store key of a session's cursor on a scope. */
export function readCursorKey(sessionId: string, scopeKey: string): string {
  const digest = createHash("sha256").update(`${sessionId}\u0000${scopeKey}`).digest("base64url");
  return `cursor:${digest.slice(0, 43)}`;
}

/** Read positions of sessions in channels. */
export class ReadCursors {
  private readonly mutex = new KeyedMutex();

  /** `ttlMs`: a cursor untouched this long is forgotten (use at least the buffer's age cap). */
  constructor(
    private readonly space: KeyValueSpace,
    private readonly ttlMs: number,
  ) {}

  /** Where the session has read up to, or undefined when it has read nothing there. */
  async get(sessionId: string, scopeKey: string): Promise<BufferPosition | undefined> {
    const raw = await this.space.get(readCursorKey(sessionId, scopeKey));
    if (raw === undefined) return undefined;
    const record = fromVersioned(raw, {
      kind: READ_CURSOR_KIND,
      schema: cursorSchema,
      where: `session "${sessionId}" in ${scopeKey}`,
    });
    return record.sessionId === sessionId && record.scopeKey === scopeKey ? record.position : undefined;
  }

  /** Move the cursor forward to `position` (never backwards); returns the cursor now in force. */
  async advance(sessionId: string, scopeKey: string, position: BufferPosition): Promise<BufferPosition> {
    const key = readCursorKey(sessionId, scopeKey);
    return this.mutex.run(key, async () => {
      const current = await this.get(sessionId, scopeKey);
      const next = laterOf(current, position);
      if (next !== current) {
        const record: CursorRecord = { sessionId, scopeKey, position: next };
        await this.space.set(key, toVersioned(READ_CURSOR_KIND, record), this.ttlMs);
      }
      return next;
    });
  }

  /**
   * Hand session `fromId`'s cursor on a scope to session `toId` (its thread's new session): copied
   * first (never moving `toId`'s back), then forgotten under `fromId`.
   */
  async move(fromId: string, toId: string, scopeKey: string): Promise<void> {
    const position = await this.get(fromId, scopeKey);
    if (position === undefined) return;
    await this.advance(toId, scopeKey, position);
    await this.delete(fromId, scopeKey);
  }

  /** Forget the session's cursor on a scope. */
  async delete(sessionId: string, scopeKey: string): Promise<void> {
    const key = readCursorKey(sessionId, scopeKey);
    await this.mutex.run(key, () => this.space.delete(key));
  }
}
