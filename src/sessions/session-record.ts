/**
 * SessionRecord: the persisted state of one session (everything but its history, which lives in
 * the history log): thread target, mode, model, grants, title, usage totals, the follow-up
 * queue, and the marker of a turn in progress with its request snapshot for durable resume.
 * Stored schema-versioned in the "sessions" space under `rec:<id>`; `key:<session key>` names the
 * thread's current session.
 */
import { z } from "zod";
import { type TurnMarker, turnMarkerSchema } from "../approvals/parked-turn.js";
import { type Attachment, attachmentSchema } from "../core/attachment.js";
import { grantSchema, type Grant } from "../engine/permissions/grants.js";
import type { TokenUsage } from "../core/messages.js";
import { type PermissionMode, permissionModeSchema } from "../core/modes.js";
import { fromVersioned, toVersioned } from "../store/versioned.js";
import { type KeyValueSpace, type SpaceEntry, setAll } from "../store/store.js";
import type { InboundFile, InboundMessage } from "../core/inbound-message.js";
import type { PlatformUser, ThreadTarget } from "../core/thread-target.js";

export const SESSION_RECORD_KIND = "session";

/** An inbound message accepted but not yet started as a turn. */
export interface QueuedMessage {
  readonly user: PlatformUser;
  readonly text: string;
  readonly files: readonly InboundFile[];
  /** Images among the files (see InboundMessage). */
  readonly attachments?: readonly Attachment[];
  readonly sentAt: string;
  /** Sent into a running turn as steering; dropped once the engine takes it into the history. */
  readonly steered?: boolean;
  /** A subscription wake-up: the turn runs as untrusted channel content (channel and a quote of it). */
  readonly channelContent?: ChannelContent;
  /** A scheduled task's run (or a wake-up): the task it serves, told its result when the turn ends. */
  readonly scheduledRun?: ScheduledRunMeta;
  /**
   * The delivery's dedupe keys: a redelivery of a queued message is recognised from the queue, and
   * the keys are recorded as seen before the message leaves the queue.
   */
  readonly dedupeKeys?: readonly string[];
  /** The `target.extra` of the delivery (its reply-to message id…), handed to the turn's renderer. */
  readonly targetExtra?: TargetExtra;
}

/** The scheduled task a turn runs for (`request.metadata.scheduledRun`). */
export interface ScheduledRunMeta {
  readonly taskId: string;
  /** The occurrence this run serves (ISO). */
  readonly dueAt: string;
}

/** Platform details of one delivery's target (ThreadTarget's `extra`). */
export type TargetExtra = Readonly<Record<string, string | number | boolean>>;

/** Where a woken turn's input came from: a watched channel and a short quote of the trigger. */
export interface ChannelContent {
  readonly channel: string;
  readonly quote: string;
}

export interface SessionRecord {
  readonly id: string;
  readonly key: string;
  readonly target: ThreadTarget;
  readonly mode: PermissionMode;
  readonly provider: string;
  readonly model: string;
  readonly grants: readonly Grant[];
  readonly title: string;
  readonly usage: TokenUsage;
  readonly turns: number;
  readonly downloadedFiles: readonly string[];
  readonly queue: readonly QueuedMessage[];
  /** The turn in progress (its marker): with the history, the turn's parked state (parked-turn.ts). */
  readonly pendingTurn?: TurnMarker;
  /**
   * The provenance of the session's latest turn, when it ran on channel content: a retry of that
   * turn stays untrusted whatever the history now ends with (steering a person added, say).
   */
  readonly lastTurnChannelContent?: ChannelContent;
  /** Who started the session (the requester of its first turn a person asked for). */
  readonly startedBy?: PlatformUser;
  /** Who last set the session's mode, when a person did (shown by `status`). */
  readonly modeSetBy?: PlatformUser;
  readonly createdAt: string;
  readonly updatedAt: string;
}

const user = z.object({ id: z.string(), name: z.string() });
const scalar = z.union([z.string(), z.number(), z.boolean()]);
const targetExtraSchema = z.record(z.string(), scalar);

