/**
 * The tool calls a conversation's history holds, as the turn loop reads and writes them: the calls
 * of the trailing assistant message still waiting for a result (what a resumed turn answers), the
 * ids already taken, the ids a model's new calls get (usable and never reused within what was
 * read: approvals and the started-calls journal are keyed by them with the turn's id), the tool
 * names they keep (a name no tool could have becomes a short placeholder), and the form a call is
 * stored in.
 */
import type { ConversationMessage, ToolCallRecord } from "../core/messages.js";
import { parseToolArguments } from "../tools/registry.js";
import type { RawToolCall } from "./provider/provider.js";
import { mangledArgumentsRecord } from "./tool-results.js";

/** The tool calls of the trailing assistant message that have no result yet. */
export function unansweredToolCalls(history: readonly ConversationMessage[]): RawToolCall[] {
  const answered = new Set<string>();
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i]!;
    if (message.role === "tool") answered.add(message.tool_call_id);
    else if (message.role === "assistant" && message.tool_calls?.length)
      return message.tool_calls
        .filter((c) => !answered.has(c.id))
        .map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
    else return [];
  }
  return [];
}

/** The ids of every tool call the history holds. */
export function callIdsOf(history: readonly ConversationMessage[]): Set<string> {
  const ids = new Set<string>();
  for (const message of history)
    if (message.role === "assistant") for (const call of message.tool_calls ?? []) ids.add(call.id);
  return ids;
}

/**
 * What a call id from the server may look like to be kept: short printable ASCII. Ids become parts
 * of store keys and card button values, which have length limits of their own. Never a "~": that
 * joins a call's id to one of its hops' (hopCallId), and a model naming a call after a hop would
 * be handed the decision a person made for that hop alone (a "once" approval of a redirect, again).
 */
const USABLE_CALL_ID = /^[\x21-\x7d]{1,64}$/;

/**
 * The id a hop of call `callId` is asked and remembered under (a redirect to another host, a
 * steering file: a step of a running call that needs its own card): `<call id>~<hop>`, which no
 * call's id can be (USABLE_CALL_ID).
 */
export function hopCallId(callId: string, hop: string): string {
  return `${callId}~${hop}`;
}

/**
 * What a tool name from the model may look like to be kept: every name a tool is offered under
 * fits (the endpoints' own rule is 1-64 letters, digits, _ and -; MCP tools are `server__tool`
 * within it), with "." and ":" for the near misses a model makes ("functions.read_file"), so the
 * unknown-tool answer can quote them.
 */
const USABLE_TOOL_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * The name a call keeps: its own when usable, else a placeholder saying how long it was. A name no
 * tool can have is unknown anyway, and kept whole it would be stored twice (the call and its
 * "Unknown tool" answer), sent back on every later request and shown on the status line, lines,
 * hidden characters and all.
 */
function usableToolName(name: string): string {
  return USABLE_TOOL_NAME.test(name) ? name : `invalid_tool_name_of_${name.length}_chars`;
}

/**
 * Give every call a usable id that no call in `taken` (the session's history so far) has, and a
 * usable tool name (usableToolName); the new ids join `taken`. Some servers omit, repeat or bloat
 * ids, and a model may reuse an earlier call's id: a turn's results are matched to its calls by id,
 * and within a turn approvals and the started-calls journal are keyed by call id (across turns by
 * the turn's id too, turn-call-key.ts: `taken` holds only the history read), so a reused id would
 * find the earlier call's decision instead of asking again.
 */
export function normaliseCalls(
  calls: readonly RawToolCall[],
  taken: Set<string>,
  turnId: string,
  step: number,
): RawToolCall[] {
  return calls.map((call, i) => {
    let id = call.id;
    for (let n = 0; !USABLE_CALL_ID.test(id) || taken.has(id); n++)
      id = `call_${turnId}_${step}_${i}${n > 0 ? `_${n}` : ""}`;
    taken.add(id);
    const name = usableToolName(call.name);
    return id === call.id && name === call.name ? call : { ...call, id, name };
  });
}

/** How a call is stored in history: mangled argument text shrinks to a short preview. */
export function toRecord(call: RawToolCall): ToolCallRecord {
  const stored =
    parseToolArguments(call.arguments).kind === "mangled"
      ? mangledArgumentsRecord(call.arguments)
      : call.arguments;
  return { id: call.id, type: "function", function: { name: call.name, arguments: stored } };
}
