/**
 * SessionRecords: where session records live in the "sessions" space — each record schema-versioned
 * under `rec:<id>`, `key:<session key>` naming the thread's current session, and `active` listing
 * the sessions with pending work — and how they are written on one process or with several.
 * Beside the records, the downloaded-files logs (DownloadLog; one per workspace, and older ones per
 * session): pages under `dl:<log id>:<n>`, snapshots of the pages before one under
 * `dlsnap:<log id>:<n>`, and `dlhead:<log id>` naming the latest.
 */
import { deepFreeze } from "../core/deep-freeze.js";
import { fromVersioned, toVersioned } from "../store/versioned.js";
import { type KeyValueSpace, type SpaceEntry, setAll } from "../store/store.js";
import { DownloadLog } from "./download-log.js";
import {
  hasPendingWork,
  SESSION_RECORD_KIND,
  type SessionRecord,
  sessionRecordSchema,
} from "./session-record.js";
import type { TakenInRecord } from "./shared-queue.js";

/**
 * How records are written when several processes share the store: each record with its place in
 * the shared index of sessions with pending work, in one step (under the session's lease when
 * this process holds it), and a new session's record together with its thread's index entry.
 */
export interface SharedRecords {
  /** The entries of the session's shared queue a record built now carries (SharedQueue.takenSoFar). */
  takenSoFar(id: string): TakenInRecord | undefined;
  /**
   * Save a record (already versioned) and its membership of the active index, under the
   * session's lease, removing the shared-queue entries it carries (`taken`, read when it was
   * built) in the same step: rejects (nothing written) for a session this process never held.
   */
  put(
    id: string,
    key: string,
    value: unknown,
    active: boolean,
    taken: TakenInRecord | undefined,
  ): Promise<void>;
  /** Write a new session's record and make it the thread's current session; false when the thread already had one (nothing written). */
  create(threadKey: string, id: string, recordKey: string, value: unknown): Promise<boolean>;
  /**
   * Write a new session's record and make it the thread's current session in place of
   * `previousId`, in one step under that session's lease: rejects with a StaleFenceError (nothing
   * written) unless this process holds it, or held it last.
   */
  replace(
    previousId: string,
    threadKey: string,
    id: string,
    recordKey: string,
    value: unknown,
  ): Promise<void>;
  /**
   * Write a new session's record and make it the thread's current session in place of
   * `missingId`, which the thread names but whose record is missing, in one step under that
   * session's lease; false when the thread names another session by then (nothing written).
   */
  replaceMissing(
    missingId: string,
    threadKey: string,
    id: string,
    recordKey: string,
    value: unknown,
  ): Promise<boolean>;
  /** Ids of sessions with pending work, across processes. */
  activeIds(): Promise<readonly string[]>;
}

/**
 * What SharedRecords takes to make `record`, a new session's, its thread's current session: the
 * thread's entry, the session's id, its record's key and the record as stored (versioned).
 */
