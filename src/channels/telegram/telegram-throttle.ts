/**
 * Outgoing rate limiting for the Bot API, as a grammY API transformer. Telegram allows about one
 * message per second per chat (short bursts are fine), 20 per minute per group and 30 per second
 * overall; going over earns 429s that stall a whole chat. Each limit is a token bucket with a
 * burst, kept as a GCRA "theoretical arrival time", so the first message of a reply goes out at
 * once and only sustained traffic waits. answerCallbackQuery and other non-message calls pass
 * straight through; drafts and chat actions count only against the global limit. Courtesies —
 * a chat action ("typing…") and a draft that updates a preview already shown (the next one
 * supersedes it) — only take a global slot that is free at once with two thirds of the burst to
 * spare, and are dropped (SendSkipped) otherwise: they never delay a message or a turn's first
 * preview, nor eat the burst that a busy moment's messages need.
 */
import type { Transformer } from "grammy";
import { pauseCall } from "./telegram-call-pause.js";

/** One token bucket: `ratePerSecond` sustained, up to `burst` at once. */
export interface RateRule {
  readonly ratePerSecond: number;
  readonly burst: number;
}

export interface SendLimits {
  readonly perChat: RateRule;
  readonly perGroup: RateRule;
  readonly global: RateRule;
}

/**
 * Telegram's published limits. A bucket lets `burst + rate × 60` through in any minute, so the
 * group bucket is 3 + 17/min to stay within 20 per minute; the chat burst of 3 keeps the first
 * messages of a reply from waiting.
 */
export const TELEGRAM_SEND_LIMITS: SendLimits = Object.freeze({
  perChat: { ratePerSecond: 1, burst: 3 },
  perGroup: { ratePerSecond: 17 / 60, burst: 3 },
  global: { ratePerSecond: 30, burst: 30 },
});

/** What a Bot API call costs: a message in a chat, a global-only call, or nothing. */
export type SendCost =
  | { readonly kind: "message"; readonly chatId: number }
  | { readonly kind: "global" }
  | undefined;

const MESSAGE_METHODS = /^(send|edit|copyMessage|forwardMessage)/;
const GLOBAL_ONLY = new Set(["sendChatAction", "sendMessageDraft"]);
/** Calls that are always courtesies (drafts are, after a turn's first). */
const COURTESY = new Set(["sendChatAction"]);
/** How long a turn's draft id is remembered (a draft preview lasts about 30 s without updates). */
const DRAFT_MEMORY_MS = 5 * 60_000;

/** A courtesy call the throttle dropped: the send limit had no spare room for it. */
export class SendSkipped extends Error {
  constructor(method: string) {
    super(`${method} skipped: the send limit has no spare room now`);
    this.name = "SendSkipped";
  }
}

/** Classify a Bot API call for throttling. */
export function sendCostOf(method: string, payload: unknown): SendCost {
  if (GLOBAL_ONLY.has(method)) return { kind: "global" };
  if (!MESSAGE_METHODS.test(method)) return undefined;
  const chatId = Number((payload as { chat_id?: unknown } | undefined)?.chat_id);
  return Number.isFinite(chatId) ? { kind: "message", chatId } : { kind: "global" };
}

interface Bucket {
  readonly intervalMs: number;
  readonly toleranceMs: number;
}

function bucketOf(rule: RateRule): Bucket {
  const intervalMs = 1000 / rule.ratePerSecond;
  return { intervalMs, toleranceMs: (rule.burst - 1) * intervalMs };
}

const PRUNE_AT = 2048;

/**
 * Books send slots in GCRA buckets. A message first books its chat (and group) slot, waits for
 * it, and only then books a global slot: a chat's backlog is booked into the future, and booking
 * the shared global bucket that early would make every other chat wait behind it.
 */
export class SendScheduler {
  private readonly chat: Bucket;
  private readonly group: Bucket;
  /** The global bucket's booking, and as courtesy calls see it (the first third of the burst). */
  private readonly globalKeys: readonly [string, Bucket][];
  private readonly spareKeys: readonly [string, Bucket][];
  /** Theoretical arrival time per key (ms on the scheduler's clock). */
  private readonly arrival = new Map<string, number>();
  /** When each chat's draft id was last drafted. */
  private readonly drafts = new Map<string, number>();

