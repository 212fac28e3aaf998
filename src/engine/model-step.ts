/**
 * One model call of a turn: build the outbound view (images adapted to this call's model), stream the reply, and turn what happens into
 * a step outcome. An interrupt aborts the request at once (the stream is abandoned even if the
 * provider is slow to notice) and keeps the partial text the user watched; a context overflow
 * compacts and tries again (a compaction whose summary call failed fails the step with the
 * provider's reason); any other failure stores an error marker (so `retry` works) and
 * emits a friendly `error` event. A call the endpoint refused over the images it was sent is tried
 * once more with no image at all, after an error marker naming the model and, when it could not
 * read an image, the images it may have refused: none is sent to that model again, and a model
 * that takes no image is sent none (refused-images.ts). A finished answer the model did not end itself
 * (its output limit, the provider's content filter) gets a notice saying so (cutOffNotice), so it never passes for
 * complete.
 */
import { readAbortable } from "../core/abort.js";
import { type Compactor, modelSummariser } from "./compaction.js";
import { buildOutbound, type OutboundMemo } from "./outbound.js";
import { type CallImages, prepareMedia } from "./outbound-media.js";
import { imageRefusalOf, REFUSED_BY, REFUSED_IMAGES, refusalsFor, suspectImages } from "./refused-images.js";
import type { ImageRefusal } from "./provider/image-refusal.js";
import type { ImageAttachment } from "../core/attachment.js";
import type { FinishReason } from "../core/messages.js";
import { ProviderError, type ProviderStreamEvent, type RawToolCall } from "./provider/provider.js";
import type { TurnContext } from "./turn-context.js";
import type { TokenUsage } from "../core/messages.js";

export type StepOutcome =
  | {
      readonly kind: "finished";
      readonly text: string;
      readonly toolCalls: readonly RawToolCall[];
      readonly finishReason: FinishReason;
      readonly usage: TokenUsage | undefined;
    }
  | { readonly kind: "interrupted" }
  | { readonly kind: "failed" };

type Attempt =
  | StepOutcome
  | { readonly kind: "overflow"; readonly error: ProviderError }
  | {
      readonly kind: "image-refused";
      readonly error: ProviderError;
      /** Whether the model takes no image, or the endpoint could not read one (refused-images.ts). */
      readonly about: ImageRefusal;
      /** The images the endpoint may have been unable to read (none when the model takes none). */
      readonly suspects: readonly ImageAttachment[];
    };

