/**
 * The engine's ask/answer ports: the injected collaborators for anything that needs a person —
 * a tool call's approval, a question (ask_user), a plan proposal (propose_plan). The engine
 * declares them and calls them from its asking half (approval-request.ts, interactive-calls.ts);
 * src/approvals implements them durably (cards, first press wins, restart-safe); tests implement
 * them in memory.
 */
import type { Attachment } from "../../core/attachment.js";
import type { CardPerson } from "../../core/card.js";
import type { AgentEvent, AlwaysOption, Provenance, QuestionSpec } from "../../core/events.js";
import type { PlatformUser } from "../../core/thread-target.js";

export type ApprovalOutcome = "once" | AlwaysOption | "deny" | "interrupted";

/** What the permission-required event tells the channels (the call, why, what "always" may cover). */
export type PermissionNotice = Omit<Extract<AgentEvent, { type: "permission-required" }>, "type">;

/**
 * What an approval card shows of a call: a summary line and a detail block (diff, command, URL),
 * and for a tool that binds its preview the fingerprint of the content it was made from
 * (ToolPreview.fingerprint), which the card does not show.
 */
export interface CardPreview {
  readonly summary: string;
  readonly detail?: { readonly kind: string; readonly text: string };
  readonly fingerprint?: string;
}

/**
 * Whether two previews were made from the same content: their fingerprints, never their text (a
 * diff too long to show, or one that timed out, reads the same however the file changed). A
 * preview without a fingerprint matches nothing.
 */
export function sameContent(a: CardPreview, b: CardPreview): boolean {
  return a.fingerprint !== undefined && a.fingerprint === b.fingerprint;
}

/** A call put to a person: the notice, with the card's own call id and the tool's preview. */
export interface PermissionRequest extends PermissionNotice {
  /** Summary and detail block for the approval card. */
  readonly preview: CardPreview;
  /**
   * The call changes what steers every later session (a skill, AGENTS.md): only those who may
   * loosen the session may approve it — in a shared thread the configured approvers, not whoever
   * asked (src/approvals/authorisation.ts).
   */
  readonly onlyLooseners?: boolean;
  /**
   * The outside reads (web pages, other channels, MCP data) the agent made since the requester
   * last wrote, as "web_fetch ×2": text read there may have asked for this call, and the person
   * deciding should know (TurnContext.outsideReads). Absent: none.
   */
  readonly outsideReads?: string;
  /**
   * The names of the files the requester's messages in this turn came with, the one that started it
   * and those sent into it while it ran (attached-files.ts): their content is not the requester's
   * words and may have asked for this call. Absent: none.
   */
  readonly attachedFiles?: string;
}

/** An outcome with who decided it (a display name), so a standing grant records its giver. */
export interface ApprovalVerdict {
  readonly outcome: ApprovalOutcome;
  /**
   * Who decided: their platform, user id and display name. The audit log records them by
   * platform-qualified id ("slack:U123"); a standing grant they gave names them by all three.
   */
  readonly by?: CardPerson | undefined;
  /**
   * What the card showed when the person decided (its stored summary and detail): after a
   * restart the card decided may be older than this process's preview of the call.
   */
  readonly shown?: CardPreview;
}

/** Resolves when a person decided; an interrupted turn resolves it as "interrupted". */
export interface Approver {
  (request: PermissionRequest, signal: AbortSignal): Promise<ApprovalOutcome | ApprovalVerdict>;
  /**
   * Whether the asking turn already put this call to a person: a card exists for its id, in any
   * state (a resumed turn's waiting call). That card's decision is final — asking again returns it,
   * or waits on the card while it is open — and nothing else may clear the call: not the reviewer,
   * a grant or a mode given since. Absent: no card outlives the wait that raised it.
   */
  readonly asked?: (callId: string) => Promise<boolean>;
}

export interface QuestionRequest {
  readonly callId: string;
  readonly questions: readonly QuestionSpec[];
  /** Whose turn asks: a person's, or one woken by channel content (the card warns of that). */
  readonly provenance: Provenance;
}
/** Answers keyed by question id; `interrupted` when the turn was stopped while waiting. */
export type QuestionAnswers =
  | {
      readonly answers: Readonly<Record<string, string>>;
      /** The user id of the person whose answer settled the questions (a requester or an approver). */
      readonly by?: string;
      /**
       * The files typed answers came with (their attachment records, in question order): the
       * model is shown them beside the answers. Absent: none.
       */
      readonly files?: readonly Attachment[];
    }
  | { readonly interrupted: true };
export type Asker = (request: QuestionRequest, signal: AbortSignal) => Promise<QuestionAnswers>;

export interface PlanProposal {
  readonly callId: string;
  readonly plan: string;
  /**
   * Whose turn proposes it: a person's, or one woken by channel content (the card warns of that
   * and offers no approval into auto mode).
   */
  readonly provenance: Provenance;
}
export type PlanDecision =
  | {
      readonly approved: true;
      readonly mode: "interactive" | "auto";
      /** Who approved it, when a person did: the mode switch is theirs. */
      readonly by?: PlatformUser;
    }
  | {
      readonly approved: false;
      readonly feedback?: string;
      /** The files typed feedback came with (their attachment records): shown to the model beside it. */
      readonly files?: readonly Attachment[];
    }
  | { readonly interrupted: true };
export type PlanApprover = (proposal: PlanProposal, signal: AbortSignal) => Promise<PlanDecision>;
