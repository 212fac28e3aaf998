/**
 * ScriptedProvider: an in-memory ProviderClient for tests and benchmarks.
 *
 * It plays a list of scripted steps, one per `stream()` call: reasoning and text chunks, then
 * tool calls, then `step-finished`. A step may wait before finishing, hang until the request is
 * aborted, or throw a ProviderError. Every request it receives is recorded as a deep copy (the
 * signal excluded) so tests can assert exactly what was sent to the model.
 */
import type { TokenUsage } from "../../src/core/messages.js";
import type { FinishReason } from "../../src/core/messages.js";
import {
  type ProviderClient,
  ProviderError,
  type ProviderRequest,
  type ProviderStreamEvent,
  type RawToolCall,
} from "../../src/engine/provider/provider.js";

/** One scripted assistant step. */
export interface ScriptedStep {
  readonly text?: readonly string[];
  readonly reasoning?: readonly string[];
  readonly toolCalls?: readonly RawToolCall[];
  /** Defaults to "tool_calls" when the step has tool calls, else "stop". */
  readonly finishReason?: FinishReason;
  readonly usage?: TokenUsage;
  /** Milliseconds to wait after the chunks, before finishing (aborting the request cuts it short). */
  readonly delayMs?: number;
  /** After the chunks, wait until the request signal aborts, then throw an "aborted" ProviderError. */
  readonly hang?: boolean;
  /** Throw this after the chunks (before finishing). */
  readonly error?: ProviderError;
  /** Called when the step starts, with the recorded request (for assertions or side effects). */
  readonly onStart?: (request: RecordedRequest) => void;
}

/** A request as the provider received it, minus the abort signal. */
export type RecordedRequest = Omit<ProviderRequest, "signal">;

/** Build a tool call step quickly: `toolStep(["c1", "read_file", {path: "a"}])`. */
export function toolStep(
  ...calls: ReadonlyArray<readonly [id: string, name: string, args: Record<string, unknown> | string]>
): ScriptedStep {
  return {
    toolCalls: calls.map(([id, name, args]) => ({
      id,
      name,
      arguments: typeof args === "string" ? args : JSON.stringify(args),
    })),
  };
}

/** A plain text answer step. */
export function textStep(...chunks: string[]): ScriptedStep {
  return { text: chunks };
}

function abortedError(): ProviderError {
  return new ProviderError("aborted", "The model request was stopped.");
}

/** Resolve after `ms`, or reject with an "aborted" ProviderError as soon as `signal` aborts. */
function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortedError());
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortedError());
    };
    const timer = ms === Number.POSITIVE_INFINITY ? undefined : setTimeout(finish, ms);
    function finish() {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** A ProviderClient that plays scripted steps in order and records every request. */
export class ScriptedProvider implements ProviderClient {
  readonly requests: RecordedRequest[] = [];
  /** Signals of every request, in order (to assert that an interrupt aborted the stream). */
  readonly signals: (AbortSignal | undefined)[] = [];
  private readonly steps: ScriptedStep[];
  private next = 0;

  constructor(steps: readonly ScriptedStep[] = []) {
    this.steps = [...steps];
  }

  /** Append more steps to the script. */
  push(...steps: ScriptedStep[]): void {
    this.steps.push(...steps);
  }

  /** How many steps have been played. */
  get consumed(): number {
    return this.next;
  }

  /** Throw unless every scripted step was played. */
  assertAllConsumed(): void {
    if (this.next !== this.steps.length)
      throw new Error(
        `scripted provider: ${this.steps.length - this.next} of ${this.steps.length} steps unused`,
      );
  }

  /** The most recent recorded request. */
  get lastRequest(): RecordedRequest {
    const last = this.requests.at(-1);
    if (!last) throw new Error("scripted provider: no request recorded");
    return last;
  }

  async *stream(request: ProviderRequest): AsyncGenerator<ProviderStreamEvent> {
    const { signal, ...rest } = request;
    const recorded = structuredClone(rest) as RecordedRequest;
    this.requests.push(recorded);
    this.signals.push(signal);
    const step = this.steps[this.next];
    if (!step)
      throw new Error(
        `scripted provider: no step left for request #${this.requests.length} (script exhausted)`,
      );
    this.next++;
    step.onStart?.(recorded);
    if (signal?.aborted) throw abortedError();
    for (const delta of step.reasoning ?? []) yield { type: "reasoning-delta", delta };
    for (const delta of step.text ?? []) {
      if (signal?.aborted) throw abortedError();
      yield { type: "text-delta", delta };
    }
    if (step.hang) await wait(Number.POSITIVE_INFINITY, signal);
    if (step.delayMs !== undefined) await wait(step.delayMs, signal);
    if (step.error) throw step.error;
    const toolCalls = (step.toolCalls ?? []).map((c) => ({ ...c }));
    yield {
      type: "step-finished",
      text: (step.text ?? []).join(""),
      toolCalls,
      finishReason: step.finishReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop"),
      usage: step.usage,
    };
  }
}
