/**
 * LiveSession: one session loaded into memory — its record, its open history, live grants and
 * facts, its engine, and the turn currently running. Record changes are saved in order; the
 * engine's history appends and tool-start journal entries are written through `persistence`
 * before the engine moves on. The session is its history's only writer (the session lock keeps
 * one turn at a time), so appends read nothing back from the store. A queued message's dedupe
 * keys are recorded as seen before any record without that message is saved, so a redelivery is
 * recognised either from the queue or from the dedupe marks — also after a crash in between
 * (which keys a change lets go of: delivery-keys.ts).
 * Its facts' downloaded files are its workspace's, shared with every session on it
 * (workspace-downloads.ts), written to their log as they come; a record stored with the list they
 * were once kept in has it folded into the log, and is saved without it once they are stored (a
 * save waits for the files added before it).
 * Its history is the stored history's newest messages (store/history-window.ts), from the
 * compaction summary's anchor on when there is one; each load prunes the pages no load reads again.
 */
import type { Logger } from "pino";
import type { ToolCallRecord, ConversationMessage } from "../core/messages.js";
import { isoTime } from "../core/iso-time.js";
import { canonicalJson } from "../engine/call-identity.js";
import { GrantSet } from "../engine/permissions/grants.js";
import type { SessionTurnEngine } from "../engine/session-turn-engine.js";
import type { TurnPersistence } from "../engine/turn-engine.js";
import type { HistoryLog, SessionHistory } from "../store/history-log.js";
import type { KeyValueSpace } from "../store/store.js";
import { type ParkedTurn, parkTurn, unansweredCalls } from "../approvals/parked-turn.js";
import type { PendingPerson } from "../approvals/pending-item.js";
import type { PlatformUser } from "../core/thread-target.js";
import { holdsDelivery, RecordedDeliveryKeys } from "./delivery-keys.js";
import type { DownloadedFiles } from "./downloaded-files.js";
import { type LiveHistoryStores, type OpenedHistory, openRecordHistory } from "./live-history.js";
import type { InboundDedupe } from "./inbound-dedupe.js";
import {
  hasPendingWork,
  type QueuedMessage,
  type SessionRecord,
  stampedVersion,
  type TargetExtra,
  withStarter,
} from "./session-record.js";
import type { SessionRecords } from "./session-records.js";
import { ToolStartJournal } from "./tool-start-journal.js";
import type { WorkspaceDownloads } from "./workspace-downloads.js";

export interface LiveSessionStores {
  readonly records: SessionRecords;
  /** The files downloaded into the workspace, by any session on it. */
  readonly downloads: WorkspaceDownloads;
  readonly history: HistoryLog;
  readonly journal: KeyValueSpace;
  readonly dedupe: InboundDedupe;
  readonly now: () => Date;
  /**
   * Whether the record and dedupe writes are applied in the order issued (Store.writesInOrder):
   * a save then issues its dedupe marks and the record together instead of one after the other.
   */
  readonly writesInOrder: boolean;
  /** Where a failed or unreadable record of downloaded files, or a failed prune, is reported. */
  readonly logger: Logger;
  /** Where the session's compaction summary ends (live-history.ts). */
  readonly compactionAnchor?: LiveHistoryStores["compactionAnchor"];
}

/** The turn a session is running now. */
export interface ActiveTurn {
  readonly turnId: string;
  readonly requester: PendingPerson;
  /** The triggering message's platform details: the turn's replies and cards thread to it. */
  readonly replyTo?: TargetExtra;
  /** No person's message started the turn (a wake-up, a scheduled run, a watched channel's batch). */
  readonly woken?: true;
}

