/**
 * A ProviderClient decorator that times every model request into Metrics: total latency (send to
 * end of stream), first-token latency (send to the first streamed text or reasoning fragment),
 * the outcome (ok, error, interrupted) and the token usage the provider reports. Events pass
 * through unchanged; failures are counted and rethrown as they were.
 */
import {
  ProviderError,
  type ProviderClient,
  type ProviderRequest,
  type ProviderStreamEvent,
} from "../engine/provider/provider.js";
import type { Metrics, ModelOutcome } from "../ops/metrics.js";

/** Milliseconds from an arbitrary origin (monotonic). */
export type Clock = () => number;

function outcomeOf(error: unknown, request: ProviderRequest): ModelOutcome {
  if (request.signal?.aborted) return "interrupted";
  return error instanceof ProviderError && error.kind === "aborted" ? "interrupted" : "error";
}

/** Wraps a ProviderClient so each `stream()` call is measured (see the module header). */
export class MeteredProvider implements ProviderClient {
  constructor(
    private readonly inner: ProviderClient,
    private readonly metrics: Metrics,
    private readonly clock: Clock = () => performance.now(),
  ) {}

  /** Stream one step from the wrapped provider, recording its timing, outcome and usage. */
  async *stream(request: ProviderRequest): AsyncIterable<ProviderStreamEvent> {
    const started = this.clock();
    let firstTokenMs: number | undefined;
    // A consumer that stops iterating early (the turn was interrupted) leaves this as is.
    let outcome: ModelOutcome = "interrupted";
    try {
      for await (const event of this.inner.stream(request)) {
        if (firstTokenMs === undefined && (event.type === "text-delta" || event.type === "reasoning-delta"))
          firstTokenMs = this.clock() - started;
        if (event.type === "step-finished") {
          outcome = "ok";
          if (event.usage) {
            this.metrics.tokensUsed(request.model, "prompt", event.usage.inputTokens);
            this.metrics.tokensUsed(request.model, "completion", event.usage.outputTokens);
          }
        }
        yield event;
      }
    } catch (error) {
      outcome = outcomeOf(error, request);
      if (outcome === "error") this.metrics.error("model");
      throw error;
    } finally {
      this.metrics.modelRequestFinished(request.model, outcome, this.clock() - started, firstTokenMs);
    }
  }
}
