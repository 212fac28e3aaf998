/**
 * SessionCache: get-or-create of sessions by thread, lookup by id, and the bounded in-memory set
 * of live sessions. Idle sessions are evicted least-recently-used first and reload from the store
 * on their next use (a turn end not saved yet is saved on the way out, and a reload waits for
 * it); busy ones (a turn running or parked at a person) are never evicted, nor is a session just
 * handed out before its caller could take it in hand (see `handOut`).
 * Concurrent loads of one session share a single load. While a thread's current session is in
 * memory, finding it reads nothing from the store (this process owns the thread → session index,
 * as it owns the session lock) — unless several processes share that index (`sharedIndex`).
 */
import { type ParkedTurn, parkTurn } from "../approvals/parked-turn.js";
import type { PermissionMode } from "../core/modes.js";
import { type PlatformUser, type ThreadTarget, sessionKeyOf } from "../core/thread-target.js";
import { readLiveHistory } from "./live-history.js";
import { LiveSession, type LiveSessionStores } from "./live-session.js";
import { LruCache } from "../core/lru-cache.js";
import type { TurnEndSaves } from "./turn-end-saves.js";
import { itemsFromReplacing, newSessionRecord, type SessionRecord } from "./session-record.js";

export interface SessionCacheOptions {
  readonly stores: LiveSessionStores;
  readonly capacity: number;
  readonly defaults: { readonly mode: PermissionMode; readonly provider: string; readonly model: string };
  readonly newId: () => string;
  /** Bind the engine (and anything else per session) to a freshly loaded session. */
  readonly prepare: (live: LiveSession) => void;
  /** Saves an evicted session's turn end on its way out (a reload waits for that). */
  readonly endSaves: Pick<TurnEndSaves, "now" | "settled">;
  /** Sessions that must stay in memory besides busy ones (parked at a person). */
  readonly isPinned: (live: LiveSession) => boolean;
  /** Told when an idle session leaves memory. */
  readonly onEvict?: (sessionId: string) => void;
  /**
   * Several processes share the thread → session index: a thread's current session is read from
   * the store on each lookup, since another process may have started a new one ("new").
   */
  readonly sharedIndex?: boolean;
}

/** What a fresh session takes over from the one it replaces ("new"). */
type CarriedOver = Partial<Pick<SessionRecord, "startedBy" | "mode" | "modeSetBy" | "itemsFrom">>;

/** The live sessions of this process. */
export class SessionCache {
  private readonly lru: LruCache<string, LiveSession>;
  private readonly loading = new Map<string, Promise<LiveSession | undefined>>();
  /** Session key → id of the thread's current session, for threads whose session is in memory. */
  private readonly current = new Map<string, string>();
  /** Sessions handed out in this turn of the event loop (see `handOut`). */
  private readonly handedOut = new Set<LiveSession>();
  /** Resolves once they may be evicted again, and idle ones over capacity are. */
  private released: Promise<void> | undefined;

  constructor(private readonly options: SessionCacheOptions) {
    this.lru = new LruCache(
      options.capacity,
      (live) => live.inUse || options.isPinned(live) || this.handedOut.has(live),
      (id, live) => {
        if (this.current.get(live.record.key) === id) this.current.delete(live.record.key);
        options.stores.records.forget(live.record);
        if (live.hasUnsavedChange) void options.endSaves.now(live);
        options.onEvict?.(id);
      },
    );
  }

  /**
   * The thread's current session when this process alone knows it and has it in memory (see
   * knownCurrent), at once: nothing is read, and a caller that takes it in hand before its next
   * await needs it kept from eviction no longer (forTarget hands out what it answers after a wait).
   */
  inMemoryFor(target: ThreadTarget): LiveSession | undefined {
    if (this.options.sharedIndex) return undefined;
    const id = this.current.get(sessionKeyOf(target));
    return id === undefined ? undefined : this.lru.get(id);
  }

  /**
   * The thread's current session, created when the thread has none — with `starter`, the person
   * whose message or command opens it, as its starter: the one who may loosen it without an
   * approver (authorisation.ts). Left unset, the first turn's author would become the starter
   * later, and in between anyone's `mode` or `model` could take the thread from whoever opened it.
   */
  async forTarget(target: ThreadTarget, starter?: PlatformUser): Promise<LiveSession> {
    const key = sessionKeyOf(target);
    const known = this.knownCurrent(key);
    if (known) return known;
    const records = this.options.stores.records;
    const existingId = await records.currentId(key);
    if (existingId !== undefined) {
      const live = await this.byId(existingId);
      if (live) return this.makeCurrent(key, live);
    }
    // A new session holds its workspace's downloaded files as the store has them.
    await this.options.stores.downloads.current();
    // A concurrent call may have made the thread's session meanwhile.
    const made = this.inMemory(key);
    if (made) return made;
    const record = this.newRecord(target, starter === undefined ? {} : { startedBy: starter });
    if (records.introduce(record)) return this.makeCurrent(key, this.remember(this.created(record)));
    // `existingId` here names a session whose record is missing: the new one takes its place.
    if (!(await records.create(record, existingId))) {
      // Another process made the thread's session first: use theirs.
      const winner = await records.currentId(key);
      const live = winner === undefined ? undefined : await this.byId(winner);
      if (live) return this.makeCurrent(key, live);
    }
    return this.makeCurrent(key, this.remember(this.created(record)));
  }

  /** The thread's current session if it has one (never creates). */
  async existingFor(target: ThreadTarget): Promise<LiveSession | undefined> {
    const key = sessionKeyOf(target);
    const known = this.knownCurrent(key);
    if (known) return known;
    const id = await this.options.stores.records.currentId(key);
    const live = id === undefined ? undefined : await this.byId(id);
    return live && this.makeCurrent(key, live);
  }