/** A session in memory. */
export class LiveSession {
  grants: GrantSet;
  /** What tools and permissions share about the session: the files downloaded into its workspace, kept in their log. */
  readonly facts: { readonly downloadedFiles: DownloadedFiles };
  /** The running pump (turns one after another under the session lock), if any. */
  pump: Promise<void> | undefined;
  activeTurn: ActiveTurn | undefined;
  /** Who pressed Retry on the last turn, until the pump takes it (it runs as the requester: retry-requester.ts). */
  retryBy: PlatformUser | undefined;
  /** In-flight operations using this instance (it must not be evicted meanwhile). */
  holds = 0;
  /** Set by "stop": steering the engine still holds must be dropped once the turn ends. */
  discardSteering = false;
  /** Set by "new": this session is no longer the thread's current one. */
  retired = false;
  private engineInstance: SessionTurnEngine | undefined;
  private current: SessionRecord;
  /** The saves so far, failures swallowed: the next save starts after them. */
  private saves: Promise<unknown> = Promise.resolve();
  /** The last record save, failure included: no tool starts while the latest change is unsaved. */
  private lastSave: Promise<unknown> = Promise.resolve();
  /** Set while a record change made by `defer` is not saved yet: the dedupe keys it let go of. */
  private deferredLeaving: string[] | undefined;
  /** Dedupe keys of queued messages already recorded as seen (in memory: empty after a reload). */
  private readonly recordedKeys = new RecordedDeliveryKeys();

  private log: SessionHistory;
  private readonly toolStarts: ToolStartJournal;

  private constructor(
    record: SessionRecord,
    opened: OpenedHistory,
    private readonly stores: LiveSessionStores,
    downloadedFiles: DownloadedFiles,
  ) {
    this.facts = { downloadedFiles };
    this.toolStarts = new ToolStartJournal(stores.journal, record.id);
    this.log = opened.log;
    // A record from before `startedBy` was kept gets its starter here, once per load (see
    // withStarter); it is saved with the session's next write.
    this.current = withStarter(this.foldDownloads(record), opened.opening);
    this.grants = this.grantsOf(record);
  }

  /**
   * `record` without the list of downloaded files records once held: its files join the session's
   * (written to the log, and a save waits for that), and no save carries the list again.
   */
  private foldDownloads(record: SessionRecord): SessionRecord {
    if (record.downloadedFiles === undefined) return record;
    for (const file of record.downloadedFiles) this.facts.downloadedFiles.add(file);
    return { ...record, downloadedFiles: undefined };
  }

  private grantsOf(record: SessionRecord): GrantSet {
    const grants = new GrantSet(record.grants);
    grants.onChange((list) => {
      if (this.grants === grants)
        this.updateUnawaited((r) => ({ ...r, grants: [...list] }), "the session's grants");
    });
    return grants;
  }

  /**
   * Take over what another process stored since this copy was loaded (it ran the session's turns
   * meanwhile): the record, history, grants and facts are read again. True when anything had
   * changed — then the session needs a fresh engine (bound to the new grants and facts).
   */
  async reload(): Promise<boolean> {
    await this.flush();
    const [found] = await Promise.all([
      this.stores.records.get(this.id),
      this.facts.downloadedFiles.catchUp(),
    ]);
    if (!found) return false;
    const stored = this.foldDownloads(found);
    // A stored record without a starter is compared as this copy filled it in (from the same
    // history, unless the record changed too).
    const starter = stored.startedBy ?? this.current.startedBy;
    if (canonicalJson({ ...stored, startedBy: starter }) === canonicalJson(this.current)) return false;
    const known = starter ? { ...stored, startedBy: starter } : stored;
    const opened = await openRecordHistory(known, this.stores);
    this.log = opened.log;
    this.current = withStarter(known, opened.opening);
    this.grants = this.grantsOf(stored);
    this.recordedKeys.clear();
    return true;
  }

  /** Load a session's history and its workspace's downloaded files, and wrap its record. */
  static async load(record: SessionRecord, stores: LiveSessionStores): Promise<LiveSession> {
    const [opened, downloads] = await Promise.all([
      openRecordHistory(record, stores),
      stores.downloads.forStoredSession(record.id),
    ]);
    return new LiveSession(record, opened, stores, downloads);
  }

  /**
   * Wrap the record of a session created just now (empty history: nothing is read); its downloaded
   * files are its workspace's as the last `stores.downloads.current()` read them (awaited first).
   */
  static create(record: SessionRecord, stores: LiveSessionStores): LiveSession {
    return new LiveSession(
      record,
      { log: stores.history.openNew(record.id), opening: [] },
      stores,
      stores.downloads.files,
    );
  }

  get id(): string {
    return this.current.id;
  }

  get record(): SessionRecord {
    return this.current;
  }

  /**
   * The persisted history since `historyStart`, oldest first; every message is deep-frozen
   * (request snapshots share them).
   */
  get history(): readonly ConversationMessage[] {
    return this.log.messages;
  }

