/**
 * SessionManager: the session layer as channels and the CLI see it (ConversationService). It
 * dedupes and records inbound messages, answers thread commands, routes a pending question's
 * typed answer, steers or queues messages while a turn runs, and runs turns in the background
 * (one at a time per session). It owns durable approvals and questions: presses are authorised,
 * first-wins and exactly-once, and a decision that finds no waiting turn resumes the session's turn
 * into the same thread — also after a restart. Other modules start wake turns (channel
 * subscriptions: `wake`, `isBusy`, `onIdle`), add thread commands and `status` lines; commands
 * may list standing items as cards whose Cancel presses go to the owning module. With a
 * distributed coordination (several processes on one Redis) sessions run under leases, input
 * goes through shared queues (lease-gate.ts) and controls reach the holding process
 * (turn-control-dispatch.ts), put together by multi-process.ts.
 */
import type { Logger } from "pino";
import type { AuditLog } from "../approvals/audit-log.js";
import type { PendingHub } from "../approvals/pending-hub.js";
import type { ButtonPress, PressResult } from "../core/button-press.js";
import type { InboundMessage } from "../core/inbound-message.js";
import type { ThreadOutputFactory } from "../core/thread-output.js";
import { type PlatformUser, sessionKeyOf, type ThreadTarget } from "../core/thread-target.js";
import type { CommandOptions, ConversationService, ReceiveResult } from "./contracts.js";
import { dedupeKeysOf, type InboundDedupe } from "./inbound-dedupe.js";
import { describeProblems } from "../core/schema-problems.js";
import { buttonPressSchema, inboundMessageSchema } from "./inbound-schema.js";
import type { ItemCards } from "./item-cards.js";
import type { LiveSession } from "./live-session.js";
import type { ModuleCommands } from "./module-commands.js";
import type { MultiProcessSessions } from "./multi-process.js";
import type { ParkedTurns } from "./parked-turns.js";
import type { SessionCache } from "./session-cache.js";
import type { ThreadCommands } from "./session-commands.js";
import type { SessionManagerOptions } from "./session-manager-options.js";
import type { SessionParts } from "./session-parts.js";
import type { QueueCap } from "./queue-cap.js";
import { queuedMessageOf } from "./session-record.js";
import { retryRefusal } from "./retry-requester.js";
import type { SessionRecords } from "./session-records.js";
import type { SessionReviewer } from "./session-reviewer.js";
import type { StandingItemMoves } from "./standing-item-moves.js";
import {
  alwaysCommand,
  isAnotherBotsCommand,
  parseCommand,
  parseTextCommand,
} from "../core/text-commands.js";
import type { ThreadOutputs } from "./thread-outputs.js";
import type { DrainReport } from "./pump-drain.js";
import type { TurnScheduler } from "./turn-scheduler.js";
import { queuedWake, type WakeResult, type WakeTurn, waitingRunOf, wakeTurnSchema } from "./wake-turns.js";

export type { EngineContext, EngineFactory } from "./engine-context.js";
export type { SessionManagerOptions } from "./session-manager-options.js";
export type { SessionParts } from "./session-parts.js";
export type { DrainReport } from "./pump-drain.js";
export type { TurnEnd } from "./turn-executor.js";
export type { ExtraCommand } from "./extra-commands.js";
export type { WakeResult, WakeTurn } from "./wake-turns.js";

/** The durable, per-thread session layer. */
export class SessionManager implements ConversationService {
  private readonly logger: Logger;
  private readonly outputs: ThreadOutputs;
  private readonly dedupe: InboundDedupe;
  private readonly hub: PendingHub;
  private readonly cache: SessionCache;
  private readonly scheduler: TurnScheduler;
  private readonly commands: Pick<ThreadCommands, "execute">;
  /** Set when several processes share the store (a distributed coordination). */
  private readonly multi: MultiProcessSessions | undefined;
  private readonly auditLog: AuditLog;
  private readonly records: SessionRecords;
  private readonly reviewer: SessionReviewer;
  private readonly items: ItemCards;
  private readonly moduleCommands: ModuleCommands;
  private readonly parked: ParkedTurns;
  private readonly queueCap: QueueCap;
  private readonly moves: StandingItemMoves;

