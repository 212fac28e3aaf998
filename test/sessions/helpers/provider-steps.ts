/**
 * Steps a rule-following test provider streams: an answer (one text delta, then the step's end)
 * and a tool call; the text of a request's last message; and the provider the lease tests share.
 */
import type {
  ProviderClient,
  ProviderRequest,
  ProviderStreamEvent,
} from "../../../src/engine/provider/provider.js";
import { stepFinished, userMessageText } from "../../support/engine-fixtures.js";

/** A step answering `text`. */
export async function* answer(text: string): AsyncGenerator<ProviderStreamEvent> {
  yield { type: "text-delta", delta: text };
  yield stepFinished(text);
}

/** A step calling tool `name` as call `id` with `args`. */
export async function* callTool(
  id: string,
  name: string,
  args: Record<string, unknown> = {},
): AsyncGenerator<ProviderStreamEvent> {
  yield stepFinished("", [{ id, name, arguments: JSON.stringify(args) }]);
}

/** The text of the request's last message, a user message; undefined when it is a tool result. */
export function lastUserText(request: ProviderRequest): string | undefined {
  const last = request.messages.at(-1);
  return last?.role === "tool" ? undefined : userMessageText(last);
}

/** "write <x>" calls write_note (as call-<x>); after a call: "wrote"; anything else: "re: <text>". */
export class WritingProvider implements ProviderClient {
  async *stream(request: ProviderRequest): AsyncGenerator<ProviderStreamEvent> {
    const text = lastUserText(request);
    if (text === undefined) return yield* answer("wrote");
    const write = /write (\S+)/.exec(text);
    if (write) return yield* callTool(`call-${write[1]}`, "write_note", { text: write[1] });
    yield* answer(`re: ${text}`);
  }
}
