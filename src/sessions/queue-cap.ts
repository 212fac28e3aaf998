/**
 * QueueCap: at most MAX_QUEUED_MESSAGES messages wait in a session's queue, and a thread that
 * floods it is told once per full spell (a flood gets one notice, not one per message). It is
 * checked where a message joins the record's queue: on receipt in one process, and where the
 * session is held when several processes share its queue (one that does not hold the session
 * reads an old copy of the queue, so only the holder's count is true).
 */
import type { Logger } from "pino";
import type { LiveSession } from "./live-session.js";
import { MAX_QUEUED_MESSAGES } from "./session-record.js";
import type { ThreadOutputs } from "./thread-outputs.js";

/** Why a message was not queued. */
export const QUEUE_FULL_REASON = `${MAX_QUEUED_MESSAGES} messages are queued in this thread already`;

/** The queue cap of every session of one process (see the module header). */
export class QueueCap {
  /** Sessions whose thread was told its queue is full, until a message is queued there again. */
  private readonly told = new WeakSet<LiveSession>();

  constructor(
    private readonly outputs: ThreadOutputs,
    private readonly logger: Logger,
  ) {}

  /**
   * Whether the session's queue takes one more message; a message it takes ends a full spell.
   * When it is full, `refuse` the message.
   */
  admits(live: LiveSession): boolean {
    if (live.record.queue.length >= MAX_QUEUED_MESSAGES) return false;
    this.told.delete(live);
    return true;
  }

  /** A message the full queue did not admit: the thread hears so once per full spell. */
  async refuse(live: LiveSession): Promise<void> {
    if (this.told.has(live)) return;
    this.told.add(live);
    try {
      await this.outputs
        .outputFor(live.record.target)
        ?.postText(
          `${QUEUE_FULL_REASON}, so newer ones are not taken until the agent catches up: send yours again later, or \`stop\` the turn.`,
        );
    } catch (error) {
      this.logger.warn({ err: error, sessionId: live.id }, "posting the full-queue notice failed");
    }
  }
}