  /**
   * On collaborators the composition root built from the same `options` (src/app/session-layer.ts
   * builds both: `createSessionManager`).
   */
  constructor(
    private readonly options: SessionManagerOptions,
    parts: SessionParts,
  ) {
    this.logger = parts.logger;
    this.outputs = parts.outputs;
    this.dedupe = parts.dedupe;
    this.hub = parts.hub;
    this.cache = parts.cache;
    this.scheduler = parts.scheduler;
    this.commands = parts.commands;
    this.auditLog = parts.auditLog;
    this.records = parts.records;
    this.reviewer = parts.reviewer;
    this.items = parts.items;
    this.moduleCommands = parts.moduleCommands;
    this.parked = parts.parked;
    this.multi = parts.multi;
    // A person whose queued message cannot be read is told in its thread, not left waiting.
    this.multi?.tellUnreadableInput((target, text) => this.notify(target, text));
    this.queueCap = parts.queueCap;
    this.moves = parts.moves;
  }

  /** A channel registers how to reach its threads (also used to resume after a restart). */
  registerOutput(platform: string, factory: ThreadOutputFactory): void {
    this.outputs.register(platform, factory);
  }

  /**
   * After a restart: expire pending items that expired while down (their turns then finish with a
   * denial), re-arm expiry timers, and continue sessions that had work in progress — except those
   * parked at a person, which continue when the person answers.
   */
  async start(): Promise<void> {
    await this.reviewer.stats.replay(this.options.auditLogPath);
    await this.multi?.start();
    await this.parked.start(await this.records.activeIds());
  }

  /**
   * Dedupe, then answer a command, a pending question, steer the running turn, or queue a turn.
   * Exactly once across a crash: a message for a turn is queued (with its dedupe keys) before its
   * keys are recorded as seen, and a redelivery is recognised from the queue or from those marks.
   */
  async receive(message: InboundMessage): Promise<ReceiveResult> {
    const parsed = inboundMessageSchema.safeParse(message);
    if (!parsed.success)
      return { status: "ignored", reason: `invalid message: ${describeProblems(parsed.error)}` };
    if (this.scheduler.draining) return { status: "ignored", reason: "shutting down" };
    const keys = dedupeKeysOf(message.dedupeKeys);
    const release = this.dedupe.claim(keys);
    if (!release) return { status: "duplicate" };
    try {
      return await this.intake(message, keys);
    } finally {
      release();
    }
  }

  private async intake(message: InboundMessage, keys: readonly string[]): Promise<ReceiveResult> {
    const duplicate = { status: "duplicate" } as const;
    // Another bot's command (`/new@OtherBot`) is neither run nor a message for the agent.
    if (isAnotherBotsCommand(message.text, message.botUsername))
      return (await this.dedupe.firstSeen(keys))
        ? { status: "ignored", reason: "another bot's command" }
        : duplicate;
    const extra = this.moduleCommands.matchText(message.text);
    const command = extra ? undefined : parseTextCommand(message.text, message.botUsername);
    if ((extra || command) && !(await this.answersWithOption(message))) {
      if (!(await this.dedupe.firstSeen(keys))) return duplicate;
      const reply = extra
        ? await this.moduleCommands.run(message.target, message.user, extra)
        : {
            text: command?.ok
              ? await this.commands.execute(message.target, message.user, command.command)
              : (command?.error ?? ""),
            items: [],
          };
      const { text, cards } = this.moduleCommands.listing(message.target, reply);
      await this.reply(message.target, text);
      await this.moduleCommands.postItems(message.target, cards);
      return { status: "command" };
    }
    // A message with no words and no file saved may still bring the service's notes about files
    // (one not saved, with the reason): the model is told them, so it can tell the person.
    if (message.text.trim() === "" && message.files.length === 0 && !message.attachments?.length)
      return (await this.dedupe.firstSeen(keys)) ? { status: "ignored", reason: "empty message" } : duplicate;
    // The "seen before?" read runs alongside the session lookup; isRedelivery uses it when no write
    // of these keys overlapped it. Several processes: the offer of the message is what checks (and
    // claims) its keys, in the same step as queueing it; here only the record is asked.
    if (!this.multi) this.dedupe.prefetch(keys);
    const live =
      this.cache.inMemoryFor(message.target) ?? (await this.cache.forTarget(message.target, message.user));
    live.holds++;
    try {
      if (this.multi ? live.holdsDelivery(keys) : await live.isRedelivery(keys)) {
        await this.dedupe.record(keys);
        return duplicate;
      }
      const answered = await this.parked.answerText(live, message, keys);
      if (answered) return answered === "redelivered" ? duplicate : { status: "answered" };
      const queued = queuedMessageOf(message, keys);
      // Several processes: the holder counts the queue as it takes the message (this copy may be old).
      if (this.multi) {
        const steer = this.options.defaults.queueMode === "steer";
        const offered = await this.scheduler.offer(live, queued, { steer, capped: true });
        return offered === "duplicate" ? duplicate : { status: "queued" };
      }
      if (!this.queueCap.admits(live, queued.user))
        return { status: "ignored", reason: await this.queueCap.refuse(live, queued.user) };
      if (
        this.options.defaults.queueMode === "steer" &&
        this.scheduler.takesSteeringFrom(live, queued.user) &&
        (await this.scheduler.steer(live, queued))
      ) {
        await live.recordDelivery(keys);
        return { status: "queued" };
      }
      if (await this.scheduler.startNow(live, queued)) return { status: "started" };
      const wasBusy = await live.enqueue(queued);
      await live.recordDelivery(keys);
      this.scheduler.schedule(live);
      return { status: wasBusy ? "queued" : "started" };
    } finally {
      live.holds--;
    }
  }

