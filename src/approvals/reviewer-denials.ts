/**
 * ReviewerDenials: the person's side of a safety-reviewer denial. The engine reports a denial; this
 * persists it (in the "approvals" space, beside the pending items) and posts a card in the turn's
 * thread with the call in full (as an approval card shows it), the reviewer's full reason and an
 * "Allow anyway" button. A press in the card's own conversation (press-place.ts) by the requester
 * or a configured approver (as the approvals configuration has them at the press, not when the
 * denial was raised: withLiveDeciders; anyone else gets the usual refusal) gives a one-shot grant
 * for that exact tool and canonical arguments, for a turn of the requester and for
 * ONCE_GRANT_TTL_MS, in the session's grants — the engine consumes it on the first matching call; a
 * call with other arguments, another member's or a later one goes through the reviewer again. First press wins, also across processes
 * (`setIfAbsent` on the decision key). Who asked is a person on the card and is named with their
 * user id in the answers to a press, never by a display name alone.
 */
import type { Logger } from "pino";
import { z } from "zod";
import { canonicalJson } from "../engine/call-identity.js";
import type { AuditSink } from "../engine/audit-record.js";
import { type Grant, ONCE_GRANT_TTL_MS } from "../engine/permissions/grants.js";
import type { ReviewerDenial, ReviewerDenialReporter } from "../engine/reviewer/reviewer-gate.js";
import type { ButtonPress, PressResult } from "../core/button-press.js";
import type { ThreadOutput } from "../core/thread-output.js";
import { storedTargetSchema, type ThreadTarget } from "../core/thread-target.js";
import type { KeyValueSpace, Store } from "../store/store.js";
import { personText } from "../core/person-text.js";
import { decidedOutcome, detailBlock, requesterField, shownBlock } from "./approval-card.js";
import {
  type ApprovalsConfig,
  allowedApproversFor,
  cardPerson,
  mayDecide,
  qualifiedUserId,
  withLiveDeciders,
} from "./authorisation.js";
import type { Card, CardRef } from "../core/card.js";
import type { AskContext } from "./pending-hub-types.js";
import { newPendingId, type PendingPerson } from "./pending-item.js";
import { NOT_PRESSED_WHERE_ASKED, pressedElsewhere } from "./press-place.js";

/** The card action that grants the one-shot "Allow anyway". */
export const ALLOW_ANYWAY = "allow_anyway";

/** What the session layer provides: thread outputs, the session's grants, the audit sink. */
export interface ReviewerDenialsHost {
  outputFor(target: ThreadTarget): ThreadOutput | undefined;
  /** Add a grant to the session's live grants, durably; false when the session is gone. */
  grant(sessionId: string, grant: Grant): Promise<boolean>;
  readonly audit: AuditSink;
}

export interface ReviewerDenialsOptions {
  readonly store: Store;
  readonly host: ReviewerDenialsHost;
  readonly config: Pick<ApprovalsConfig, "approvers" | "perChannel" | "ttlMs">;
  readonly logger: Logger;
  readonly now: () => Date;
}

const person = z.object({ platform: z.string().min(1), userId: z.string().min(1), name: z.string() });
const recordSchema = z.object({
  id: z.string().min(1),
  sessionId: z.string().min(1),
  target: storedTargetSchema,
  callId: z.string(),
  tool: z.string().min(1),
  /** Canonical JSON of the denied call's arguments. */
  args: z.string(),
  summary: z.string(),
  /** The tool's preview detail of the call, when it gave one (see shownDetail). */
  detail: z.object({ kind: z.string(), text: z.string() }).optional(),
  reason: z.string(),
  requester: person,
  allowedApprovers: z.array(z.string()),
  createdAt: z.string(),
  cardRef: z.looseObject({ messageId: z.string() }).optional(),
  grantedBy: person.optional(),
});
export type DenialRecord = z.infer<typeof recordSchema>;

type CardPress = Extract<ButtonPress, { kind: "card" }>;

type Detail = NonNullable<DenialRecord["detail"]>;

/**
 * The arguments of a call in full, as a code block: what the card shows of a call whose tool has
 * no preview detail. `args` is the canonical JSON the grant binds; it is shown indented.
 */
function argumentsDetail(args: string): Detail {
  try {
    return { kind: "code", text: JSON.stringify(JSON.parse(args), null, 2) };
  } catch {
    return { kind: "code", text: args };
  }
}

/**
 * What a denial card shows of the call beside its summary: the tool's preview detail as an
 * approval card shows it (the command, a diff, the URL), else — also on records stored before
 * denials kept one — the arguments in full. Never only a summary's first characters: "Allow
 * anyway" grants this exact call, and a padded command's tail must not be out of sight. A code
 * block too long for the platform's card is cut there with a notice and posted whole beside the
 * card, as an approval card's is (card-attachment.ts).
 */
function shownDetail(record: DenialRecord): Detail {
  return record.detail && record.detail.text.length > 0 ? record.detail : argumentsDetail(record.args);
}

/**
 * The card of a denial: the call in full (its summary, then its detail: see shownDetail), the
 * reviewer's full reason, and "Allow anyway" until someone used it.
 */
