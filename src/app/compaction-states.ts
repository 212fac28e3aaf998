/**
 * Sessions' compaction states in the store (the "compaction" space, one key per session id): the
 * CompactionStatePort each session's engine is given, so a summary outlives the engine that wrote
 * it (engine/compaction-state.ts). Its own key, not the session record: the state is rewritten
 * only when a compaction completes, and a record's writers need not carry it. A new session
 * ('new') has a new id, so it starts without one. A stored value that is not a valid state (a
 * newer build's, a corrupt one) is logged and ignored — the session then compacts from the start
 * again — and a failed save is logged and leaves the older state; neither fails the turn. A
 * stored state built on another history (not used) is logged at info, a failed summary call
 * with its reason at warn.
 * Writes are not fenced across processes: a state applies only to the history its anchor names,
 * so one saved late by a process that lost the session is at worst an older, still true summary.
 * `anchorOf` tells a session's loading where its summary ends, so the history is read from there.
 */
import type { Logger } from "pino";
import {
  type CompactionState,
  type CompactionStatePort,
  compactionStateSchema,
} from "../engine/compaction-state.js";
import type { KeyValueSpace } from "../store/store.js";
import { fromVersioned, toVersioned } from "../store/versioned.js";

const COMPACTION_KIND = "compaction-state";

/** The compaction-state ports of the sessions on one store space. */
export class CompactionStates {
  constructor(
    private readonly space: KeyValueSpace,
    private readonly logger: Logger,
  ) {}

  /**
   * The index of the last message session `sessionId`'s summary covers, if it has one that can
   * be read; never rejects (the engine's load reports an unreadable state).
   */
  async anchorOf(sessionId: string): Promise<number | undefined> {
    try {
      const state = await this.read(sessionId);
      return state && state.covered - 1;
    } catch {
      return undefined;
    }
  }

  /** The port of session `sessionId`. */
  forSession(sessionId: string): CompactionStatePort {
    return {
      load: async () => {
        try {
          return await this.read(sessionId);
        } catch (error) {
          this.logger.warn(
            { err: error, sessionId },
            "the session's compaction state could not be read; it starts without its earlier summary",
          );
          return undefined;
        }
      },
      save: async (state) => {
        try {
          await this.space.set(sessionId, toVersioned(COMPACTION_KIND, state));
        } catch (error) {
          this.logger.warn({ err: error, sessionId }, "the session's compaction state could not be saved");
        }
      },
      notUsed: (reason) => {
        this.logger.info(
          { sessionId, reason },
          "the session's stored compaction state was built on another history; it starts without its earlier summary",
        );
      },
      summaryFailed: (error, outcome) => {
        this.logger.warn({ err: error, sessionId, outcome }, "a compaction summary call failed");
      },
    };
  }

  private async read(sessionId: string): Promise<CompactionState | undefined> {
    const raw = await this.space.get(sessionId);
    if (raw === undefined) return undefined;
    return fromVersioned(raw, {
      kind: COMPACTION_KIND,
      schema: compactionStateSchema,
      where: `session "${sessionId}"`,
    });
  }
}
