/**
 * TurnContext: the state of one running turn and the few operations every part of the loop
 * shares — append (and persist) a message, emit a frozen event, write an audit record, answer a
 * tool call, switch mode, stop. One context per run / resume / retry.
 */
import type { PlatformUser } from "../core/thread-target.js";
import { scrubSecrets } from "../logging/redact.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { Attachment, ImageAttachment } from "../core/attachment.js";
import type { MediaOptions } from "./outbound-media.js";
import type { SessionFacts } from "../core/tool.js";
import { type Stoppable, StopSwitch } from "../core/abort.js";
import { deepFreeze } from "../core/deep-freeze.js";
import { isoTime } from "../core/iso-time.js";
import {
  type AgentEvent,
  agentEvent,
  type Provenance,
  type ToolCallStatus,
  type TurnStatus,
} from "../core/events.js";
import type { Approver, Asker, PlanApprover } from "./asking/ports.js";
import type { AuditRecord, AuditSink } from "./audit-record.js";
import { addUsage, type ConversationMessage, type TokenUsage } from "../core/messages.js";
import type { PermissionMode } from "../core/modes.js";
import type { GrantSet } from "./permissions/grants.js";
import { type PermissionEngine, provenanceOf } from "./permissions/permission-engine.js";
import type { ProviderClient } from "./provider/provider.js";
import type { ReviewerDenialReporter, ReviewerGate } from "./reviewer/reviewer-gate.js";
import { outsideReadsOf } from "./outside-reads.js";
import { attachedFilesOf } from "./attached-files.js";
import { type ConversationExecutionRequest, withMode } from "../core/request.js";
import { preview, statusReason } from "./tool-results.js";

/** Durable storage hooks for a turn (see TurnEngine). */
export interface TurnPersistence {
  /**
   * Persist messages in order, as one write where the store can; awaited before anything depends
   * on them (a tool runs, a person is asked, the turn ends).
   */
  append(messages: readonly ConversationMessage[]): Promise<void>;
  /** Awaited before a tool executes. */
  markToolStarted(callId: string): Promise<void>;
  /** Calls journaled as started (for resume). */
  startedToolCalls(): Promise<ReadonlySet<string>>;
}

/** The session-lifetime collaborators a turn works with. */
export interface TurnDeps {
  readonly provider: ProviderClient;
  readonly registry: ToolRegistry;
  readonly permissions: PermissionEngine;
  readonly grants: GrantSet;
  readonly facts: SessionFacts;
  readonly approver?: Approver | undefined;
  readonly asker?: Asker | undefined;
  readonly planApprover?: PlanApprover | undefined;
  readonly audit?: AuditSink | undefined;
  readonly contextProvider?:
    | ((request: ConversationExecutionRequest) => Promise<string | undefined>)
    | undefined;
  readonly persistence?: TurnPersistence | undefined;
  readonly onModeChange?: ((mode: PermissionMode, by?: PlatformUser) => void) | undefined;
  readonly media?: MediaOptions | undefined;
  readonly now: () => Date;
  /** The safety reviewer of this session (reviewed mode, shadow verdicts); none = never consulted. */
  readonly reviewer?: ReviewerGate | undefined;
  /** Shows a reviewer denial to the person with "Allow anyway"; none = a warning notice. */
  readonly reviewerDenials?: ReviewerDenialReporter | undefined;
}

/** What finishing a call reports: the stored result and the card's details. */
export interface CallAnswer {
  readonly callId: string;
  readonly name: string;
  readonly status: ToolCallStatus;
  readonly content: string;
  readonly files?: readonly string[] | undefined;
  /** Images the result refers to (read_file on an image), adapted per model call. */
  readonly images?: readonly ImageAttachment[] | undefined;
  /**
   * The files a person's typed answer came with (ask_user's answer, propose_plan's typed
   * feedback): shown to the model after the run of tool results, as a person's message's files are.
   */
  readonly answerFiles?: readonly Attachment[] | undefined;
  readonly durationMs?: number | undefined;
  /** A few words on why the call ended this way, shown on status lines. */
  readonly reason?: string | undefined;
  /** Who gave the result, when a person did (an ask_user answer): their user id, stored as meta.by. */
  readonly by?: string | undefined;
}

/** What `flush` answers when there is nothing to persist. */
const SAVED: Promise<void> = Promise.resolve();