  /** How many of the session's stored messages come before `history` (they were not read). */
  get historyStart(): number {
    return this.log.start;
  }

  /** How many messages the session's whole history holds: a position in it that later loads agree on. */
  get historyCount(): number {
    return this.log.count;
  }

  get engine(): SessionTurnEngine {
    if (!this.engineInstance) throw new Error(`session ${this.id} has no engine bound`);
    return this.engineInstance;
  }

  bindEngine(engine: SessionTurnEngine): void {
    this.engineInstance = engine;
  }

  /** Whether a pump is running for this session (a turn, or turns queued behind it). */
  get busy(): boolean {
    return this.pump !== undefined;
  }

  /** Whether this instance must stay in memory: busy, or in use by a request being handled. */
  get inUse(): boolean {
    return this.busy || this.holds > 0;
  }

  /** Whether a record change made by `defer` waits for the next save. */
  get hasUnsavedChange(): boolean {
    return this.deferredLeaving !== undefined;
  }

  /**
   * Change the record and save it; saves happen in call order. Resolves once saved. Messages that
   * leave the queue (or the turn in progress) have their dedupe keys recorded first, unless known
   * to be recorded already: where writes keep their order the two go out together (the keys
   * first), else the record only once the keys are saved. A change made by `defer` and not saved
   * yet is saved with this one. With several processes the save removes from the session's shared
   * queue the entries taken in as the record is built here (its own: any taken in before its save
   * runs are not in it, and stay queued).
   */
  update(change: (record: SessionRecord) => SessionRecord): Promise<SessionRecord> {
    const next = stampedVersion(change(this.current), isoTime(this.stores.now()));
    const taken = this.stores.records.takenSoFar(next.id);
    const leaving = [...(this.deferredLeaving ?? []), ...this.recordedKeys.leaving(this.current, next)];
    this.deferredLeaving = undefined;
    this.current = next;
    const { dedupe, records, writesInOrder } = this.stores;
    const saved = this.saves.then(async () => {
      await this.facts.downloadedFiles.written();
      if (leaving.length === 0) await records.put(next, taken);
      else if (!writesInOrder) {
        await dedupe.record(leaving);
        await records.put(next, taken);
      } else await Promise.all([dedupe.record(leaving), records.put(next, taken)]);
      return next;
    });
    this.saves = saved.catch(() => undefined);
    this.lastSave = saved;
    return saved;
  }

  /**
   * `update` for a change nothing waits on (a grant added or revoked, a plan approval's mode): a
   * failed save is logged with the session's id, never left as an unhandled rejection (which would
   * end the process). The change stays in memory and the session's next save carries it (a save
   * writes the whole record); until a save succeeds no tool of the session starts (`lastSave`), so
   * a running turn's next call fails with the store's error, shown in the thread.
   */
  updateUnawaited(change: (record: SessionRecord) => SessionRecord, what: string): void {
    this.update(change).catch((error: unknown) =>
      this.stores.logger.error({ err: error, sessionId: this.id }, `${what} could not be saved`),
    );
  }

  /**
   * Change the record in memory now and save it with the next `update` — one write for both (a
   * finished turn's change and the next turn's start) — or with `flush` when no update comes.
   * The change is frozen, and stamped as a version by the save that carries it.
   */
  defer(change: (record: SessionRecord) => SessionRecord): void {
    const next = Object.freeze(change(this.current));
    this.deferredLeaving = [
      ...(this.deferredLeaving ?? []),
      ...this.recordedKeys.leaving(this.current, next),
    ];
    this.current = next;
    if (!hasPendingWork(next)) this.stores.records.left(next.id);
  }

  /**
   * Add a message another process left in the shared queue (several processes) to the record's
   * queue, in memory only: the record's next save carries it, and removes it from the shared queue
   * in the same step. Its dedupe keys were recorded as seen when it was offered.
   */
  takeShared(message: QueuedMessage): void {
    this.current = Object.freeze({ ...this.current, queue: [...this.current.queue, message] });
    for (const key of message.dedupeKeys ?? []) this.recordedKeys.add(key);
  }