/** Validates a record read back from the store. */
export const sessionRecordSchema = z.object({
  id: z.string().min(1),
  key: z.string().min(1),
  target: z.object({
    platform: z.string().min(1),
    workspace: z.string(),
    channel: z.string(),
    thread: z.string().optional(),
    extra: targetExtraSchema.optional(),
  }),
  mode: permissionModeSchema,
  provider: z.string(),
  model: z.string(),
  grants: z.array(grantSchema),
  title: z.string(),
  usage: z.object({
    inputTokens: z.number().nonnegative(),
    outputTokens: z.number().nonnegative(),
    totalTokens: z.number().nonnegative(),
  }),
  turns: z.number().int().nonnegative(),
  downloadedFiles: z.array(z.string()),
  queue: z.array(
    z.object({
      user,
      text: z.string(),
      files: z.array(z.object({ path: z.string(), name: z.string(), bytes: z.number() })),
      attachments: z.array(attachmentSchema).optional(),
      sentAt: z.string(),
      steered: z.boolean().optional(),
      channelContent: z.object({ channel: z.string(), quote: z.string() }).optional(),
      scheduledRun: z.object({ taskId: z.string(), dueAt: z.string() }).optional(),
      dedupeKeys: z.array(z.string()).optional(),
      targetExtra: targetExtraSchema.optional(),
    }),
  ),
  pendingTurn: turnMarkerSchema.optional(),
  lastTurnChannelContent: z.object({ channel: z.string(), quote: z.string() }).optional(),
  startedBy: user.optional(),
  modeSetBy: user.optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const ZERO_USAGE: TokenUsage = Object.freeze({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });

/** A fresh record for a new session. */
export function newSessionRecord(input: {
  readonly id: string;
  readonly target: ThreadTarget;
  readonly key: string;
  readonly mode: PermissionMode;
  readonly provider: string;
  readonly model: string;
  readonly now: Date;
}): SessionRecord {
  const at = input.now.toISOString();
  return Object.freeze({
    id: input.id,
    key: input.key,
    target: input.target,
    mode: input.mode,
    provider: input.provider,
    model: input.model,
    grants: [],
    title: "",
    usage: ZERO_USAGE,
    turns: 0,
    downloadedFiles: [],
    queue: [],
    createdAt: at,
    updatedAt: at,
  });
}

/** The queue entry of an inbound message delivered under `dedupeKeys`. */
export function queuedMessageOf(message: InboundMessage, dedupeKeys: readonly string[]): QueuedMessage {
  const { user, text, files, sentAt, attachments } = message;
  const extra = message.target.extra;
  return {
    user,
    text,
    files,
    ...(attachments?.length ? { attachments } : {}),
    sentAt,
    ...(dedupeKeys.length > 0 ? { dedupeKeys } : {}),
    ...(extra === undefined ? {} : { targetExtra: extra }),
  };
}

/** Whether a record has work that must survive a restart: a turn in progress or queued messages. */
export function hasPendingWork(record: SessionRecord): boolean {
  return record.pendingTurn !== undefined || record.queue.length > 0;
}

/**
 * How records are written when several processes share the store: each record with its place in
 * the shared index of sessions with pending work, in one step (under the session's lease when
 * this process holds it), and a new session's record together with its thread's index entry.
 */
export interface SharedRecords {
  /** Save a record (already versioned) and its membership of the active index. */
  put(id: string, key: string, value: unknown, active: boolean): Promise<void>;
  /** Write a new session's record and make it the thread's current session; false when the thread already had one (nothing written). */
  create(threadKey: string, id: string, recordKey: string, value: unknown): Promise<boolean>;
  /** Ids of sessions with pending work, across processes. */
  activeIds(): Promise<readonly string[]>;
}

/** How long a session that left the active index may stay listed there (unless a join rewrites it first). */
const STALE_INDEX_ENTRY_MS = 1_000;

/**
 * Reads and writes session records, the thread → current session index, and the "active" index of
 * sessions with pending work (so `start()` can find them after a restart). The active index is a
 * single key: read once, then kept in memory. A session joins it together with the record that
 * made it join, in one `setMany` (one commit on SQLite), the index first. A session that leaves
 * it is dropped lazily: its record is written alone, and the index without it goes out with the
 * next join or after `staleEntryMs` — an extra entry only makes `start()` load a session it then
 * finds idle, and a session that comes back before then needs no index write at all (a chat's
 * next message usually arrives while its last turn closes). An entry is dropped only once its
 * record without pending work is stored. Index writes are chained (never two in flight, so they
 * land in order on every backend) and coalesced (a write that has not started yet also carries
 * every change made before it starts). This process must be the only writer of the index, as it
 * is the only holder of session locks. A session whose turn ended in memory, its record not
 * saved yet, leaves at once (`left`). A new session is written first with its first change (its
 * turn's start, usually), together with its thread's entry (`introduce`). With several
 * processes, `shared` writes records and keeps the index instead (SharedRecords).
 */
export class SessionRecords {
  constructor(
    private readonly space: KeyValueSpace,
    private readonly shared?: SharedRecords,
    private readonly staleEntryMs = STALE_INDEX_ENTRY_MS,
  ) {}

  /** Sessions with pending work now. */
  private active: Promise<Set<string>> | undefined;
  /** Thread key → id of its new session whose record was never written (see `introduce`). */
  private readonly unstored = new Map<string, string>();
  /** What the last index write issued holds (the stored index, once it lands). */
  private indexed = new Set<string>();
  /** Sessions that left while the index still holds them, until their record is stored. */
  private readonly leaving = new Set<string>();
  /** Records waiting for the next index write, of sessions that joined. */
  private readonly joined = new Map<string, unknown>();
  /** The last index write issued (settled or not). */
  private indexWritten: Promise<void> = Promise.resolve();
  /** An index write not yet started: changes made now are carried by it. */
  private indexPending: Promise<void> | undefined;
  private staleTimer: NodeJS.Timeout | undefined;

  /** The record, or undefined when unknown; throws a StoredDataError for unreadable data. */
  async get(id: string): Promise<SessionRecord | undefined> {
    const raw = await this.space.get<unknown>(`rec:${id}`);
    if (raw === undefined) return undefined;
    return Object.freeze(
      fromVersioned(raw, { kind: SESSION_RECORD_KIND, schema: sessionRecordSchema, where: `session ${id}` }),
    ) as SessionRecord;
  }

  /**
   * Save the record and keep the active index in step with it; resolves once the record and, when
   * the session joined the index, the index are stored (see the class comment for leaving).
   */
  async put(record: SessionRecord): Promise<void> {
    const key = `rec:${record.id}`;
    const value = toVersioned(SESSION_RECORD_KIND, record);
    if (this.shared) return this.shared.put(record.id, key, value, hasPendingWork(record));
    const ids = await this.activeSet();
    const { id } = record;
    // The record first: where a backend writes the entries one by one, the thread entry never names a missing record.
    const entries: SpaceEntry[] = [{ key, value }];
    const introduced = this.unstored.get(record.key) === id;
    if (introduced) entries.push({ key: `key:${record.key}`, value: id });
    const stored = () => {
      if (introduced) this.forget(record);
    };
    if (hasPendingWork(record)) {
      ids.add(id);
      this.leaving.delete(id);
      if (this.indexed.has(id)) return setAll(this.space, entries).then(stored);
      for (const entry of entries) this.joined.set(entry.key, entry.value);
      return this.saveIndex().then(stored);
    }
    ids.delete(id);
    if (!this.indexed.has(id)) return setAll(this.space, entries).then(stored);
    this.leaving.add(id);
    await setAll(this.space, entries);
    stored();
    this.leaving.delete(id);
    this.dropStaleEntriesSoon(ids);
  }

  /**
   * Make a new session its thread's current one without writing anything yet — when this process
   * alone keeps the thread index (no `shared`; else false: use `create`). The thread entry is
   * written with the session's first record, in the same `setMany`: a new thread's first turn
   * writes its record once instead of also on creation, and a session nothing was ever saved for
   * leaves nothing behind. Until then `currentId` answers from memory.
   */
  introduce(record: SessionRecord): boolean {
    if (this.shared) return false;
    this.unstored.set(record.key, record.id);
    return true;
  }

  /** A session left memory: if its record was never written, the thread no longer names it. */
  forget(record: SessionRecord): void {
    if (this.unstored.get(record.key) === record.id) this.unstored.delete(record.key);
  }

  /**
   * The session's pending work ended in memory, and its record is saved later (with the session's
   * next write: LiveSession.defer): it leaves the index now, so a session whose end waits is not
   * written into every index write meanwhile. Until that save its stored record still shows the
   * ended turn; after a crash the restart then does not find it, and the session's next use finds
   * the turn done (see turn-recovery.ts). Nothing to do with several processes (`shared`).
   */
  left(id: string): void {
    if (this.shared) return;
    void this.activeSet().then(
      (ids) => {
        if (ids.delete(id)) this.dropStaleEntriesSoon(ids);
      },
      () => undefined,
    );
  }

  /**
   * With several processes (one process `introduce`s instead): save a new session's record and
   * make it the thread's current session — unless `claim` and the thread already has one (another
   * process got there first): then false, and nothing is kept that names the new session (one
   * atomic step). Without `claim`, the record and the thread entry go out together, and an entry
   * whose record is missing reads as no session.
   */
  async create(record: SessionRecord, claim: boolean): Promise<boolean> {
    if (this.shared && claim)
      return this.shared.create(
        `key:${record.key}`,
        record.id,
        `rec:${record.id}`,
        toVersioned(SESSION_RECORD_KIND, record),
      );
    await Promise.all([this.setCurrent(record.key, record.id), this.put(record)]);
    return true;
  }

  /**
   * Ids of sessions with a turn in progress or queued messages (read at start). Entries of the
   * stored index whose record has no pending work — sessions that left it shortly before the
   * process stopped — are dropped from it; an unreadable record keeps its entry (start reports it).
   */
  async activeIds(): Promise<readonly string[]> {
    if (this.shared) return this.shared.activeIds();
    const ids = await this.activeSet();
    const listed = [...ids];
    const records = await Promise.all(listed.map((id) => this.get(id).catch(() => "unreadable" as const)));
    listed.forEach((id, index) => {
      const record = records[index];
      if (record !== "unreadable" && (record === undefined || !hasPendingWork(record))) ids.delete(id);
    });
    if (ids.size < listed.length) this.dropStaleEntriesSoon(ids);
    return [...ids];
  }

  /** The id of the thread's current session. */
  currentId(key: string): Promise<string | undefined> {
    const introduced = this.unstored.get(key);
    if (introduced !== undefined) return Promise.resolve(introduced);
    return this.space.get<string>(`key:${key}`);
  }

  /** Make `id` the thread's current session. */
  async setCurrent(key: string, id: string): Promise<void> {
    this.unstored.delete(key);
    await this.space.set(`key:${key}`, id);
  }

  private activeSet(): Promise<Set<string>> {
    if (!this.active) {
      const loading = this.space.get<string[]>("active").then((stored) => {
        this.indexed = new Set(stored ?? []);
        return new Set(this.indexed);
      });
      this.active = loading;
      loading.catch(() => {
        if (this.active === loading) this.active = undefined;
      });
    }
    return this.active;
  }

  /** Resolves once an index write carrying every change made so far has been stored. */
  private saveIndex(): Promise<void> {
    if (this.indexPending) return this.indexPending;
    const write = this.indexWritten
      .catch(() => undefined)
      .then(async () => {
        const ids = await this.activeSet();
        this.indexPending = undefined;
        this.indexed = new Set([...ids, ...this.leaving]);
        const entries = [
          { key: "active", value: [...this.indexed] },
          ...[...this.joined].map(([key, value]) => ({ key, value })),
        ];
        this.joined.clear();
        await setAll(this.space, entries);
      });
    this.indexPending = write;
    this.indexWritten = write;
    return write;
  }

  /** Write the index without the sessions that left it (`active` no longer holds), unless a join does it first. */
  private dropStaleEntriesSoon(active: ReadonlySet<string>): void {
    this.staleTimer ??= setTimeout(() => {
      this.staleTimer = undefined;
      const stale = [...this.indexed].some((id) => !active.has(id) && !this.leaving.has(id));
      // A failed write only leaves extra entries (harmless); the next index write drops them.
      if (stale) this.saveIndex().catch(() => undefined);
    }, this.staleEntryMs);
    this.staleTimer.unref();
  }
}