  constructor(
    limits: SendLimits = TELEGRAM_SEND_LIMITS,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.chat = bucketOf(limits.perChat);
    this.group = bucketOf(limits.perGroup);
    const global = bucketOf(limits.global);
    this.globalKeys = [["*", global]];
    this.spareKeys = [["*", { intervalMs: global.intervalMs, toleranceMs: global.toleranceMs / 3 }]];
  }

  /** Book one message's slot in its chat (and, for groups, the group) bucket: ms to wait. */
  reserveChat(chatId: number): number {
    const keys: [string, Bucket][] = [[`c${chatId}`, this.chat]];
    if (chatId < 0) keys.push([`g${chatId}`, this.group]);
    return this.book(keys);
  }

  /** Book a slot in the global bucket (call once the chat slot is due): ms to wait. */
  reserveGlobal(): number {
    return this.book(this.globalKeys);
  }

  /** Book a global slot only if one is free now with two thirds of the burst to spare; false otherwise. */
  reserveSpareGlobal(): boolean {
    return this.book(this.spareKeys, true) === 0;
  }

  /** Note a draft in `chatId` with `draftId`: whether it updates one drafted before (a courtesy). */
  isDraftUpdate(chatId: number, draftId: number): boolean {
    const key = `${chatId}:${draftId}`;
    const now = this.now();
    const seen = this.drafts.has(key);
    this.drafts.set(key, now);
    if (this.drafts.size > PRUNE_AT) {
      for (const [old, at] of this.drafts) if (now - at > DRAFT_MEMORY_MS) this.drafts.delete(old);
    }
    return seen;
  }

  /** Book the slot for `keys` (or, with `onlyNow`, nothing when it is not free now): ms to wait. */
  private book(keys: readonly [string, Bucket][], onlyNow = false): number {
    const now = this.now();
    let at = now;
    for (const [key, bucket] of keys) {
      const arrival = this.arrival.get(key);
      if (arrival !== undefined) at = Math.max(at, arrival - bucket.toleranceMs);
    }
    // Float sums of intervals drift by ~1e-13: a wait under a microsecond is no wait.
    if (at - now < 0.001) at = now;
    if (onlyNow && at > now) return at - now;
    for (const [key, bucket] of keys) {
      this.arrival.set(key, Math.max(this.arrival.get(key) ?? at, at) + bucket.intervalMs);
    }
    if (this.arrival.size > PRUNE_AT) this.prune(now);
    return at - now;
  }

  private prune(now: number): void {
    for (const [key, arrival] of this.arrival) if (arrival <= now) this.arrival.delete(key);
  }
}

/** What a call aborted while it waits for its send slot fails with. */
const ABORTED_WHILE_THROTTLED = "Bot API call aborted while throttled";

/** Whether a call is a courtesy (see the module comment); notes drafts as it goes. */
function isCourtesy(scheduler: SendScheduler, method: string, payload: unknown): boolean {
  if (COURTESY.has(method)) return true;
  if (method !== "sendMessageDraft") return false;
  const { chat_id, draft_id } = payload as { chat_id?: unknown; draft_id?: unknown };
  return scheduler.isDraftUpdate(Number(chat_id), Number(draft_id));
}

/**
 * A grammY API transformer that waits for a slot before each message-sending call, and drops a
 * courtesy call (its promise rejects with SendSkipped) when no spare slot is free at once.
 */
export function throttleTransformer(scheduler: SendScheduler = new SendScheduler()): Transformer {
  return (prev, method, payload, signal) => {
    if (isCourtesy(scheduler, method, payload)) {
      if (!scheduler.reserveSpareGlobal()) return Promise.reject(new SendSkipped(method));
      return prev(method, payload, signal);
    }
    const cost = sendCostOf(method, payload);
    // A send whose slots are free is the next call's own promise: only a wait adds one.
    const send = () => prev(method, payload, signal);
    const afterChatSlot = () => {
      const globalWait = cost === undefined ? 0 : scheduler.reserveGlobal();
      return globalWait > 0 ? pauseCall(globalWait, signal, ABORTED_WHILE_THROTTLED).then(send) : send();
    };
    const chatWait = cost?.kind === "message" ? scheduler.reserveChat(cost.chatId) : 0;
    return chatWait > 0
      ? pauseCall(chatWait, signal, ABORTED_WHILE_THROTTLED).then(afterChatSlot)
      : afterChatSlot();
  };
}
