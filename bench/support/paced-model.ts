/**
 * A model that streams like a real one, on a clock: after `thinkMs` it sends a `chunk`-character
 * text delta every `everyMs` until `durationMs` of answer have gone out. Every turn's first
 * content chunk is reported with the prompt that caused it, so a benchmark can time what the
 * platform shows against what the model produced.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { ModelMessage } from "../../src/core/messages.js";
import type {
  ProviderClient,
  ProviderRequest,
  ProviderStreamEvent,
} from "../../src/engine/provider/provider.js";

/** How the model paces its answer. */
export interface Pace {
  readonly thinkMs: number;
  readonly everyMs: number;
  readonly durationMs: number;
  readonly chunk: number;
}

/** The last user message's text. */
function promptOf(request: ProviderRequest): string {
  const last = [...request.messages].reverse().find((m: ModelMessage) => m.role === "user");
  return typeof last?.content === "string" ? last.content : "";
}

/** Streams `pace`d text deltas and reports each turn's first one to `onFirstChunk`. */
export class PacedModel implements ProviderClient {
  constructor(
    private readonly pace: Pace,
    private readonly onFirstChunk: (prompt: string, at: number) => void = () => undefined,
  ) {}

  async *stream(request: ProviderRequest): AsyncGenerator<ProviderStreamEvent> {
    const prompt = promptOf(request);
    const { thinkMs, everyMs, durationMs, chunk } = this.pace;
    if (thinkMs > 0) await sleep(thinkMs);
    const started = Date.now();
    let text = "";
    for (let index = 0; index === 0 || Date.now() - started < durationMs; index += 1) {
      const delta = `${index % 10 === 9 ? "\n\n" : ""}${"word ".repeat(Math.ceil(chunk / 5)).slice(0, chunk)}`;
      text += delta;
      if (index === 0) this.onFirstChunk(prompt, performance.now());
      yield { type: "text-delta", delta };
      if (durationMs > 0) await sleep(everyMs);
    }
    yield { type: "step-finished", text, toolCalls: [], finishReason: "stop", usage: undefined };
  }
}