  /**
   * Whether a bare command word is an option of the sender's open question here (it answers it).
   * A command whatever is open (`stop`, the slash form) reads nothing.
   */
  private async answersWithOption(message: InboundMessage): Promise<boolean> {
    if (alwaysCommand(message.text)) return false;
    const sessionId = await this.records.currentId(sessionKeyOf(message.target));
    return sessionId !== undefined && this.parked.answersWithOption(sessionId, message);
  }

  /**
   * A card button (approval / question / plan) or a control button (stop / retry: in a shared
   * thread only the failed turn's requester or an approver may retry it, and it runs as the
   * requester — retry-requester.ts).
   */
  async press(press: ButtonPress): Promise<PressResult> {
    const parsed = buttonPressSchema.safeParse(press);
    if (!parsed.success)
      return { status: "invalid", message: `Invalid press: ${describeProblems(parsed.error)}` };
    if (press.kind === "card") {
      if (this.items.owns(press.pendingId)) return this.items.press(press);
      return this.reviewer.denials.handles(press)
        ? this.reviewer.denials.press(press)
        : this.parked.press(press);
    }
    if (press.control === "stop")
      return {
        status: "accepted",
        message: await this.commands.execute(press.target, press.user, { name: "stop" }),
      };
    const live = await this.cache.existingFor(press.target);
    if (!live) return { status: "invalid", message: "There is nothing to retry in this thread." };
    const refusal = retryRefusal(live, press.user, this.options.approvals);
    if (refusal) return { status: "not_allowed", message: refusal };
    const retried = this.multi
      ? await this.multi.retry(live, press.user)
      : this.scheduler.retry(live, press.user);
    return retried
      ? { status: "accepted", message: "Retrying." }
      : { status: "invalid", message: "A turn is already running." };
  }

  /**
   * A slash command (or its text form); resolves with the reply to show. A listing's item cards
   * are posted first: the reply is shown as the command's answer. Shown `privately`, the items
   * are written into the reply instead (see CommandOptions).
   */
  async command(
    target: ThreadTarget,
    user: PlatformUser,
    name: string,
    args: readonly string[],
    options: CommandOptions = {},
  ): Promise<string> {
    const extra = this.moduleCommands.matchSlash(name, args);
    if (extra) {
      const reply = await this.moduleCommands.run(target, user, extra);
      const { text, cards } = this.moduleCommands.listing(target, reply, options.privately);
      await this.moduleCommands.postItems(target, cards);
      return text;
    }
    const parsed = parseCommand(name, args);
    if (!parsed.ok) return parsed.error;
    return this.commands.execute(target, user, parsed.command);
  }

  /** Record an interaction's ids as seen; true when none was seen before (see ConversationService). */
  firstDelivery(keys: readonly string[]): Promise<boolean> {
    return this.dedupe.firstSeen(keys);
  }

  /** Whether the thread has a session (channels ask after a restart whether a reply continues one). */
  async hasSession(target: ThreadTarget): Promise<boolean> {
    return (await this.records.currentId(sessionKeyOf(target))) !== undefined;
  }

