/**
 * ConversationExecutionRequest: an immutable snapshot of everything one turn needs.
 *
 * It is captured when the message arrives, so nothing that changes later (a config reload, a
 * mode switch, another message) leaks into a running turn. The snapshot is deep-frozen and
 * serialisable (`toJSON` / `requestFromJSON`) so a turn can be persisted, resumed and replayed.
 * Building one copies only what is still mutable: history messages that are already deep-frozen
 * (every message a turn appends, and a loaded session's history) are shared, not cloned, so the
 * cost of a snapshot does not grow with the size of each message in a long session.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { deepFreeze, frozenCopy, frozenWith } from "./deep-freeze.js";
import type { ConversationMessage } from "./messages.js";
import { type PermissionMode, permissionModeSchema } from "./modes.js";
import { type Attachment, attachmentSchema } from "./attachment.js";

export const DEFAULT_MAX_STEPS = 30;
export const RUN_TO_COMPLETION_MAX_STEPS = 200;
/** Tools that are always allowed whatever `allowedTools` says. */
export const ALWAYS_ALLOWED_TOOLS: ReadonlySet<string> = new Set(["update_plan"]);

export interface Requester {
  /** Platform user id, e.g. Slack "U0123" or Telegram "4567". */
  readonly userId: string;
  readonly displayName: string;
}

export interface ConversationExecutionRequest {
  readonly prompt: string;
  /** Files the prompt's user message carries (images adapted per model call). */
  readonly attachments: readonly Attachment[];
  readonly messages: readonly ConversationMessage[];
  readonly sessionId: string;
  readonly turnId: string;
  /** "slack" | "telegram" | "console" | … */
  readonly platform: string;
  /** Where on the platform: "dm", "channel", "thread", "topic", "subscription". */
  readonly surface: string;
  readonly provider: string;
  readonly model: string;
  readonly title: string;
  readonly workspace: { readonly root: string; readonly context: string };
  readonly requester: Requester;
  /** null = every enabled tool; otherwise only these (plus ALWAYS_ALLOWED_TOOLS). */
  readonly allowedTools: readonly string[] | null;
  readonly maxSteps: number;
  readonly runToCompletion: boolean;
  readonly mode: PermissionMode;
  readonly metadata: Readonly<Record<string, unknown>>;
}

/** The request fields `createRequest` fills in when they are left out. */
type DefaultedField =
  | "turnId"
  | "maxSteps"
  | "runToCompletion"
  | "metadata"
  | "allowedTools"
  | "title"
  | "surface"
  | "provider"
  | "attachments";

export type RequestInput = Omit<ConversationExecutionRequest, DefaultedField> &
  Partial<Pick<ConversationExecutionRequest, DefaultedField>>;

const NO_ATTACHMENTS: readonly Attachment[] = Object.freeze([]);

/** A fresh turn id: short and random, unique within a session, readable in logs. */
export function newTurnId(): string {
  // 12 random hex digits (a v4 UUID's first 48 bits); randomUUID draws from a cached entropy pool.
  const uuid = randomUUID();
  return uuid.slice(0, 8) + uuid.slice(9, 13);
}

/** Build a frozen snapshot from mutable inputs; later mutation of the inputs cannot reach inside. */
export function createRequest(input: RequestInput): ConversationExecutionRequest {
  const maxSteps = input.maxSteps ?? DEFAULT_MAX_STEPS;
  if (!Number.isInteger(maxSteps) || maxSteps < 1)
    throw new RangeError(`maxSteps must be a positive integer`);
  // The fields are built fresh here; only what the caller handed in whole is copied (frozenCopy
  // shares what is already deep-frozen, such as a session's history).
  return deepFreeze({
    prompt: input.prompt,
    attachments: input.attachments?.length ? frozenCopy(input.attachments) : NO_ATTACHMENTS,
    messages: frozenCopy(input.messages),
    sessionId: input.sessionId,
    turnId: input.turnId ?? newTurnId(),
    platform: input.platform,
    surface: input.surface ?? "thread",
    provider: input.provider ?? "openai",
    model: input.model,
    title: input.title ?? "",
    workspace: { root: input.workspace.root, context: input.workspace.context },
    requester: { userId: input.requester.userId, displayName: input.requester.displayName },
    allowedTools: input.allowedTools ? [...input.allowedTools] : null,
    maxSteps,
    runToCompletion: input.runToCompletion ?? false,
    mode: input.mode,
    metadata: frozenCopy(input.metadata ?? {}),
  });
}

/** The same request with a different message list. */
export function withMessages(
  request: ConversationExecutionRequest,
  messages: readonly ConversationMessage[],
): ConversationExecutionRequest {
  return frozenWith(request, { messages });
}

/** The same request in another permission mode (a plan approval switches mode mid-turn). */
export function withMode(
  request: ConversationExecutionRequest,
  mode: PermissionMode,
): ConversationExecutionRequest {
  return frozenWith(request, { mode });
}

/** Whether this turn may be offered / may run the named tool. */
export function allowsTool(request: ConversationExecutionRequest, toolName: string): boolean {
  return (
    request.allowedTools === null ||
    ALWAYS_ALLOWED_TOOLS.has(toolName) ||
    request.allowedTools.includes(toolName)
  );
}

/** The step budget in force: maxSteps, or the run-to-completion ceiling. */
export function effectiveMaxSteps(request: ConversationExecutionRequest): number {
  return request.runToCompletion ? Math.max(request.maxSteps, RUN_TO_COMPLETION_MAX_STEPS) : request.maxSteps;
}

const requestJsonSchema = z.object({
  prompt: z.string(),
  attachments: z.array(attachmentSchema).default([]),
  messages: z.array(z.looseObject({ role: z.enum(["system", "user", "assistant", "tool"]) })),
  sessionId: z.string().min(1),
  turnId: z.string().min(1),
  platform: z.string().min(1),
  surface: z.string(),
  provider: z.string(),
  model: z.string(),
  title: z.string(),
  workspace: z.object({ root: z.string(), context: z.string() }),
  requester: z.object({ userId: z.string(), displayName: z.string() }),
  allowedTools: z.array(z.string()).nullable(),
  maxSteps: z.number().int().positive(),
  runToCompletion: z.boolean(),
  mode: permissionModeSchema,
  metadata: z.record(z.string(), z.unknown()),
});

/**
 * Serialisable form for persistence and replay: the snapshot itself — deep-frozen plain data, so
 * nothing can change it and nothing needs copying (a structured clone per turn showed in profiles).
 */
export function requestToJSON(request: ConversationExecutionRequest): Readonly<Record<string, unknown>> {
  return request as unknown as Readonly<Record<string, unknown>>;
}

/** Rebuild a snapshot from `requestToJSON` output; throws a ZodError naming bad fields. */
export function requestFromJSON(json: unknown): ConversationExecutionRequest {
  const parsed = requestJsonSchema.parse(json);
  return frozenCopy(parsed as unknown as ConversationExecutionRequest);
}
