/**
 * The session layer's composition root: validates the SessionManager's options, builds every
 * collaborator the manager works with — audit log, inbound dedupe, pending store and hub,
 * approval and question services, the reviewer parts, session records and cache, the engines'
 * stored compaction states, the turn scheduler (on the injected session lock, else the in-process
 * one), item cards, the parked turns, module and thread commands, the thread outputs — wires them
 * to each other, and hands them to the manager.
 * The app and the tests' stack builder both build their SessionManager here.
 */
import type { Logger } from "pino";
import { ApprovalService } from "../approvals/approval-service.js";
import { AuditLog } from "../approvals/audit-log.js";
import { approvalsConfigSchema } from "../approvals/authorisation.js";
import { claimAcrossProcesses, ExpiryTimers } from "../approvals/expiry-timers.js";
import { PendingHub } from "../approvals/pending-hub.js";
import { PendingStore } from "../approvals/pending-store.js";
import { QuestionService } from "../approvals/question-service.js";
import { permissionModeSchema } from "../core/modes.js";
import { engineContextOf } from "../sessions/engine-context.js";
import { InboundDedupe } from "../sessions/inbound-dedupe.js";
import { ItemCards } from "../sessions/item-cards.js";
import type { LiveSession } from "../sessions/live-session.js";
import { ModuleCommands } from "../sessions/module-commands.js";
import { MultiProcessSessions } from "../sessions/multi-process.js";
import { ParkedTurns } from "../sessions/parked-turns.js";
import { QueueCap } from "../sessions/queue-cap.js";
import { SessionCache } from "../sessions/session-cache.js";
import { ThreadCommands } from "../sessions/session-commands.js";
import { InProcessSessionLock } from "../sessions/session-lock.js";
import { SessionManager, type SessionManagerOptions } from "../sessions/session-manager.js";
import type { SessionParts } from "../sessions/session-parts.js";
import { newSessionId } from "../sessions/session-id.js";
import { SessionRecords } from "../sessions/session-records.js";
import { addGrant, sessionReviewer } from "../sessions/session-reviewer.js";
import { DEFAULT_TURNS_PER_PERSON, PersonTurnSlots } from "../sessions/person-turn-slots.js";
import { SharedTurnSlots } from "../sessions/shared-turn-slots.js";
import { ThreadOutputs } from "../sessions/thread-outputs.js";
import { StandingItemMoves } from "../sessions/standing-item-moves.js";
import { TurnEndSaves } from "../sessions/turn-end-saves.js";
import { TurnScheduler } from "../sessions/turn-scheduler.js";
import { WorkspaceDownloads } from "../sessions/workspace-downloads.js";
import { HistoryLog } from "../store/history-log.js";
import { CompactionStates } from "./compaction-states.js";

/** Throws when the options are invalid (bad approver ids, mode, limits). */
function validate(options: SessionManagerOptions): void {
  approvalsConfigSchema.parse(options.approvals);
  permissionModeSchema.parse(options.defaults.mode);
  for (const [name, value] of [
    ["defaults.maxSteps", options.defaults.maxSteps],
    ["maxSessionsInMemory", options.maxSessionsInMemory],
  ] as const)
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
}

