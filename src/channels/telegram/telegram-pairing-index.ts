/**
 * The index of paired accounts, for `/pairs`: the store cannot list its keys, so the ids of the
 * accounts ever paired are kept beside their pairing records. It is an append-only log, one id
 * per numbered slot, each slot taken by the store's write-if-absent (atomic across processes on
 * SQLite, Redis and Postgres): two approvals at once, in one process or in two, take two slots and
 * neither overwrites the other. A single stored list, read, changed and written back, lost one of
 * them. The slots taken are always 0, 1, 2, … with no gap, so a reader stops at the first empty one.
 *
 * An id's marker records that it is in the log, so it is appended once (a pairing ended and
 * approved again keeps its slot): the marker is written after the slot, so a crash or a race in
 * between leaves the id in the log twice, never missing, and readers drop repeats. Ids stay in the
 * log after `/unpair`; whoever lists checks each one for a pairing record. A next-slot hint saves
 * reading the whole log at each append; it only ever names a slot at or before the first empty one.
 *
 * The list index of earlier versions (one stored array, `tg:paired-index`) is folded into the log
 * when the ids are read, then removed; a version still writing it meanwhile is folded in at the
 * next read (and an id it drops from it rejoins when that account is next checked).
 */
import { z } from "zod";
import { getAll, type KeyValueSpace } from "../../store/store.js";

const slotKey = (slot: number) => `tg:paired-log:${slot}`;
const markerKey = (userId: string) => `tg:paired-listed:${userId}`;
/** The slot to start looking for an empty one from. */
const NEXT_SLOT_KEY = "tg:paired-log-next";
/** The earlier versions' index: every paired id in one stored array. */
const LIST_INDEX_KEY = "tg:paired-index";

/** Slots read per store call. */
const PAGE = 100;
/** The most ids this process remembers as already in the log. */
const MEMORY_CAP = 10_000;

const IdSchema = z.string().regex(/^\d{1,20}$/);
const NextSlotSchema = z.number().int().nonnegative();
const ListIndexSchema = z.array(z.string());

/** The log of paired ids (see module comment). */
export class PairingIndex {
  /** Ids this process has seen in the log (their marker), so it reads no marker for them again. */
  private readonly listed = new Set<string>();
  /** This process's appends, one after another (so they do not contend for the same slot). */
  private appending: Promise<void> = Promise.resolve();

  constructor(private readonly store: KeyValueSpace) {}

  /** Make sure `userId` is in the log. */
  async add(userId: string): Promise<void> {
    if (this.listed.has(userId)) return;
    if ((await this.store.get<unknown>(markerKey(userId))) === undefined) {
      const append = () => this.append(userId);
      const done = this.appending.then(append, append);
      this.appending = done.catch(() => {});
      await done;
      await this.store.set(markerKey(userId), true);
    }
    if (this.listed.size >= MEMORY_CAP) this.listed.clear();
    this.listed.add(userId);
  }

  /** Every id in the log (the earlier list index folded in first), oldest first, each once. */
  async ids(): Promise<string[]> {
    await this.foldListIndex();
    const ids = new Set<string>();
    for (let from = 0; ; from += PAGE) {
      const page = await this.page(from);
      for (const value of page) {
        if (value === undefined) return [...ids];
        const id = IdSchema.safeParse(value);
        if (id.success) ids.add(id.data);
      }
    }
  }

  /** Takes the first empty slot for `userId`: from the hint on, the next one each time another writer was first. */
  private async append(userId: string): Promise<void> {
    const hint = NextSlotSchema.safeParse(await this.store.get<unknown>(NEXT_SLOT_KEY));
    let slot = await this.firstEmptyFrom(hint.success ? hint.data : 0);
    while (!(await this.store.setIfAbsent(slotKey(slot), userId))) slot = await this.firstEmptyFrom(slot + 1);
    await this.store.set(NEXT_SLOT_KEY, slot + 1);
  }

  private async firstEmptyFrom(start: number): Promise<number> {
    for (let from = start; ; from += PAGE) {
      const empty = (await this.page(from)).indexOf(undefined);
      if (empty >= 0) return from + empty;
    }
  }

  private page(from: number): Promise<unknown[]> {
    return getAll<unknown>(
      this.store,
      Array.from({ length: PAGE }, (_, i) => slotKey(from + i)),
    );
  }

  /** Appends the earlier list index's ids to the log, then removes it. */
  private async foldListIndex(): Promise<void> {
    const stored = await this.store.get<unknown>(LIST_INDEX_KEY);
    if (stored === undefined) return;
    const parsed = ListIndexSchema.safeParse(stored);
    if (parsed.success) {
      for (const id of parsed.data) if (IdSchema.safeParse(id).success) await this.add(id);
    }
    await this.store.delete(LIST_INDEX_KEY);
  }
}