export function denialCard(record: DenialRecord): Card {
  const open = record.grantedBy === undefined;
  const shown = detailBlock(shownDetail(record));
  const shownCall = shown ? [shown] : [];
  return {
    pendingId: record.id,
    kind: "approval",
    title: `Blocked by the safety reviewer: ${record.tool}`,
    tool: record.tool,
    blocks: [
      { kind: "text" as const, text: record.summary },
      // The reason goes before the call: a platform shortening a long card cuts from the end.
      { kind: "quote" as const, text: `Reviewer: ${record.reason}` },
      ...shownCall,
      {
        kind: "fields" as const,
        fields: [{ label: "Tool", value: record.tool }, requesterField(record.requester, "Requested by")],
      },
    ].map(shownBlock),
    buttons: open ? [{ action: ALLOW_ANYWAY, label: "Allow anyway", style: "danger" }] : [],
    ...(open
      ? {
          footer:
            "Allow anyway lets the agent run this exact call once, for its requester, within the hour; then ask it to try again.",
        }
      : {
          outcome: record.grantedBy
            ? decidedOutcome(
                "Allowed anyway by ",
                cardPerson(record.grantedBy),
                " — the agent may run this exact call once",
              )
            : { text: "Allowed anyway — the agent may run this exact call once" },
        }),
  };
}

/** A person in a press's answer: their name and user id, which a display name cannot fake. */
function named(person: PendingPerson): string {
  return personText(cardPerson(person));
}

/** Reviewer denials with "Allow anyway" (see the module header). */
export class ReviewerDenials {
  private readonly space: KeyValueSpace;

  constructor(private readonly options: ReviewerDenialsOptions) {
    this.space = options.store.space("approvals");
  }

  /** The engine-facing reporter of one session; `context` is read when a denial arrives. */
  reporterFor(context: () => AskContext): ReviewerDenialReporter {
    return async (denial: ReviewerDenial) => {
      const ctx = context();
      const record: DenialRecord = {
        id: newPendingId(),
        sessionId: ctx.sessionId,
        target: { ...ctx.target },
        callId: denial.callId,
        tool: denial.tool,
        args: canonicalJson(denial.args),
        summary: denial.shown?.summary ?? denial.summary,
        ...(denial.shown?.detail ? { detail: { ...denial.shown.detail } } : {}),
        reason: denial.reason,
        requester: { ...ctx.requester },
        allowedApprovers: [...allowedApproversFor(this.options.config, ctx.target, ctx.requester.userId)],
        createdAt: this.options.now().toISOString(),
      };
      await this.save(record);
      const output = this.options.host.outputFor(record.target);
      if (!output) throw new Error(`no output is registered for platform "${record.target.platform}"`);
      const cardRef: CardRef = await output.postCard(denialCard(record));
      await this.save({ ...record, cardRef });
    };
  }

  /** Whether a card press is meant for a denial card. */
  handles(press: CardPress): boolean {
    return press.action === ALLOW_ANYWAY;
  }

  /**
   * An "Allow anyway" press: from the card's conversation, authorised (its deciders as the
   * configuration has them now), first press wins, then the one-shot grant.
   */
  async press(press: CardPress): Promise<PressResult> {
    const record = await this.load(press.pendingId);
    if (!record) return { status: "unknown", message: "This denial is no longer known." };
    if (pressedElsewhere(press, record.target))
      return { status: "not_allowed", message: NOT_PRESSED_WHERE_ASKED };
    const { allowedApprovers } = withLiveDeciders(record, this.options.config);
    if (!mayDecide(allowedApprovers, press.platform, press.user.id))
      return {
        status: "not_allowed",
        message: `Only ${named(record.requester)} or a configured approver can allow this.`,
      };
    const by: PendingPerson = { platform: press.platform, userId: press.user.id, name: press.user.name };
    const won = await this.space.setIfAbsent(`denial-decision:${record.id}`, by, this.options.config.ttlMs);
    if (!won) {
      const first = await this.space.get<PendingPerson>(`denial-decision:${record.id}`);
      return {
        status: "already_decided",
        message: `Already allowed by ${first ? named(first) : "someone"}.`,
      };
    }
    const granted = await this.options.host.grant(record.sessionId, {
      kind: "once",
      tool: record.tool,
      args: record.args,
      requester: qualifiedUserId(record.requester.platform, record.requester.userId),
      expiresAt: new Date(this.options.now().getTime() + ONCE_GRANT_TTL_MS).toISOString(),
    });
    if (!granted) return { status: "invalid", message: "This conversation is no longer active." };
    const settled = { ...record, grantedBy: by };
    await this.save(settled);
    this.options.host.audit({
      kind: "allow_anyway_granted",
      sessionId: record.sessionId,
      turnId: "",
      callId: record.callId,
      tool: record.tool,
      at: this.options.now().toISOString(),
      by: `${by.platform}:${by.userId}`,
    });
    await this.updateCard(settled);
    return {
      status: "accepted",
      message: `Allowed once: ${named(record.requester)} may ask the agent to try that exact call again within the hour.`,
    };
  }

  private async updateCard(record: DenialRecord): Promise<void> {
    const output = this.options.host.outputFor(record.target);
    if (!output || !record.cardRef) return;
    try {
      await output.updateCard(record.cardRef as CardRef, denialCard(record));
    } catch (error) {
      this.options.logger.warn({ err: error, denialId: record.id }, "updating a denial card failed");
    }
  }

  private save(record: DenialRecord): Promise<void> {
    return this.space.set(`denial:${record.id}`, record, this.options.config.ttlMs);
  }

  private async load(id: string): Promise<DenialRecord | undefined> {
    try {
      const parsed = recordSchema.safeParse(await this.space.get<unknown>(`denial:${id}`));
      return parsed.success ? parsed.data : undefined;
    } catch (error) {
      this.options.logger.error({ err: error, denialId: id }, "reading a denial failed");
      return undefined;
    }
  }
}