/** Build the SessionManager's collaborators from `options`, wired to each other. */
export function sessionParts(options: SessionManagerOptions): SessionParts {
  validate(options);
  const now = options.now ?? (() => new Date());
  const logger = options.logger.child({ component: "sessions" });
  const multi = options.coordination?.distributed
    ? new MultiProcessSessions({
        coordination: options.coordination,
        sessions: options.store.space("sessions"),
        marksOf: (keys) => dedupe.marksOf(keys),
        processId: options.processId,
        timing: options.leaseTiming,
        logger,
      })
    : undefined;
  const turnSpace = (ns: "sessions" | "history" | "journal") =>
    multi ? multi.space(options.store.space(ns), ns) : options.store.space(ns);
  const outputs = new ThreadOutputs(logger);
  const outputFor = outputs.outputFor.bind(outputs);
  // Several processes: whether this one holds a session's lease now (undefined in one process).
  const holdsSession = multi && ((sessionId: string) => multi.holdsHere(sessionId));
  const auditLog = new AuditLog(options.auditLogPath, options.logger.child({ component: "audit" }));
  const dedupe = new InboundDedupe(options.store);
  const pending = new PendingStore(options.store, now, undefined, multi && options.coordination);
  const hub: PendingHub = new PendingHub({
    store: pending,
    config: options.approvals,
    logger,
    now,
    outputFor,
    deliveries: dedupe,
    // Several processes: a turn parked here for a session another process took over takes no decision.
    ...(holdsSession ? { holdsSession } : {}),
    // Several processes on one store: an item's expiry is claimed there, so one process expires it.
    timers: new ExpiryTimers(
      now,
      (id) => void parked.expire(id),
      claimAcrossProcesses(options.coordination).claim,
      (err, id) => logger.error({ err, pendingId: id }, "expiry claim failed"),
    ),
  });
  const reviewer = sessionReviewer({
    options,
    auditLog,
    logger,
    now,
    outputFor,
    liveById: (sessionId) => cache.byId(sessionId),
    grantWhereHeld: multi && ((live, grant) => multi.grant(live, grant)),
  });
  const services = {
    approvals: new ApprovalService(hub),
    questions: new QuestionService(hub),
    denials: reviewer.denials,
    audit: reviewer.audit,
  };
  // Each engine the session gets (first load, after an eviction, a rebuild) finds its summary.
  const compactionStates = new CompactionStates(options.store.space("compaction"), logger);
  const bindEngine = (live: LiveSession): void =>
    live.bindEngine(
      options.createEngine({
        ...engineContextOf(live, services),
        compactionState: compactionStates.forSession(live.id),
      }),
    );
  // "new" moves the thread's standing items; a move cut short is finished when the session loads.
  const moves = new StandingItemMoves({
    move: async (oldId, newId) => options.onSessionReplaced?.(oldId, newId),
    tell: async (target, text) => {
      const output = outputFor(target);
      if (!output) throw new Error(`no output is registered for ${target.platform}`);
      await output.postText(text);
    },
    ...(holdsSession ? { mayWrite: holdsSession } : {}),
    ...(options.itemMoveRetryMs ? { retryDelaysMs: options.itemMoveRetryMs } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    logger,
  });
  const records = new SessionRecords(turnSpace("sessions"), multi?.records);
  const endSaves = new TurnEndSaves(logger);
  const cache: SessionCache = new SessionCache({
    stores: {
      records,
      // One record of downloaded files for the workspace every session works in.
      downloads: new WorkspaceDownloads(records.downloads, options.workspace.root, logger),
      history: new HistoryLog(turnSpace("history")),
      journal: turnSpace("journal"),
      dedupe,
      now,
      // Several processes: the turn state goes through fenced scripts on its own connection.
      writesInOrder: !multi && options.store.writesInOrder,
      logger,
      // A session's history is read from where its summary ends (sessions/live-history.ts).
      compactionAnchor: (sessionId) => compactionStates.anchorOf(sessionId),
    },
    capacity: options.maxSessionsInMemory,
    defaults: options.defaults,
    newId: options.newId ?? (() => newSessionId()),
    prepare: (live) => {
      bindEngine(live);
      void moves.finish(live);
    },
    endSaves,
    isPinned: (live) => hub.waitingSessions().has(live.id),
    ...(multi ? { onEvict: (sessionId: string) => multi.forgetSession(sessionId), sharedIndex: true } : {}),
  });
  const tellIdle = (sessionId: string): void => {
    try {
      options.onIdle?.(sessionId);
    } catch (error) {
      logger.warn({ err: error, sessionId }, "an idle listener failed");
    }
  };
  const scheduler = new TurnScheduler({
    lock: options.lock ?? new InProcessSessionLock(),
    outputFor,
    settings: { workspace: options.workspace, maxSteps: options.defaults.maxSteps },
    logger,
    now,
    onIdle: (live) => {
      cache.trim();
      tellIdle(live.id);
    },
    rebind: bindEngine,
    endSaves,
    // Several processes: a person's turns are counted across all of them, through the coordination.
    slots:
      multi && options.coordination
        ? new SharedTurnSlots({
            coordination: options.coordination,
            perPerson: options.maxTurnsPerPerson ?? DEFAULT_TURNS_PER_PERSON,
            processId: multi.processId,
            timing: options.leaseTiming,
            logger,
          })
        : new PersonTurnSlots(options.maxTurnsPerPerson ?? DEFAULT_TURNS_PER_PERSON),
    ...(options.onTurnEnd ? { onTurnEnd: options.onTurnEnd } : {}),
    ...(multi && holdsSession ? { gate: multi.gate, holdsSession } : {}),
  });
  const parked = new ParkedTurns({
    hub,
    cache,
    scheduler,
    logger,
    ...(multi
      ? {
          resumeShared: (sessionId: string) => multi.resume(sessionId),
          copyIsCurrent: holdsSession,
        }
      : {}),
  });
  const items = new ItemCards(options.itemCancellers ?? [], outputFor);
  const moduleCommands = new ModuleCommands({
    commands: options.extraCommands ?? [],
    cache,
    scheduler,
    items,
    logger,
    now,
  });
  const threadCommands = new ThreadCommands({
    cache,
    scheduler,
    hub,
    pressCard: (press) => parked.press(press),
    mayActIn: options.mayActIn,
    pending,
    statusExtras: options.statusExtras,
    reviewerStats: reviewer.stats,
    approvals: options.approvals,
    models: { default: options.defaults.model, choices: options.defaults.modelChoices ?? [] },
    ...(holdsSession ? { mayReplace: holdsSession } : {}),
    audit: reviewer.audit,
    finishMove: (live) => moves.finish(live),
    now,
  });
  const queueCap = new QueueCap(outputs, logger);
  const commands = multi
    ? routedCommands(threadCommands, multi, { cache, scheduler, hub, outputs, logger, bindEngine, queueCap })
    : threadCommands;
  return {
    logger,
    outputs,
    dedupe,
    hub,
    reviewer,
    records,
    cache,
    scheduler,
    items,
    moduleCommands,
    commands,
    auditLog,
    parked,
    multi,
    queueCap,
    moves,
  };
}

/** What routing commands between processes needs of the session layer. */
interface RoutingParts {
  readonly cache: SessionCache;
  readonly scheduler: TurnScheduler;
  readonly hub: PendingHub;
  readonly outputs: ThreadOutputs;
  readonly logger: Logger;
  readonly bindEngine: (live: LiveSession) => void;
  readonly queueCap: QueueCap;
}

/**
 * Thread commands run where the thread's session is held (MultiProcessSessions.command) — a
 * command that starts the thread's session too, once started; the holding process runs the
 * commands passed to it (passing on those that reach it after it let go) and posts their replies
 * in the thread. The thread's session is looked up once, here, and the command acts on that one
 * (ThreadCommands.executeOn): a session another process started or switched the thread to after
 * the look-up is never changed here, where it is not held — its copy saved here would go to the
 * store unfenced, over the record its holder is running (a "stop" racing the thread's first
 * message on another process would clear that record's queue).
 */
function routedCommands(
  commands: ThreadCommands,
  multi: MultiProcessSessions,
  parts: RoutingParts,
): Pick<ThreadCommands, "execute"> {
  const { cache, scheduler, hub, outputs, logger, queueCap } = parts;
  multi.bind({
    liveById: (sessionId) => cache.byId(sessionId),
    schedule: (live, lease) => scheduler.schedule(live, lease && { lease }),
    rebind: parts.bindEngine,
    steer: (live, message) => scheduler.steer(live, message),
    retry: (live, user) => scheduler.retry(live, user),
    isParked: (sessionId) => hub.waitingSessions().has(sessionId),
    parkedSessions: () => hub.waitingSessions(),
    recheckSettled: (sessionId) => hub.recheckSession(sessionId),
    addGrant,
    queueCap,
    runCommand: async (live, target, user, command) => {
      const reply = await commands.executeOn(live, target, user, command);
      try {
        await outputs.outputFor(target)?.postText(reply);
      } catch (error) {
        logger.warn({ err: error }, "posting a command reply failed");
      }
    },
  });
  return {
    execute: async (target, user, command) => {
      // A session the command starts is started first, so the command runs where it is held too.
      const live = await commands.sessionFor(target, user, command);
      const run = () => commands.executeOn(live, target, user, command);
      return live ? multi.command(live, target, user, command, run) : run();
    },
  };
}

/** A SessionManager on the collaborators built from `options`; throws when the options are invalid. */
export function createSessionManager(options: SessionManagerOptions): SessionManager {
  return new SessionManager(options, sessionParts(options));
}
