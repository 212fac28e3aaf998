/**
 * PendingStore: durable pending approvals, questions and plans. Approvals and plans live in the
 * store's "approvals" space, questions in "questions". A decision is a `setIfAbsent` on its own
 * key, so the first valid press wins even across processes; the item record is then updated to
 * match, and a decision key found next to a still-"pending" record (a crash in between) wins.
 * The open-items index is read from the store once (at start, or on first use) and then kept in
 * memory: only this process's PendingStore writes it, and memory changes only after the store
 * took the write, so every inbound message can ask "anything open here?" without a store read.
 */
import type { Coordination } from "../store/coordination/coordination.js";
import type { Store, KeyValueSpace } from "../store/store.js";
import { KeyedMutex } from "../store/key-mutex.js";
import type { Attachment } from "../core/attachment.js";
import type { CardRef } from "../core/card.js";
import {
  type PendingDecision,
  type PendingItem,
  type PendingKind,
  type PendingPerson,
  type PendingQuestion,
  type PendingStatus,
  pendingItemSchema,
} from "./pending-item.js";
import { decodePending, encodePending } from "./pending-codec.js";
import { type CallTurn, madeInTurn, turnCallKey } from "../engine/turn-call-key.js";

/** How long settled items stay readable after they expire (for "already decided" answers). */
export const DEFAULT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/** An open item as the expiry sweep sees it. */
export interface OpenEntry {
  readonly id: string;
  readonly kind: PendingKind;
  readonly sessionId: string;
  readonly expiresAt: string;
}

interface StoredAnswer {
  readonly answer: string;
  readonly by: PendingPerson;
  readonly at: string;
  /** Dedupe keys of the typed message that gave the answer (none for a button press). */
  readonly dedupeKeys?: readonly string[];
  /** The files the typed answer came with (none for a button press). */
  readonly files?: readonly Attachment[];
}

/** The action of an item cancelled because its card could not be shown (no person saw it). */
export const NOT_SHOWN = "not_shown";

/**
 * The error a call gets instead of an answer when its item's card could not be shown and the turn
 * was not stopped: nobody was asked, which the model must act on (`instead` says how), not a stop.
 */
export function notShownError(
  item: PendingItem,
  signal: AbortSignal,
  what: string,
  instead: string,
): Error | undefined {
  if (signal.aborted || item.decision?.action !== NOT_SHOWN) return undefined;
  const why = item.decision.note ?? "the card could not be posted";
  return new Error(`${what} could not be shown to the person (${why}), ${instead}`);
}

/** The status an item takes for a decision action. */
export function statusFor(action: string): PendingStatus {
  if (action === "expired") return "expired";
  if (action === "cancelled" || action === NOT_SHOWN) return "cancelled";
  return "decided";
}

/** The key of an item's call index: by its turn and call (turn-call-key.ts), or by the call alone. */
function callIndexKey(sessionId: string, turnId: string | undefined, callId: string): string {
  return turnId === undefined
    ? `call:${sessionId}:${callId}`
    : `turn-call:${sessionId}:${turnCallKey(turnId, callId)}`;
}

/** Shared map that holds the open-items index when several processes share the store. */
export type SharedOpenIndex = Pick<Coordination, "setField" | "deleteField" | "fields">;

/** Name of the shared open-items map (every open item: the expiry sweep). */
const OPEN_MAP = "open-items";
/** Name of one session's shared open-items map (intake asks it about each message). */
const sessionOpenMap = (sessionId: string) => `${OPEN_MAP}:${sessionId}`;

/** Reads and writes pending items; one instance per process. */
export class PendingStore {
  private readonly approvals: KeyValueSpace;
  private readonly questions: KeyValueSpace;
  private readonly mutex = new KeyedMutex();
  /** The open-items index as last written or read; undefined until loaded (or after a failed write). */
  private open: Promise<ReadonlyMap<string, OpenEntry>> | undefined;

  constructor(
    store: Store,
    private readonly now: () => Date = () => new Date(),
    private readonly retentionMs = DEFAULT_RETENTION_MS,
    /** Several processes: the open index lives in this shared map, read at every use (never stale). */
    private readonly shared?: SharedOpenIndex,
  ) {
    this.approvals = store.space("approvals");
    this.questions = store.space("questions");
  }

  /** Persist a new item, its call index and its open-index entry (before any card is posted). */
  async create(item: PendingItem): Promise<void> {
    pendingItemSchema.parse(item);
    const space = this.spaceOf(item.kind);
    const ttl = this.ttlFor(item);
    await space.set(`item:${item.id}`, encodePending(item), ttl);
    await space.set(callIndexKey(item.sessionId, item.turnId, item.callId), item.id, ttl);
    const entry: OpenEntry = {
      id: item.id,
      kind: item.kind,
      sessionId: item.sessionId,
      expiresAt: item.expiresAt,
    };
    if (this.shared) {
      const raw = JSON.stringify(entry);
      await this.shared.setField(sessionOpenMap(item.sessionId), item.id, raw);
      await this.shared.setField(OPEN_MAP, item.id, raw);
    } else await this.updateOpen((open) => ({ ...open, [item.id]: entry }));
  }

