/**
 * ReadCursors: per session and channel scope, how far the session has read a channel's buffer
 * (by catch_up, or by being woken with the messages). Stored in the "buffers" space under a hash
 * of session + scope (both can be long), expiring once older than anything the buffer keeps.
 * The scopes a session read by catch_up are listed with it (`readTo`), so a thread's switch to a
 * new session ("new") moves those cursors too (`moveAll`), not only its subscriptions' — else
 * catch_up in the new session would repeat what the old one read. Only catch_up lists a scope:
 * it runs in the session's turn, one at a time per session across processes, so the list (one
 * record) is never written by two processes at once; a wake-up's cursor is its subscription's,
 * moved with it.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { KeyedMutex } from "../store/key-mutex.js";
import type { KeyValueSpace } from "../store/store.js";
import { fromVersioned, toVersioned } from "../store/versioned.js";
import { type BufferPosition, bufferPositionSchema, laterOf } from "./buffer-entry.js";

export const READ_CURSOR_KIND = "read-cursor";
const READ_SCOPES_KIND = "read-scopes";

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

interface ScopesRecord {
  readonly sessionId: string;
  readonly scopeKeys: readonly string[];
}

const scopesSchema: z.ZodType<ScopesRecord> = z.object({
  sessionId: z.string().min(1),
  scopeKeys: z.array(z.string().min(1)),
});

/** The store key of the list of scopes a session read by catch_up. */
function readScopesKey(sessionId: string): string {
  const digest = createHash("sha256").update(sessionId).digest("base64url");
  return `cursor-scopes:${digest.slice(0, 43)}`;
}

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
   * catch_up read the scope up to `position`: `advance`, and list the scope among the session's
   * (refreshing the list's expiry with the cursor's), so `moveAll` finds it.
   */
  async readTo(sessionId: string, scopeKey: string, position: BufferPosition): Promise<BufferPosition> {
    const next = await this.advance(sessionId, scopeKey, position);
    await this.listScopes(sessionId, [scopeKey]);
    return next;
  }

  /**
   * The thread of session `fromId` switched to session `toId` ("new"): hand every cursor of the
   * scopes `fromId` read by catch_up to `toId` (see `move`), then its list. Safe to repeat, or to
   * finish after an interrupted run: a cursor already handed over is not under `fromId` any more.
   */
  async moveAll(fromId: string, toId: string): Promise<void> {
    const scopeKeys = await this.scopesOf(fromId);
    if (scopeKeys.length === 0) return;
    for (const scopeKey of scopeKeys) await this.move(fromId, toId, scopeKey);
    await this.listScopes(toId, scopeKeys);
    const key = readScopesKey(fromId);
    await this.mutex.run(key, () => this.space.delete(key));
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

  /** The scopes the session read by catch_up (empty when none, or the list expired). */
  private async scopesOf(sessionId: string): Promise<readonly string[]> {
    const raw = await this.space.get(readScopesKey(sessionId));
    if (raw === undefined) return [];
    const record = fromVersioned(raw, {
      kind: READ_SCOPES_KIND,
      schema: scopesSchema,
      where: `the channels session "${sessionId}" read`,
    });
    return record.sessionId === sessionId ? record.scopeKeys : [];
  }

  /** Add `scopeKeys` to the session's list, written afresh so it expires with its newest cursor. */
  private async listScopes(sessionId: string, scopeKeys: readonly string[]): Promise<void> {
    const key = readScopesKey(sessionId);
    await this.mutex.run(key, async () => {
      const listed = await this.scopesOf(sessionId);
      const record: ScopesRecord = { sessionId, scopeKeys: [...new Set([...listed, ...scopeKeys])] };
      await this.space.set(key, toVersioned(READ_SCOPES_KIND, record), this.ttlMs);
    });
  }
}
