/**
 * Pending items: the durable record of something a turn waits for a person to decide — an
 * approval, a (group of) question(s), or a plan. Persisted before the card is posted; buttons
 * carry only the item's id and an action. Also the ids, the call hash and the zod schemas used
 * to validate items read back from the store.
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { type Attachment, attachmentSchema } from "../core/attachment.js";
import type { AlwaysOption, QuestionSpec } from "../core/events.js";
import type { CardRef } from "../core/card.js";
import { storedTargetSchema, type ThreadTarget } from "../core/thread-target.js";

export const PENDING_KINDS = ["approval", "question", "plan"] as const;
export type PendingKind = (typeof PENDING_KINDS)[number];
export type PendingStatus = "pending" | "decided" | "expired" | "cancelled";

/** A person on a platform, as an item records them. */
export interface PendingPerson {
  readonly platform: string;
  readonly userId: string;
  readonly name: string;
}

/** How an item was settled. `by` is undefined for system outcomes (expiry, stop). */
export interface PendingDecision {
  /** A card action ("once", "always_tool", "deny", "plan_auto", …), "answered", "expired", "cancelled" or "not_shown" (its card could not be posted). */
  readonly action: string;
  readonly by?: PendingPerson;
  readonly at: string;
  /** Plan rejection feedback, or why an item was cancelled. */
  readonly note?: string;
  /** Dedupe keys of the typed message that made the decision (plan feedback), to spot its redelivery. */
  readonly dedupeKeys?: readonly string[];
  /**
   * The files typed plan feedback came with (their attachment records): they reach the model beside
   * the feedback, as a typed answer's do. Absent: none.
   */
  readonly files?: readonly Attachment[];
}

interface PendingCommon {
  readonly id: string;
  readonly sessionId: string;
  readonly target: ThreadTarget;
  readonly callId: string;
  /**
   * The turn that raised it (turn-call-key.ts): its call index is keyed by the turn's id with the
   * call's. Absent in items stored before, indexed by the call id alone.
   */
  readonly turnId?: string;
  /** sha256 of the tool name and canonical JSON arguments of the waiting call. */
  readonly argsHash: string;
  readonly requester: PendingPerson;
  /** Platform-qualified ids of everyone who may decide ("slack:U0123"). */
  readonly allowedApprovers: readonly string[];
  /**
   * Who may give a standing answer (an "always" grant, a switch to auto mode): see
   * authorisation.ts. Absent in items stored before it existed: then only the requester may.
   */
  readonly mayLoosen?: readonly string[];
  /**
   * Who started the session, when it records them: the loosener owed to no configuration, so that
   * who may decide can be worked out again under the configuration of the day (withLiveDeciders).
   * Absent in items stored before it existed.
   */
  readonly startedBy?: PendingPerson;
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly cardRef?: CardRef;
  readonly status: PendingStatus;
  readonly decision?: PendingDecision;
}

export interface PendingApproval extends PendingCommon {
  readonly kind: "approval";
  readonly tool: string;
  readonly argSummary: string;
  readonly reason: string;
  readonly detail?: { readonly kind: string; readonly text: string };
  readonly alwaysOptions: readonly AlwaysOption[];
  /** Set when the request came from untrusted channel content. */
  readonly provenanceQuote?: string;
  /** The outside reads made before the call (PermissionRequest.outsideReads), when any. */
  readonly outsideReads?: string;
  /** The names of the files the requester's messages in the turn came with (PermissionRequest.attachedFiles), when any. */
  readonly attachedFiles?: string;
  /**
   * The fingerprint of the content the card's preview was made from (CardPreview.fingerprint), for
   * a tool that binds its preview: the call runs only while its content has it. Not shown.
   */
  readonly fingerprint?: string;
}

