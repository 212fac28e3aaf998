/**
 * ParkedTurn: one versioned, serialisable state for a turn that is not running in this process —
 * parked at a person (an approval, a question, a plan), or left in progress by a restart or an
 * eviction. It holds everything a resume needs besides the history itself: the session and turn,
 * the request snapshot, how the turn began, where its history stood (the journal position) and
 * the tool calls still waiting for an answer. The pending hub checks a press against its waiting
 * calls; the session layer resumes the turn from it. The turn marker part is what a session
 * record stores while a turn is in progress (`pendingTurn`); the rest is read from the history.
 */
import { z } from "zod";
import { targetExtraSchema } from "../core/thread-target.js";
import type { ConversationMessage, ToolCallRecord } from "../core/messages.js";
import { callHash } from "../engine/call-identity.js";
import { fromVersioned, toVersioned, type VersionedRecord } from "../store/versioned.js";

export const PARKED_TURN_KIND = "parked-turn";

/** How a turn began: a new user message (`run`) or a retry, at a given history length. */
export interface TurnStart {
  readonly how: "run" | "retry";
  readonly historyLength: number;
}

/** A turn that started and has not finished: what a session record keeps to resume it. */
export interface TurnMarker {
  readonly turnId: string;
  /** requestToJSON of the turn's snapshot, with an empty message list (history is stored apart). */
  readonly request: Readonly<Record<string, unknown>>;
  readonly startedAt: string;
  /**
   * How the turn began and how long the history was then: a turn whose opening never reached the
   * history (the process died first) is started again rather than closed. Absent in older records.
   */
  readonly startedFrom?: TurnStart;
  /** The `target.extra` of the message that started the turn, for a resumed turn's renderer. */
  readonly targetExtra?: Readonly<Record<string, string | number | boolean>>;
  /**
   * The dedupe keys of the message that started the turn, until they are recorded as seen: a
   * redelivery is recognised from the record meanwhile (also after a crash).
   */
  readonly dedupeKeys?: readonly string[];
}

/** A tool call of the turn with no result in the history yet, as the history holds it. */
export interface ParkedCall {
  readonly callId: string;
  readonly tool: string;
  /** The call's arguments as the model sent them (JSON text). */
  readonly arguments: string;
}

/** A turn at rest in the store, ready to be resumed by any process. */
export interface ParkedTurn extends TurnMarker {
  readonly sessionId: string;
  /** The journal position: how many history messages the turn had persisted. */
  readonly historyLength: number;
  readonly waiting: readonly ParkedCall[];
}

/** Validates a turn marker (inside a stored session record). */
export const turnMarkerSchema = z.object({
  turnId: z.string().min(1),
  request: z.record(z.string(), z.unknown()),
  startedAt: z.string(),
  startedFrom: z
    .object({ how: z.enum(["run", "retry"]), historyLength: z.number().int().nonnegative() })
    .optional(),
  targetExtra: targetExtraSchema.optional(),
  dedupeKeys: z.array(z.string()).optional(),
});

/** Validates a parked turn read back or handed over from another process. */
export const parkedTurnSchema = turnMarkerSchema.extend({
  sessionId: z.string().min(1),
  historyLength: z.number().int().nonnegative(),
  waiting: z.array(z.object({ callId: z.string().min(1), tool: z.string().min(1), arguments: z.string() })),
});

/** Tool calls anywhere in the history that have no result message yet, oldest first. */
export function unansweredCalls(history: readonly ConversationMessage[]): readonly ToolCallRecord[] {
  const answered = new Set<string>();
  for (const message of history) if (message.role === "tool") answered.add(message.tool_call_id);
  const open: ToolCallRecord[] = [];
  for (const message of history)
    if (message.role === "assistant")
      for (const call of message.tool_calls ?? []) if (!answered.has(call.id)) open.push(call);
  return open;
}

/**
 * The parked state of a session's in-progress turn `marker`, given its persisted history (its
 * newest messages: `start` came before them).
 */
export function parkTurn(
  sessionId: string,
  marker: TurnMarker,
  history: readonly ConversationMessage[],
  start = 0,
): ParkedTurn {
  const waiting = unansweredCalls(history).map((call) => ({
    callId: call.id,
    tool: call.function.name,
    arguments: call.function.arguments,
  }));
  return Object.freeze({ ...marker, sessionId, historyLength: start + history.length, waiting });
}

/** The waiting call with this id — its tool and parsed arguments — if it is still unanswered. */
export function waitingCallOf(
  parked: ParkedTurn | undefined,
  callId: string,
): { readonly tool: string; readonly args: unknown } | undefined {
  const call = parked?.waiting.find((c) => c.callId === callId);
  if (!call) return undefined;
  try {
    return { tool: call.tool, args: JSON.parse(call.arguments || "{}") };
  } catch {
    return { tool: call.tool, args: call.arguments };
  }
}

/** Whether the parked turn still waits for exactly this call (same id, same tool and arguments). */
export function waitsFor(parked: ParkedTurn | undefined, callId: string, argsHash: string): boolean {
  const call = waitingCallOf(parked, callId);
  return call !== undefined && callHash(call.tool, call.args) === argsHash;
}

/** The stored (or handed-over) form: the schema-versioned envelope around the state. */
export function encodeParkedTurn(parked: ParkedTurn): VersionedRecord<ParkedTurn> {
  return toVersioned(PARKED_TURN_KIND, parked);
}

/** Read a parked turn back; throws a StoredDataError naming the problem (newer version, corrupt). */
export function decodeParkedTurn(raw: unknown): ParkedTurn {
  const spec = { kind: PARKED_TURN_KIND, schema: parkedTurnSchema, where: "parked turn" };
  return fromVersioned(raw, spec) as ParkedTurn;
}
