/**
 * The tool-start journal: a session's record that a tool call began running, written before the
 * tool runs. When a turn in progress is resumed (after a crash or a reload), a call with no result
 * that was journaled as started may have had effects, so the engine does not just run it again.
 * Kept apart from LiveSession: its keys, and the older form they were stored under
 * (turn-call-key.ts), are a storage concern of their own, not the session's record or history.
 */
import type { ToolCallRecord } from "../core/messages.js";
import { type CallTurn, madeInTurn, turnCallKey } from "../engine/turn-call-key.js";
import type { KeyValueSpace } from "../store/store.js";

/** How long a tool-start journal entry is kept. */
const JOURNAL_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/** One session's tool-start journal; `turn` is always the session's turn in progress, if any. */
export class ToolStartJournal {
  constructor(
    private readonly journal: KeyValueSpace,
    private readonly sessionId: string,
  ) {}

  /** Journal call `callId` of `turn` as started at `at` (ISO time). */
  markStarted(turn: CallTurn | undefined, callId: string, at: string): Promise<void> {
    return this.journal.set(this.key(turn, callId), at, JOURNAL_TTL_MS);
  }

  /** The ids of those of `calls` (of `turn`) that were journaled as started. */
  async startedCalls(turn: CallTurn | undefined, calls: readonly ToolCallRecord[]): Promise<Set<string>> {
    const started = new Set<string>();
    for (const call of calls) if (await this.journaled(turn, call.id)) started.add(call.id);
    return started;
  }

  /** A call's journal key: by the turn in progress and the call (turn-call-key.ts). */
  private key(turn: CallTurn | undefined, callId: string): string {
    return turn ? `${this.sessionId}:${turnCallKey(turn.turnId, callId)}` : `${this.sessionId}:${callId}`;
  }

  /**
   * Whether call `callId` of the turn in progress was journaled as started: under its turn's key,
   * or under the call id alone (entries stored before turn keys) since the turn started.
   */
  private async journaled(turn: CallTurn | undefined, callId: string): Promise<boolean> {
    if ((await this.journal.get(this.key(turn, callId))) !== undefined) return true;
    if (!turn) return false;
    const at = await this.journal.get<string>(`${this.sessionId}:${callId}`);
    return typeof at === "string" && madeInTurn(turn, at);
  }
}