function newSessionArgs(record: SessionRecord) {
  return [
    `key:${record.key}`,
    record.id,
    `rec:${record.id}`,
    toVersioned(SESSION_RECORD_KIND, record),
  ] as const;
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
  ) {
    this.downloads = new DownloadLog(space);
  }

  /** The downloaded-files logs, kept out of the records (written as they come, unfenced: see DownloadLog). */
  readonly downloads: DownloadLog;

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

  /**
   * The record (deep-frozen: the parts a turn's request snapshot takes, such as the target, are
   * shared rather than copied), or undefined when unknown; throws a StoredDataError for unreadable data.
   */
  async get(id: string): Promise<SessionRecord | undefined> {
    const raw = await this.space.get<unknown>(`rec:${id}`);
    if (raw === undefined) return undefined;
    return deepFreeze(
      fromVersioned(raw, { kind: SESSION_RECORD_KIND, schema: sessionRecordSchema, where: `session ${id}` }),
    ) as SessionRecord;
  }

  /**
   * With several processes, the entries of the session's shared queue a record built now carries:
   * read as it is built, and given to its `put`.
   */
  takenSoFar(id: string): TakenInRecord | undefined {
    return this.shared?.takenSoFar(id);
  }

  /**
   * Save the record and keep the active index in step with it; resolves once the record and, when
   * the session joined the index, the index are stored (see the class comment for leaving). With
   * several processes the save removes the shared-queue entries the record carries (`taken`: its
   * `takenSoFar` when it was built).
   */
  async put(record: SessionRecord, taken?: TakenInRecord): Promise<void> {
    const key = `rec:${record.id}`;
    const value = toVersioned(SESSION_RECORD_KIND, record);
    if (this.shared) return this.shared.put(record.id, key, value, hasPendingWork(record), taken);
    const ids = await this.activeSet();
    const { id } = record;
    // The record first: where a backend writes the entries one by one, the thread entry never names a missing record.
    const entries: SpaceEntry[] = [{ key, value }];
    const introduced = this.unstored.get(record.key) === id;
    if (introduced) entries.push({ key: `key:${record.key}`, value: id });
    let leaves = false;
    let written: Promise<void>;
    if (hasPendingWork(record)) {
      ids.add(id);
      this.leaving.delete(id);
      if (this.indexed.has(id)) written = setAll(this.space, entries);
      else {
        for (const entry of entries) this.joined.set(entry.key, entry.value);
        written = this.saveIndex();
      }
    } else {
      ids.delete(id);
      leaves = this.indexed.has(id);
      if (leaves) this.leaving.add(id);
      written = setAll(this.space, entries);
    }
    await written;
    this.forget(record);
    if (!leaves) return;
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

  /**
   * An introduced session stops being one: its first record write landed (the thread entry went
   * with it), or it left memory unsaved (then the thread no longer names it).
   */
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
   * make it the thread's current session, never over another process's session — false, and
   * nothing written, when the thread already has one (another process got there first), or, when
   * it named `missing` (a session whose record is missing), names another one by now.
   */
  async create(record: SessionRecord, missing?: string): Promise<boolean> {
    if (!this.shared) throw new Error("with one process a new session is introduced, not created");
    const args = newSessionArgs(record);
    return missing === undefined ? this.shared.create(...args) : this.shared.replaceMissing(missing, ...args);
  }

  /**
   * Make `record`, a new session's, its thread's current session in place of `previous` ("new").
   * With several processes only the holder of `previous` may (ThreadCommands checks first): the
   * record and the thread entry go out in one step under its lease, refused with a
   * StaleFenceError when a later holder took it — so a process that lost the thread, or never
   * held it, cannot overwrite the thread's entry.
   */
  async replace(previous: SessionRecord, record: SessionRecord): Promise<void> {
    if (this.shared) return this.shared.replace(previous.id, ...newSessionArgs(record));
    await this.put(record);
    await this.setCurrent(record.key, record.id);
  }

  /**
   * Ids of sessions with a turn in progress or queued messages (read at start), each still its
   * thread's current session: one "new" retired has nothing to continue, whatever its record
   * still holds. Entries of the stored index whose record has no pending work — sessions that
   * left it shortly before the process stopped — or whose session was retired are dropped from it
   * (with several processes the shared index is left as it is); an unreadable record keeps its
   * entry (start reports it).
   */
  async activeIds(): Promise<readonly string[]> {
    if (this.shared) {
      const listed = await this.shared.activeIds();
      const records = await this.readAll(listed);
      const retired = await Promise.all(records.map((record) => this.retired(record)));
      return listed.filter((_, index) => !retired[index]);
    }
    const ids = await this.activeSet();
    const listed = [...ids];
    const records = await this.readAll(listed);
    const retired = await Promise.all(records.map((record) => this.retired(record)));
    listed.forEach((id, index) => {
      const record = records[index];
      if (record === "unreadable") return;
      if (record === undefined || !hasPendingWork(record) || retired[index]) ids.delete(id);
    });
    if (ids.size < listed.length) this.dropStaleEntriesSoon(ids);
    return [...ids];
  }

  /** The records of `ids`, in order: undefined when unknown, "unreadable" when a read fails. */
  private readAll(ids: readonly string[]): Promise<Array<SessionRecord | undefined | "unreadable">> {
    return Promise.all(ids.map((id) => this.get(id).catch(() => "unreadable" as const)));
  }

  /** Whether `record`'s thread names another session as its current one ("new" retired it). */
  private async retired(record: SessionRecord | undefined | "unreadable"): Promise<boolean> {
    if (record === undefined || record === "unreadable") return false;
    const current = await this.currentId(record.key);
    return current !== undefined && current !== record.id;
  }

  /** The id of the thread's current session. */
  currentId(key: string): Promise<string | undefined> {
    const introduced = this.unstored.get(key);
    if (introduced !== undefined) return Promise.resolve(introduced);
    return this.space.get<string>(`key:${key}`);
  }

  /** Make `id` the thread's current session. */
  private async setCurrent(key: string, id: string): Promise<void> {
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