/** Per-turn state and shared operations. */
export class TurnContext implements Stoppable {
  /**
   * The turn's history, writable here only, and only by `append` and `hold`, which push onto it:
   * it only grows. Readers get it as `history`, a readonly array they cannot change.
   */
  private readonly log: ConversationMessage[];
  readonly provenance: Provenance;
  /** This turn's system prompt, settled before its first model call (see SystemPrompt). */
  instructions = "";
  iterations = 0;
  finalText = "";
  usage: TokenUsage | undefined;
  /** The turn's stop; its AbortSignal is made only when something asks for `signal`. */
  private readonly stopSwitch = new StopSwitch();
  private completed = false;
  /**
   * What outsideReads and attachedFiles last answered, with the history length and requester they
   * were worked out for (see outsideReads).
   */
  private knownAboutHistory:
    | {
        readonly length: number;
        readonly requester: string;
        readonly answers: Map<"outsideReads" | "attachedFiles", string | undefined>;
      }
    | undefined;
  /** Messages in the history that are not persisted yet (see `hold`). */
  private unsaved: ConversationMessage[] = [];
  /** Text to add to a call's result when it is stored, by call id (see `noteOnResult`). */
  private readonly resultNotes = new Map<string, string>();

  constructor(
    readonly deps: TurnDeps,
    public request: ConversationExecutionRequest,
    private readonly sink: (event: AgentEvent) => void,
  ) {
    this.log = [...request.messages];
    this.provenance = provenanceOf(request);
  }

  /**
   * The turn's history, not a copy. It only grows (see `log`): a view of it (a Compactor's, an
   * answer worked out for its length) holds until a message is added.
   */
  get history(): readonly ConversationMessage[] {
    return this.log;
  }

  /** An AbortSignal that aborts when the turn is stopped (made on first use). */
  get signal(): AbortSignal {
    return this.stopSwitch.signal;
  }

  /** Whether the turn was stopped. */
  get aborted(): boolean {
    return this.stopSwitch.aborted;
  }

  /** Call `listener` once when the turn is stopped (see Stoppable); returns its removal. */
  onStop(listener: () => void): () => void {
    return this.stopSwitch.onStop(listener);
  }

  get mode(): PermissionMode {
    return this.request.mode;
  }

  /**
   * The tools reading outside content (web pages, other channels, MCP data) the agent has called
   * since the requester last wrote, as "web_fetch ×2, catch_up"; undefined when none (see
   * outsideReadsOf). The reviewer and the approval card are both told.
   */
  outsideReads(): string | undefined {
    const { registry } = this.deps;
    return this.aboutHistory("outsideReads", (requester) =>
      outsideReadsOf(this.history, requester, (name) => registry.get(name)?.readsOutside === true),
    );
  }

  /**
   * The names of the files the requester's messages in this turn came with, as "report.pdf,
   * notes.txt"; undefined when none (see attachedFilesOf). The reviewer and the approval card are
   * both told.
   */
  attachedFiles(): string | undefined {
    return this.aboutHistory("attachedFiles", (requester) => attachedFilesOf(this.history, requester));
  }

  /**
   * `work`'s answer about the history for the requester, worked out once while the history stays
   * as it is: asking twice about one call (a shadow or unsure review, then the card) reads the
   * history once. The history only grows, so an answer holds until a message is added.
   */
  private aboutHistory(
    question: "outsideReads" | "attachedFiles",
    work: (requester: string) => string | undefined,
  ): string | undefined {
    const requester = this.request.requester.userId;
    let known = this.knownAboutHistory;
    if (known?.length !== this.history.length || known.requester !== requester) {
      known = { length: this.history.length, requester, answers: new Map() };
      this.knownAboutHistory = known;
    }
    if (known.answers.has(question)) return known.answers.get(question);
    const answer = work(requester);
    known.answers.set(question, answer);
    return answer;
  }

  /** Stop the turn: aborts the model request, running tools and any pending wait. */
  interrupt(): void {
    this.stopSwitch.stop();
  }

  /** Whom the turn serves, platform-qualified ("slack:U0123"). */
  get requesterId(): string {
    return `${this.request.platform}:${this.request.requester.userId}`;
  }

  /** The display-only timestamp for a new message. */
  stamp(): string {
    return isoTime(this.deps.now());
  }