  /** The item with its latest decision and answers, or undefined when unknown (or malformed). */
  async get(id: string): Promise<PendingItem | undefined> {
    for (const space of [this.approvals, this.questions]) {
      const raw = await space.get<unknown>(`item:${id}`);
      if (raw !== undefined) return this.reconcile(decodePending(raw), space);
    }
    return undefined;
  }

  /**
   * The item raised for one tool call of a session's turn, if any: one of `turn`'s own, or one
   * stored before items named their turn, made since `turn` started (turn-call-key.ts). Without a
   * turn, the item indexed by the call id alone.
   */
  async forCall(
    kind: PendingKind,
    sessionId: string,
    callId: string,
    turn?: CallTurn,
  ): Promise<PendingItem | undefined> {
    const space = this.spaceOf(kind);
    if (turn) {
      const id = await space.get<string>(callIndexKey(sessionId, turn.turnId, callId));
      if (id !== undefined) return this.get(id);
    }
    const id = await space.get<string>(callIndexKey(sessionId, undefined, callId));
    const item = id === undefined ? undefined : await this.get(id);
    if (!turn || !item) return item;
    return item.turnId === undefined && madeInTurn(turn, item.createdAt) ? item : undefined;
  }

  /** Remember where the item's card was posted. */
  async setCardRef(id: string, cardRef: CardRef): Promise<PendingItem | undefined> {
    return this.modify(id, (item) => ({ ...item, cardRef }));
  }

  /**
   * Settle an item: true when this call's decision won (the item was still undecided), false when
   * another decision (press, expiry, stop) got there first. Returns the item as it now stands.
   */
  async settle(
    id: string,
    decision: PendingDecision,
    onWin?: () => Promise<void>,
  ): Promise<{ won: boolean; item: PendingItem | undefined }> {
    const current = await this.get(id);
    if (!current) return { won: false, item: undefined };
    const space = this.spaceOf(current.kind);
    const won = await space.setIfAbsent(`decision:${id}`, decision, this.ttlFor(current));
    if (won) {
      await onWin?.();
      await this.modify(id, (item) => ({ ...item, status: statusFor(decision.action), decision }));
      await this.dropOpen(id);
    }
    return { won, item: await this.get(id) };
  }

  /**
   * Record one question's answer; true when it was the first answer to that question. A typed
   * answer's dedupe keys are stored with it (one write), and `onWin` runs right after that write.
   */
  async recordAnswer(
    id: string,
    questionId: string,
    answer: string,
    by: PendingPerson,
    delivery?: {
      readonly dedupeKeys: readonly string[];
      readonly onWin: () => Promise<void>;
      readonly files?: readonly Attachment[];
    },
  ): Promise<{ won: boolean; item: PendingItem | undefined }> {
    const current = await this.get(id);
    if (current?.kind !== "question") return { won: false, item: current };
    const dedupeKeys = delivery?.dedupeKeys ?? [];
    const files = delivery?.files ?? [];
    const stored: StoredAnswer = {
      answer,
      by,
      at: this.now().toISOString(),
      ...(dedupeKeys.length > 0 ? { dedupeKeys } : {}),
      ...(files.length > 0 ? { files } : {}),
    };
    const won = await this.questions.setIfAbsent(`answer:${id}:${questionId}`, stored, this.ttlFor(current));
    if (won) {
      await delivery?.onWin();
      await this.modify(id, (item) =>
        item.kind === "question" ? withAnswer(item, questionId, stored) : item,
      );
    }
    return { won, item: await this.get(id) };
  }

  /** Who gave the question group's latest answer (for settling a group found fully answered). */
  async lastAnswerer(item: PendingItem): Promise<PendingPerson | undefined> {
    if (item.kind !== "question") return undefined;
    let latest: StoredAnswer | undefined;
    for (const question of item.questions) {
      const stored = await this.questions.get<StoredAnswer>(`answer:${item.id}:${question.id}`);
      if (stored && (!latest || stored.at >= latest.at)) latest = stored;
    }
    return latest?.by;
  }

  /** Drop a settled item from the open index (a crash came between its decision and that); true if it was there. */
  async dropOpen(id: string): Promise<boolean> {
    if (this.shared) {
      const raw = (await this.shared.fields(OPEN_MAP))[id];
      const sessionId = raw === undefined ? undefined : (JSON.parse(raw) as OpenEntry).sessionId;
      if (sessionId !== undefined) await this.shared.deleteField(sessionOpenMap(sessionId), id);
      return this.shared.deleteField(OPEN_MAP, id);
    }
    if (!(await this.readOpen()).has(id)) return false;
    await this.updateOpen(({ [id]: _, ...rest }) => rest);
    return true;
  }