function asProviderError(error: unknown): ProviderError {
  if (error instanceof ProviderError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new ProviderError("connection", `The model request failed: ${message}`, undefined, { cause: error });
}

async function contextBlock(
  ctx: TurnContext,
  contextProvider: NonNullable<TurnContext["deps"]["contextProvider"]>,
): Promise<string | undefined> {
  try {
    return await contextProvider(ctx.request);
  } catch (error) {
    ctx.emit({ type: "notice", level: "warning", message: `Context provider failed: ${String(error)}` });
    return undefined;
  }
}

async function streamOnce(
  ctx: TurnContext,
  compactor: Compactor,
  memo: OutboundMemo,
  withhold: boolean,
): Promise<Attempt> {
  const { provider, registry, contextProvider } = ctx.deps;
  const view = compactor.view(ctx.history);
  const images: CallImages = { refused: () => refusalsFor(view.messages, ctx.request.model), withhold };
  const prepared = prepareMedia(view.messages, ctx.request, ctx.deps.media, images);
  const media = prepared instanceof Promise ? await prepared : prepared;
  const messages = buildOutbound({
    instructions: ctx.instructions,
    summary: view.summary,
    messages: view.messages,
    context: contextProvider ? await contextBlock(ctx, contextProvider) : undefined,
    media,
    memo,
  });
  let text = "";
  let finished: Extract<ProviderStreamEvent, { type: "step-finished" }> | undefined;
  let iterator: AsyncIterator<ProviderStreamEvent> | undefined;
  try {
    iterator = provider
      .stream({
        model: ctx.request.model,
        messages,
        tools: registry.schemasFor(ctx.request),
        // Made when the provider reads it (a real one does, for its HTTP request), not per turn.
        get signal() {
          return ctx.signal;
        },
      })
      [Symbol.asyncIterator]();
    await readAbortable(iterator, ctx, (event) => {
      if (event.type === "text-delta") {
        text += event.delta;
        ctx.emit({ type: "text-delta", delta: event.delta });
      } else if (event.type === "reasoning-delta") {
        ctx.emit({ type: "reasoning-delta", delta: event.delta });
      } else {
        finished = event;
      }
    });
    if (!ctx.aborted && !finished)
      throw new ProviderError("incomplete", "The model's reply ended before it finished. Try again.");
  } catch (error) {
    if (!ctx.aborted) {
      const failure = asProviderError(error);
      if (failure.kind === "context_overflow" && text === "") return { kind: "overflow", error: failure };
      const refusal = imageRefusalOf(failure);
      if (refusal && text === "" && media.sent.length > 0) {
        const suspects = refusal === "image" ? suspectImages(view.messages, media.sent) : [];
        return { kind: "image-refused", error: failure, about: refusal, suspects };
      }
      await ctx.append({
        role: "assistant",
        content: text || null,
        meta: { at: ctx.stamp(), error: failure.message },
      });
      ctx.emit({ type: "error", message: failure.message, recoverable: failure.recoverable });
      return { kind: "failed" };
    }
  } finally {
    if (ctx.aborted) iterator?.return?.().catch(() => undefined);
  }
  if (ctx.aborted || !finished) {
    // Stopped mid-stream: keep exactly what the user watched arrive, and no half-formed calls.
    if (text)
      await ctx.append({ role: "assistant", content: text, meta: { at: ctx.stamp(), interrupted: true } });
    return { kind: "interrupted" };
  }
  return {
    kind: "finished",
    text: finished.text || text,
    toolCalls: finished.toolCalls,
    finishReason: finished.finishReason,
    usage: finished.usage,
  };
}

/**
 * What the person is told when an answer without tool calls ended with `finishReason`: nothing
 * when the model ended it, else why it is cut off.
 */
export function cutOffNotice(finishReason: FinishReason): string | undefined {
  if (finishReason === "length") return "The answer was cut off: the model reached its output limit.";
  if (finishReason === "content_filter")
    return "The answer was cut off: it was stopped by the provider's content filter.";
  return undefined;
}

/**
 * Compact after an overflow: whether it made progress (false: none is possible), or the error its
 * summary call failed with (nothing was summarised).
 */
async function compactAfterOverflow(
  ctx: TurnContext,
  compactor: Compactor,
): Promise<boolean | ProviderError> {
  ctx.emit({ type: "compaction-started" });
  let result: Awaited<ReturnType<Compactor["compact"]>>;
  try {
    result = await compactor.compact(
      ctx.history,
      // The summary calls' tokens are the turn's too.
      modelSummariser(ctx.deps.provider, ctx.request.model, (usage) => ctx.addUsage(usage)),
      ctx.signal,
      ctx.request.requester,
    );
  } catch (error) {
    ctx.emit({ type: "compaction-finished", removedMessages: 0, summaryChars: 0 });
    return asProviderError(error);
  }
  ctx.emit({
    type: "compaction-finished",
    removedMessages: result?.removedMessages ?? 0,
    summaryChars: result?.summaryChars ?? 0,
  });
  if (!result) return false;
  ctx.emit(
    result.trimmed
      ? {
          type: "notice",
          level: "warning",
          message: "Context trimmed — some earlier turns were dropped without a summary.",
        }
      : { type: "notice", level: "info", message: "Context compacted — earlier turns were summarised." },
  );
  return true;
}

/**
 * Run one model step, compacting and retrying on context overflow until it fits or cannot shrink.
 * `compactor` and `memo` are the session's (they outlive the turn).
 */
export async function runModelStep(
  ctx: TurnContext,
  compactor: Compactor,
  memo: OutboundMemo,
): Promise<StepOutcome> {
  let withhold = false;
  for (;;) {
    const attempt = await streamOnce(ctx, compactor, memo, withhold);
    if (attempt.kind === "image-refused") {
      await noteRefusal(ctx, attempt);
      withhold = true;
      continue;
    }
    if (attempt.kind !== "overflow") return attempt;
    const progressed = await compactAfterOverflow(ctx, compactor);
    if (ctx.aborted) return { kind: "interrupted" };
    if (progressed instanceof ProviderError) {
      const message = `${attempt.error.message} Summarising its earlier turns failed: ${progressed.message}`;
      return failStep(ctx, message, progressed.recoverable);
    }
    if (!progressed)
      return failStep(ctx, `${attempt.error.message} It could not be compacted any further.`, false);
  }
}

/**
 * Store the refused attempt as an error marker naming the model, and the images it may have been
 * unable to read (neither sent to that model again), and tell the person the step goes on without
 * images.
 */
async function noteRefusal(
  ctx: TurnContext,
  { error, about, suspects }: Extract<Attempt, { kind: "image-refused" }>,
): Promise<void> {
  const paths = about === "image" ? { [REFUSED_IMAGES]: suspects.map((image) => image.path) } : {};
  await ctx.append({
    role: "assistant",
    content: null,
    meta: { at: ctx.stamp(), error: error.message, [REFUSED_BY]: ctx.request.model, ...paths },
  });
  // No file or model name: a name is anyone's choice, and a notice is shown as markdown.
  ctx.emit({
    type: "notice",
    level: "warning",
    message:
      about === "model"
        ? "The model does not take images: trying again without them. No image is sent to this model again; another model gets them."
        : suspects.length === 1
          ? "The model endpoint refused an image of this conversation: trying again without images. That image is not sent to this model again."
          : `The model endpoint refused one of ${suspects.length} images of this conversation: trying again without images. None of them is sent to this model again.`,
  });
}

/** End the step with `message`: stored as an error marker (so `retry` works) and shown. */
async function failStep(ctx: TurnContext, message: string, recoverable: boolean): Promise<StepOutcome> {
  await ctx.append({ role: "assistant", content: null, meta: { at: ctx.stamp(), error: message } });
  ctx.emit({ type: "error", message, recoverable });
  return { kind: "failed" };
}
