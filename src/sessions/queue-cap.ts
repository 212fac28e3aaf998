/**
 * QueueCap: at most MAX_QUEUED_MESSAGES messages wait in a session's queue, and a thread that
 * floods it is told once per full spell (a flood gets one notice, not one per message). In a
 * thread several people share, one person's messages take at most MAX_QUEUED_PER_PERSON of those
 * places: else one member sending fifty messages left the queue full for everyone else, whose
 * messages were all refused until the agent had worked through the flood. A person past their
 * share is told once per spell of their own, by name. It is checked where a message joins the
 * record's queue: on receipt in one process, and where the session is held when several processes
 * share its queue (one that does not hold the session reads an old copy of the queue, so only the
 * holder's count is true).
 */
import type { Logger } from "pino";
import { isSharedThread, type PlatformUser } from "../core/thread-target.js";
import type { LiveSession } from "./live-session.js";
import { MAX_QUEUED_MESSAGES, type QueuedMessage } from "./session-record.js";
import { shownPerson } from "./session-status.js";
import type { ThreadOutputs } from "./thread-outputs.js";

/** Why a message was not queued. */
export const QUEUE_FULL_REASON = `${MAX_QUEUED_MESSAGES} messages are queued in this thread already`;

/** The most waiting messages one person may have in a thread several people share. */
export const MAX_QUEUED_PER_PERSON = MAX_QUEUED_MESSAGES / 5;

/** Why a person's message was not queued: their share of a shared thread's queue is used. */
export const PERSON_SHARE_REASON = `${MAX_QUEUED_PER_PERSON} of the sender's messages are queued in this thread already`;

/** The queue cap of every session of one process (see the module header). */
export class QueueCap {
  /** Sessions whose thread was told its queue is full, until a message is queued there again. */
  private readonly told = new WeakSet<LiveSession>();
  /** Per session, the people told their share is used, until one of theirs is queued there again. */
  private readonly toldPeople = new WeakMap<LiveSession, Set<string>>();

  constructor(
    private readonly outputs: ThreadOutputs,
    private readonly logger: Logger,
  ) {}

  /**
   * Whether the session's queue takes one more message from `user`; a message it takes ends a
   * full spell, and `user`'s own. When it does not, `refuse` the message.
   */
  admits(live: LiveSession, user: PlatformUser): boolean {
    if (live.record.queue.length >= MAX_QUEUED_MESSAGES || this.pastShare(live, user)) return false;
    this.told.delete(live);
    this.toldPeople.get(live)?.delete(user.id);
    return true;
  }

  /**
   * A message of `user`'s the queue did not admit: the thread hears so once per full spell, or
   * `user`, named, once per spell of their share used up. Resolves with why it was refused.
   */
  async refuse(live: LiveSession, user: PlatformUser): Promise<string> {
    if (live.record.queue.length >= MAX_QUEUED_MESSAGES) {
      if (!this.told.has(live)) {
        this.told.add(live);
        await this.post(
          live,
          `${QUEUE_FULL_REASON}, so newer ones are not taken until the agent catches up: send yours again later, or \`stop\` the turn.`,
        );
      }
      return QUEUE_FULL_REASON;
    }
    const told = this.toldPeople.get(live) ?? new Set<string>();
    this.toldPeople.set(live, told);
    if (!told.has(user.id)) {
      told.add(user.id);
      await this.post(
        live,
        `${shownPerson(live.record.target.platform, user)}, ${MAX_QUEUED_PER_PERSON} of your messages are waiting in this thread already, so newer ones of yours are not taken until the agent catches up on them (the others here keep their turn): send yours again later.`,
      );
    }
    return PERSON_SHARE_REASON;
  }

  /** Whether `user` has their whole share of the queue of `live`, a thread several people share. */
  private pastShare(live: LiveSession, user: PlatformUser): boolean {
    if (!isSharedThread(live.record.target)) return false;
    let theirs = 0;
    for (const queued of live.record.queue) if (sentBy(queued, user)) theirs++;
    return theirs >= MAX_QUEUED_PER_PERSON;
  }

  private async post(live: LiveSession, text: string): Promise<void> {
    try {
      await this.outputs.outputFor(live.record.target)?.postText(text);
    } catch (error) {
      this.logger.warn({ err: error, sessionId: live.id }, "posting the full-queue notice failed");
    }
  }
}

/** Whether a queued entry is a message `user` sent (not a wake-up, a scheduled run or an agent's note). */
function sentBy(queued: QueuedMessage, user: PlatformUser): boolean {
  return (
    queued.user.id === user.id &&
    queued.channelContent === undefined &&
    queued.scheduledRun === undefined &&
    queued.agentNote !== true
  );
}