  /** Queue a message for a turn; resolves once saved, with whether work was pending before it. */
  async enqueue(message: QueuedMessage): Promise<boolean> {
    const hadWork = this.busy || this.current.pendingTurn !== undefined || this.current.queue.length > 0;
    await this.update((r) => ({ ...r, queue: [...r.queue, message] }));
    return hadWork;
  }

  /**
   * Whether a delivery with these dedupe keys was taken before: it is still queued, or its keys
   * are recorded as seen. The queue is checked first: a message leaves it only once its keys are
   * recorded. A deferred change's keys are not recorded yet, but the stored record still holds
   * them, so they count as held. The seen marks are read after the saves under way now. A plain
   * function (every message asks): an async one cost a promise more.
   */
  isRedelivery(keys: readonly string[]): Promise<boolean> {
    if (this.holdsDelivery(keys) || this.deferredLeaving?.some((key) => keys.includes(key)))
      return Promise.resolve(true);
    return this.saves.then(() => this.stores.dedupe.seen(keys));
  }

  /**
   * Whether the record holds a delivery under one of these dedupe keys: a queued message (steering
   * included) or the message that started the turn in progress.
   */
  holdsDelivery(keys: readonly string[]): boolean {
    return holdsDelivery(this.current, keys);
  }

  /** Record a queued message's dedupe keys as seen (so it needs no second write when it leaves). */
  async recordDelivery(keys: readonly string[]): Promise<void> {
    await this.stores.dedupe.record(keys);
    for (const key of keys) if (this.holdsDelivery([key])) this.recordedKeys.add(key);
  }

  /**
   * Resolves once every record change so far is saved (a deferred one is saved now), and every
   * downloaded file added so far: a process letting the session go leaves nothing of it unstored.
   */
  flush(): Promise<void> {
    if (this.deferredLeaving) return this.update((record) => record).then(() => undefined);
    return this.saves.then(() => this.facts.downloadedFiles.written());
  }

  /** The engine-facing persistence: history appends and the tool-start journal. */
  readonly persistence: TurnPersistence = {
    // A plain function (every model step appends): an async one cost a promise more per append.
    append: (messages: readonly ConversationMessage[]) => {
      // Where writes may overtake each other, a turn's history is written only once its start is.
      const written = this.stores.writesInOrder
        ? this.log.append(...messages)
        : this.lastSave.then(() => this.log.append(...messages));
      return messages.some(isSteered) ? written.then(() => this.steeringTakenIn(messages)) : written;
    },
    markToolStarted: async (callId: string) => {
      // The turn's start may still be being saved (its model call does not wait): a tool runs only
      // once it is, so a crash never leaves a tool's effects with no turn on record to resume.
      await Promise.all([
        this.lastSave,
        this.toolStarts.markStarted(this.current.pendingTurn, callId, isoTime(this.stores.now())),
      ]);
    },
    startedToolCalls: () => this.toolStarts.startedCalls(this.current.pendingTurn, this.unansweredCalls()),
  };

  /** Steered messages the engine has not taken into the history yet. */
  get untakenSteering(): readonly QueuedMessage[] {
    return this.current.queue.filter((m) => m.steered === true);
  }

  /** The engine took the steered ones of `messages` into the history, in order: they are no longer queued. */
  private async steeringTakenIn(messages: readonly ConversationMessage[]): Promise<void> {
    for (const message of messages) if (isSteered(message)) await this.steeringTaken(message.content);
  }

  /** The engine took a steered message into the history: it is no longer queued. */
  private async steeringTaken(content: string): Promise<void> {
    const taken = this.current.queue.find((m) => m.steered === true && m.text === content);
    if (taken) await this.update((r) => ({ ...r, queue: r.queue.filter((m) => m !== taken) }));
  }

  /** Tool calls in the history that have no result message yet. */
  unansweredCalls(): readonly ToolCallRecord[] {
    return unansweredCalls(this.history);
  }

  /** The turn in progress as a parked state (record marker + history); undefined when none is. */
  parkedTurn(): ParkedTurn | undefined {
    const marker = this.current.pendingTurn;
    return marker && parkTurn(this.id, marker, this.history, this.historyStart);
  }
}

/** Whether `message` is a steered message (one a person sent while the turn ran) taken into the history. */
function isSteered(
  message: ConversationMessage,
): message is Extract<ConversationMessage, { readonly role: "user" }> {
  return message.role === "user" && message.meta?.steered === true;
}