export interface PendingQuestion extends PendingCommon {
  readonly kind: "question";
  readonly questions: readonly QuestionSpec[];
  /** Answers given so far, by question id. */
  readonly answers: Readonly<Record<string, string>>;
  /**
   * The files a typed answer came with (its attachment records), by question id: they reach the
   * model beside the answer. Absent when no answer came with any (and in items stored before).
   */
  readonly answerFiles?: Readonly<Record<string, readonly Attachment[]>>;
  /**
   * Who gave each answer, by question id: a group may be answered by several people (the asker
   * and an approver). Absent in items stored before: then the decision's `by` gave them all.
   */
  readonly answeredBy?: Readonly<Record<string, PendingPerson>>;
  /** Dedupe keys of the typed messages that gave answers, to spot their redelivery. */
  readonly deliveries?: readonly string[];
  /** Set when the question came from a turn woken by channel content (as PendingApproval's). */
  readonly provenanceQuote?: string;
  /**
   * Set when no person's message started the asking turn (a wake-up, a scheduled run): the card
   * names whom it asks (approval and plan cards always name their requester).
   */
  readonly woken?: boolean;
}

export interface PendingPlan extends PendingCommon {
  readonly kind: "plan";
  readonly plan: string;
  /** Set when the plan came from a turn woken by channel content (as PendingApproval's). */
  readonly provenanceQuote?: string;
}

export type PendingItem = PendingApproval | PendingQuestion | PendingPlan;

/**
 * A fresh unguessable id: base64url of 15 random bytes (20 chars, fits Telegram callback_data).
 * It may start like a standing item's id ("tsk_"): item cards take a press only on an id their
 * module knows whole (sessions/item-cards.ts), so its presses still reach the pending item.
 */
export function newPendingId(): string {
  return randomBytes(15).toString("base64url");
}

export { callHash, canonicalJson } from "../engine/call-identity.js";

/** Dedupe keys of the typed messages that answered or decided the item. */
export function deliveriesOf(item: PendingItem): readonly string[] {
  return [...(item.kind === "question" ? (item.deliveries ?? []) : []), ...(item.decision?.dedupeKeys ?? [])];
}

/** Whether an item can still be decided at `now` (pending and not past its expiry). */
export function isOpen(item: PendingItem, now: Date): boolean {
  return item.status === "pending" && Date.parse(item.expiresAt) > now.getTime();
}

const person = z.object({ platform: z.string().min(1), userId: z.string().min(1), name: z.string() });
const common = {
  id: z.string().min(1).max(24),
  sessionId: z.string().min(1),
  target: storedTargetSchema,
  callId: z.string().min(1),
  turnId: z.string().min(1).optional(),
  argsHash: z.string().min(1),
  requester: person,
  allowedApprovers: z.array(z.string()),
  mayLoosen: z.array(z.string()).optional(),
  startedBy: person.optional(),
  createdAt: z.iso.datetime(),
  expiresAt: z.iso.datetime(),
  cardRef: z.looseObject({ messageId: z.string() }).optional(),
  status: z.enum(["pending", "decided", "expired", "cancelled"]),
  decision: z
    .object({
      action: z.string(),
      by: person.optional(),
      at: z.iso.datetime(),
      note: z.string().optional(),
      dedupeKeys: z.array(z.string()).optional(),
      files: z.array(attachmentSchema).optional(),
    })
    .optional(),
};

/** Validates an item read back from the store. */
export const pendingItemSchema = z.discriminatedUnion("kind", [
  z.object({
    ...common,
    kind: z.literal("approval"),
    tool: z.string(),
    argSummary: z.string(),
    reason: z.string(),
    detail: z.object({ kind: z.string(), text: z.string() }).optional(),
    alwaysOptions: z.array(z.enum(["always_tool", "always_command", "always_domain", "readonly_session"])),
    provenanceQuote: z.string().optional(),
    outsideReads: z.string().optional(),
    attachedFiles: z.string().optional(),
    fingerprint: z.string().optional(),
  }),
  z.object({
    ...common,
    kind: z.literal("question"),
    questions: z.array(z.object({ id: z.string(), question: z.string(), options: z.array(z.string()) })),
    answers: z.record(z.string(), z.string()),
    answerFiles: z.record(z.string(), z.array(attachmentSchema)).optional(),
    answeredBy: z.record(z.string(), person).optional(),
    deliveries: z.array(z.string()).optional(),
    provenanceQuote: z.string().optional(),
    woken: z.boolean().optional(),
  }),
  z.object({ ...common, kind: z.literal("plan"), plan: z.string(), provenanceQuote: z.string().optional() }),
]);