  /**
   * Whether the session runs a turn (or has turns queued), or waits for a person's decision. With
   * several processes, one that is idle here may be busy in another: then a promise answers from
   * the shared store (its lease is held, or items are open for it).
   */
  isBusy(sessionId: string): boolean | Promise<boolean> {
    if (this.hub.waitingSessions().has(sessionId)) return true;
    if (this.cache.live().some((live) => live.id === sessionId && live.busy)) return true;
    if (!this.multi) return false;
    const multi = this.multi;
    return (async () => (await multi.isHeld(sessionId)) || (await this.hub.hasOpenItems(sessionId)))();
  }

  /**
   * Queue a wake turn (a channel subscription's batch, a scheduled run) in its thread's current
   * session and start it when the session is free. Standing items belong to the thread: one made
   * in a session that "new" has replaced since wakes the session that replaced it. "gone" when
   * the session is unknown or not the thread's, "skipped" for a scheduled run whose task's
   * previous run still waits there. Rejects while shutting down (the caller keeps the batch for
   * the next start), while the thread is being switched to a new session, or for an invalid turn.
   */
  async wake(turn: WakeTurn): Promise<WakeResult> {
    const parsed = wakeTurnSchema.safeParse(turn);
    if (!parsed.success) throw new Error(`invalid wake turn: ${describeProblems(parsed.error)}`);
    if (this.scheduler.draining) throw new Error("the session layer is shutting down");
    const live = await this.wokenSession(turn);
    if (typeof live === "string") return { status: "gone", reason: live };
    if (live.retired) throw new Error("its thread is being switched to a new session");
    const waiting = waitingRunOf(live.record, turn);
    if (waiting) return { status: "skipped", reason: waiting };
    const queued = queuedWake(turn, (this.options.now?.() ?? new Date()).toISOString());
    return { status: await this.scheduler.submit(live, queued) };
  }

  /**
   * The session a wake turn runs in: its thread's current one, when the turn's session is or was
   * that thread's (replaced since by "new"); else why it is gone. The replaced session's record
   * alone is read, never its history.
   */
  private async wokenSession(turn: WakeTurn): Promise<LiveSession | string> {
    const key = sessionKeyOf(turn.target);
    const current = await this.records.currentId(key);
    if (current !== turn.sessionId) {
      const own = await this.records.get(turn.sessionId);
      if (!own) return "the conversation no longer exists";
      if (own.key !== key) return "the session belongs to another conversation";
    }
    const live = current === undefined ? undefined : await this.cache.byId(current);
    return live ?? "the conversation no longer exists";
  }

  /** Post a short notice into a thread through its platform's output; rejects when that fails. */
  async notify(target: ThreadTarget, text: string): Promise<void> {
    const output = this.outputs.outputFor(target);
    if (!output) throw new Error(`no output is registered for ${target.platform}`);
    await output.postText(text);
  }

  /**
   * Shut down: take no new messages, wait up to `graceMs` for running turns, interrupt the rest
   * (their open tool calls are answered, none is orphaned), leave turns parked at a person for
   * after the restart, stop expiry timers and flush the audit log. Standing-item moves are tried
   * again no more (their marks stay for the next load).
   */
  async drain(graceMs: number): Promise<DrainReport> {
    this.moves.stop();
    const report = await this.scheduler.drain(
      graceMs,
      (live) => this.hub.waitingSessions().has(live.id),
      () => this.hub.nextWait(),
    );
    await this.hub.quiesce();
    this.hub.stopTimers();
    this.parked.stopRetries();
    await this.multi?.stop();
    await this.auditLog.flush();
    this.logger.info(report, "sessions drained");
    return report;
  }

  /**
   * Resolves when no turn is running or queued in this process, and idle sessions over the
   * in-memory cap have left it (tests, tools).
   */
  async idle(): Promise<void> {
    await this.scheduler.idle();
    await this.cache.settled();
  }

  /** For /readyz: true in one process; with several, whether coordination and lease renewals work. */
  async coordinationReady(): Promise<boolean> {
    return this.multi ? this.multi.ready() : true;
  }

  /** How many sessions are loaded in memory. */
  get sessionsInMemory(): number {
    return this.cache.size;
  }

  private async reply(target: ThreadTarget, text: string): Promise<void> {
    try {
      await this.outputs.outputFor(target)?.postText(text);
    } catch (error) {
      this.logger.warn({ err: error }, "posting a command reply failed");
    }
  }
}