  /**
   * Freeze, keep and persist a message (with any held before it); resolves once they are durable.
   * A plain function handing on flush's promise: every model step appends, and an async wrapper
   * cost a promise of its own each time.
   */
  append(message: ConversationMessage): Promise<void> {
    try {
      this.hold(message);
      return this.flush();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Freeze and keep a message whose persistence can wait for the next `append` (or the turn's
   * `flush`): the opening user message, which the model call does not need on disk — the session
   * keeps the turn's request, so a crash before the reply re-runs the turn — and which then goes
   * out in one write with the reply.
   */
  hold(message: ConversationMessage): void {
    const frozen = deepFreeze(message);
    this.log.push(frozen);
    this.unsaved.push(frozen);
  }

  /** Persist the held messages; resolves once they are durable. */
  flush(): Promise<void> {
    if (this.unsaved.length === 0) return SAVED;
    const messages = this.unsaved;
    this.unsaved = [];
    return this.deps.persistence?.append(messages) ?? SAVED;
  }

  /**
   * Hand an event, frozen, to the turn's listener. An error's or notice's message is posted into the thread,
   * and may quote a failure's text (a path, a URL, a server's answer): it is scrubbed of
   * token-shaped text here, once for every such event.
   */
  emit(event: AgentEvent): void {
    this.sink(
      agentEvent(
        event.type === "error" || event.type === "notice"
          ? { ...event, message: scrubSecrets(event.message) }
          : event,
      ),
    );
  }

  addUsage(usage: TokenUsage | undefined): void {
    this.usage = addUsage(this.usage, usage);
  }

  /**
   * Write a structured audit record, with the turn's requester platform-qualified; a failing sink
   * becomes a warning notice, never a crash.
   */
  audit(kind: AuditRecord["kind"], callId: string, tool: string, fields: Record<string, unknown> = {}): void {
    const sink = this.deps.audit;
    if (!sink) return;
    try {
      sink({
        ...fields,
        kind,
        sessionId: this.request.sessionId,
        turnId: this.request.turnId,
        requester: this.requesterId,
        callId,
        tool,
        at: this.stamp(),
      });
    } catch (error) {
      this.emit({
        type: "notice",
        level: "warning",
        message: `Audit record was not written: ${String(error)}`,
      });
    }
  }

  /** Switch the permission mode for the rest of the turn and tell the session (with who decided, when a person did). */
  setMode(mode: PermissionMode, by?: PlatformUser): void {
    if (mode === this.request.mode) return;
    this.request = withMode(this.request, mode);
    this.deps.onModeChange?.(mode, by);
  }

  /** Emit the finished event for a call (the card) without storing anything. */
  emitFinished(answer: CallAnswer): void {
    const reason = statusReason(answer.reason);
    this.emit({
      type: "tool-call-finished",
      callId: answer.callId,
      name: answer.name,
      status: answer.status,
      outputPreview: preview(answer.content),
      files: answer.files ?? [],
      durationMs: answer.durationMs ?? 0,
      ...(reason === undefined ? {} : { reason }),
    });
  }

  /**
   * Add `note` to the model-facing result of `callId`, however that call ends (run, denied, not
   * started): a way to tell the model something about its step once, in a message the history
   * contract already has a place for.
   */
  noteOnResult(callId: string, note: string): void {
    this.resultNotes.set(callId, note);
  }

  /** Store a call's result message and audit it (events are emitted separately). */
  async storeResult(answer: CallAnswer): Promise<void> {
    const note = this.resultNotes.get(answer.callId);
    this.resultNotes.delete(answer.callId);
    const attachments = [...(answer.images ?? []), ...(answer.answerFiles ?? [])];
    await this.append({
      role: "tool",
      tool_call_id: answer.callId,
      content: note === undefined ? answer.content : `${answer.content}\n\n${note}`,
      ...(attachments.length > 0 ? { attachments } : {}),
      meta: {
        at: this.stamp(),
        status: answer.status,
        ...(answer.files?.length ? { files: answer.files } : {}),
        ...(answer.by === undefined ? {} : { by: answer.by }),
      },
    });
    this.audit("result", answer.callId, answer.name, {
      status: answer.status,
      preview: preview(answer.content),
      ...(answer.files?.length ? { files: answer.files } : {}),
    });
  }

  /** Answer a call in one go: finished event, stored result, audit. */
  async answer(answer: CallAnswer): Promise<void> {
    this.emitFinished(answer);
    await this.storeResult(answer);
  }

  /** Emit `turn-completed` once. */
  complete(status: TurnStatus): void {
    if (this.completed) return;
    this.completed = true;
    this.emit({
      type: "turn-completed",
      status,
      iterations: this.iterations,
      finalText: this.finalText,
      usage: this.usage,
    });
  }
}