  /**
   * Every item still open, or only one session's (the expiry sweep after a restart, intake). With
   * several processes a session's items are read from its own shared map, not the whole index.
   */
  async openItems(sessionId?: string): Promise<readonly OpenEntry[]> {
    const entries = [...(await this.readOpen(sessionId)).values()];
    if (sessionId !== undefined) return entries.filter((e) => e.sessionId === sessionId);
    // The whole index is read at start: items opened before sessions had maps of their own get
    // their entries there (one that was settled meanwhile is skipped by whoever reads it).
    if (this.shared)
      for (const entry of entries)
        await this.shared.setField(sessionOpenMap(entry.sessionId), entry.id, JSON.stringify(entry));
    return entries;
  }

  private spaceOf(kind: PendingKind): KeyValueSpace {
    return kind === "question" ? this.questions : this.approvals;
  }

  private ttlFor(item: PendingItem): number {
    return Math.max(Date.parse(item.expiresAt) - this.now().getTime(), 0) + this.retentionMs;
  }

  /** Fold in a decision or answers written by a process that died before updating the record. */
  private async reconcile(item: PendingItem, space: KeyValueSpace): Promise<PendingItem> {
    if (item.status !== "pending") return item;
    let result: PendingItem = item;
    if (item.kind === "question") {
      let question: PendingItem = item;
      for (const { id } of item.questions) {
        if (item.answers[id] !== undefined) continue;
        const stored = await space.get<StoredAnswer>(`answer:${item.id}:${id}`);
        if (stored && question.kind === "question") question = withAnswer(question, id, stored);
      }
      result = question;
    }
    const decision = await space.get<PendingDecision>(`decision:${item.id}`);
    return decision ? { ...result, status: statusFor(decision.action), decision } : result;
  }

  private async modify(
    id: string,
    change: (item: PendingItem) => PendingItem,
  ): Promise<PendingItem | undefined> {
    return this.mutex.run(`item:${id}`, async () => {
      const item = await this.get(id);
      if (!item) return undefined;
      const next = change(item);
      await this.spaceOf(next.kind).set(`item:${id}`, encodePending(next), this.ttlFor(next));
      return next;
    });
  }

  /**
   * The open-items index: read from the store the first time, from memory afterwards — or, with
   * several processes, from the shared map at every use (one session's when `sessionId` is given).
   */
  private readOpen(sessionId?: string): Promise<ReadonlyMap<string, OpenEntry>> {
    if (this.shared)
      return this.shared
        .fields(sessionId === undefined ? OPEN_MAP : sessionOpenMap(sessionId))
        .then(
          (fields) => new Map(Object.entries(fields).map(([id, raw]) => [id, JSON.parse(raw) as OpenEntry])),
        );
    if (!this.open) {
      const loading = this.approvals
        .get<Record<string, OpenEntry>>("open")
        .then((stored) => new Map(Object.entries(stored ?? {})));
      // A failed read is not remembered: the next use reads again.
      loading.catch(() => {
        if (this.open === loading) this.open = undefined;
      });
      this.open = loading;
    }
    return this.open;
  }

  /** Change the index in the store, then in memory; after a failed write the store is read again. */
  private async updateOpen(
    change: (open: Record<string, OpenEntry>) => Record<string, OpenEntry>,
  ): Promise<void> {
    await this.mutex.run("open", async () => {
      const next = change(Object.fromEntries(await this.readOpen()));
      try {
        await this.approvals.set("open", next);
      } catch (error) {
        this.open = undefined;
        throw error;
      }
      this.open = Promise.resolve(new Map(Object.entries(next)));
    });
  }
}

/** A question with more dedupe keys of typed answers (unchanged when there are none). */
/** The question group with one more answer: its text, who gave it, its files and dedupe keys. */
function withAnswer(item: PendingQuestion, questionId: string, stored: StoredAnswer): PendingItem {
  const files = stored.files?.length
    ? { answerFiles: { ...item.answerFiles, [questionId]: stored.files } }
    : {};
  const answered = {
    ...item,
    answers: { ...item.answers, [questionId]: stored.answer },
    answeredBy: { ...item.answeredBy, [questionId]: stored.by },
    ...files,
  };
  return withDeliveries(answered, stored.dedupeKeys ?? []);
}

function withDeliveries(item: PendingItem, keys: readonly string[]): PendingItem {
  if (item.kind !== "question" || keys.length === 0) return item;
  return { ...item, deliveries: [...new Set([...(item.deliveries ?? []), ...keys])] };
}