  /** A session by id, loaded from the store when not in memory; undefined when unknown. */
  async byId(id: string): Promise<LiveSession | undefined> {
    const cached = this.lru.get(id);
    if (cached) return this.handOut(cached);
    let pending = this.loading.get(id);
    if (!pending) {
      pending = this.load(id).finally(() => this.loading.delete(id));
      this.loading.set(id, pending);
    }
    return pending;
  }

  /**
   * Start a fresh session for the thread in place of its current one, `previous` ("new"); the old
   * one stays readable by id. The thread's starter carries over: whoever types "new" in a shared
   * thread does not become the person who may loosen it. The fresh session takes the default mode,
   * or with `keepMode` `previous`'s (and who set it) — for a "new" by someone who may not loosen
   * the session when the default is less safe. Its record names `previous` — and the sessions
   * whose items had not all reached `previous` yet (itemsFromReplacing) — as where the thread's
   * standing items are still to be moved from, written in the same step as the switch. Rejects
   * with a StaleFenceError when this process may not replace `previous` (nothing is written then;
   * see SessionRecords.replace).
   */
  async renew(target: ThreadTarget, previous: LiveSession, keepMode = false): Promise<LiveSession> {
    const { startedBy, mode, modeSetBy } = previous.record;
    const { itemsFrom, dropped } = itemsFromReplacing(previous.record);
    if (dropped.length > 0)
      this.options.stores.logger.warn(
        { sessionId: previous.id, dropped },
        "too many sessions' standing items are still to be moved: the new session leaves these out",
      );
    const carried = { startedBy, itemsFrom, ...(keepMode ? { mode, modeSetBy } : {}) };
    const record = this.newRecord(target, carried);
    await this.options.stores.downloads.current();
    await this.options.stores.records.replace(previous.record, record);
    return this.makeCurrent(sessionKeyOf(target), this.remember(this.created(record)));
  }

  /** The mode a fresh session starts in unless "new" keeps the previous one's. */
  get defaultMode(): PermissionMode {
    return this.options.defaults.mode;
  }

  /** Sessions in memory now. */
  live(): readonly LiveSession[] {
    return [...this.lru.values()];
  }

  /** Evict idle sessions over capacity (after a turn ends, a session may have become evictable). */
  trim(): void {
    this.lru.evictOverflow();
  }

  /**
   * The session's turn parked at a person as the store has it now (record and history read
   * afresh, nothing cached or kept); undefined when none is. The history is read as a load
   * reads it (live-history.ts: from the summary's anchor on), its position counted in the whole
   * history: a press on a process that does not hold the session reads no more than loading the
   * session would. It prunes nothing: the holder's load does, keeping the page of a starter its
   * record does not have yet (which this read could not save).
   */
  async storedParkedTurn(id: string): Promise<ParkedTurn | undefined> {
    const { stores } = this.options;
    const record = await stores.records.get(id);
    if (!record?.pendingTurn) return undefined;
    const log = await readLiveHistory(id, stores);
    return parkTurn(id, record.pendingTurn, log.messages, log.start);
  }

  /** Resolves once the sessions handed out so far may be evicted (and idle ones over capacity are). */
  async settled(): Promise<void> {
    await this.released;
  }

  get size(): number {
    return this.lru.size;
  }

  private newRecord(target: ThreadTarget, carried: CarriedOver = {}): SessionRecord {
    const { stores, defaults } = this.options;
    return newSessionRecord({
      id: this.options.newId(),
      key: sessionKeyOf(target),
      target,
      mode: carried.mode ?? defaults.mode,
      provider: defaults.provider,
      model: defaults.model,
      now: stores.now(),
      startedBy: carried.startedBy,
      modeSetBy: carried.modeSetBy,
      itemsFrom: carried.itemsFrom,
    });
  }

  private created(record: SessionRecord): LiveSession {
    return LiveSession.create(record, this.options.stores);
  }

  private async load(id: string): Promise<LiveSession | undefined> {
    await this.options.endSaves.settled(id);
    const record = await this.options.stores.records.get(id);
    if (!record) return undefined;
    return this.remember(await LiveSession.load(record, this.options.stores));
  }

  /** The thread's current session as this process alone knows it: in memory, unless the index is shared. */
  private knownCurrent(key: string): LiveSession | undefined {
    return this.options.sharedIndex ? undefined : this.inMemory(key);
  }

  /** The thread's current session when it is in memory (marked as recently used). */
  private inMemory(key: string): LiveSession | undefined {
    const id = this.current.get(key);
    const live = id === undefined ? undefined : this.lru.get(id);
    return live && this.handOut(live);
  }

  /**
   * Keep a session being handed to a caller from eviction until the event loop's next turn: the
   * caller takes it in hand (a hold, its pump) as soon as its await resumes, and until then a
   * concurrent load could evict it — the caller would then run a turn on a copy no longer in
   * memory while the thread's next message loads (or creates) another.
   */
  private handOut(live: LiveSession): LiveSession {
    this.handedOut.add(live);
    this.released ??= new Promise((resolve) =>
      setImmediate(() => {
        this.released = undefined;
        this.handedOut.clear();
        this.trim();
        resolve();
      }),
    );
    return live;
  }

  /** Remember `live` as the thread's current session while it stays in memory. */
  private makeCurrent(key: string, live: LiveSession): LiveSession {
    if (this.lru.peek(live.id) === live) this.current.set(key, live.id);
    return live;
  }

  private remember(live: LiveSession): LiveSession {
    const cached = this.lru.get(live.id);
    if (cached) return this.handOut(cached);
    this.options.prepare(live);
    this.handOut(live);
    this.lru.set(live.id, live);
    return live;
  }
}
