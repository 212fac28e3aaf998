/**
 * Folds the chunks of one streamed chat completion into provider events: text and reasoning
 * deltas as they arrive, then one `step-finished` with the whole text, the raw tool calls, the
 * finish reason and usage. A stream that ends without a finish reason is an "incomplete" error,
 * never a silent success, and so is one that streams more than `MAX_REPLY_CHARS` (a server that
 * never stops would otherwise grow the reply until the process runs out of memory); error
 * payloads inside the stream become ProviderErrors. A usage report that cannot be read is left
 * out (the step has no token counts) and handed to `onInvalidUsage`, never failing the step.
 *
 * Only choice 0 is the reply. Chunks that carry nothing for it (other choices, empty or
 * `choices: []` chunks, a bare role) are skipped but not free: each costs one character plus what
 * it carries, against a budget of `MAX_REPLY_CHARS` too, so an endless stream of them ends the
 * step; and they are not progress (`advanced`), so they do not hold off the provider's stall timer.
 */
import type { TokenUsage } from "../../core/messages.js";
import {
  deltaTexts,
  parseChunk,
  readUsage,
  type StreamChunk,
  type ToolCallFragment,
} from "./openai-chunk.js";
import { midStreamError } from "./openai-errors.js";
import { ToolCallAssembler } from "./openai-tool-calls.js";
import type { FinishReason } from "../../core/messages.js";
import { MAX_REPLY_CHARS } from "../../core/messages.js";
import { ProviderError, type ProviderStreamEvent } from "./provider.js";
import { groupedCount } from "../../core/count-text.js";

/** Assembles one assistant step from its stream chunks. */
export class StreamAssembler {
  private text = "";
  /** Characters of text and reasoning streamed so far. */
  private streamed = 0;
  /** What the chunks that are not part of the reply cost so far (see the module header). */
  private ignored = 0;
  private lastAdvanced = false;
  private rawFinishReason: string | undefined;
  private usage: TokenUsage | undefined;
  private output = false;
  private readonly toolCalls: ToolCallAssembler;

  /**
   * @param syntheticId makes a tool-call id when the server sent none.
   * @param onInvalidUsage is told what is wrong with a usage report that was left out.
   */
  constructor(
    syntheticId: (position: number) => string,
    private readonly onInvalidUsage: (problem: string) => void,
  ) {
    this.toolCalls = new ToolCallAssembler(syntheticId);
  }

  /** Whether the model has produced any output yet (text, reasoning or a tool-call fragment). */
  get outputBegan(): boolean {
    return this.output;
  }

  /**
   * Whether the last chunk pushed moved the reply on: added text, reasoning or tool-call characters
   * on choice 0, or gave its first finish reason. Only such chunks count as the model making
   * progress (an empty tool-call fragment or a repeated finish reason does not).
   */
  get advanced(): boolean {
    return this.lastAdvanced;
  }

  /** Validate and fold one parsed SSE payload; returns the deltas to emit, in order. */
  push(raw: unknown): ProviderStreamEvent[] {
    const replied = this.streamed + this.toolCalls.size;
    const finished = this.rawFinishReason !== undefined;
    const chunk = parseChunk(raw);
    if (chunk.object === "error") throw midStreamError(raw);
    if (chunk.usage !== undefined && chunk.usage !== null) {
      const reading = readUsage(chunk.usage);
      if (reading.kind === "usage") this.usage = reading.usage;
      else this.onInvalidUsage(reading.problem);
    }
    const events: ProviderStreamEvent[] = [];
    let ignoredChars = 0;
    for (const choice of chunk.choices ?? []) {
      if ((choice.index ?? 0) !== 0) {
        ignoredChars += carriedChars(choice.delta);
        continue;
      }
      const delta = choice.delta;
      const content = deltaTexts(delta?.content);
      const reasoning = (delta?.reasoning_content || delta?.reasoning || "") + content.reasoning;
      if (reasoning) {
        this.output = true;
        events.push(Object.freeze({ type: "reasoning-delta", delta: reasoning }));
      }
      if (content.text) {
        this.output = true;
        this.text += content.text;
        events.push(Object.freeze({ type: "text-delta", delta: content.text }));
      }
      for (const fragment of delta?.tool_calls ?? []) {
        this.output = true;
        this.toolCalls.add(fragment);
      }
      this.streamed += reasoning.length + content.text.length;
      if (this.streamed + this.toolCalls.size > MAX_REPLY_CHARS) throw tooLong();
      if (choice.finish_reason === "error") {
        throw midStreamError(chunk.error ?? 'the server ended the reply with finish_reason "error"');
      }
      if (choice.finish_reason) this.rawFinishReason = choice.finish_reason;
    }
    this.lastAdvanced =
      this.streamed + this.toolCalls.size > replied || (!finished && this.rawFinishReason !== undefined);
    this.ignored += (this.lastAdvanced ? 0 : 1) + ignoredChars;
    if (this.ignored > MAX_REPLY_CHARS) throw tooMuchBesideTheReply();
    return events;
  }

  /** The closing event; throws "incomplete" when the server never said why it stopped. */
  finish(): ProviderStreamEvent {
    if (this.rawFinishReason === undefined) {
      throw new ProviderError(
        "incomplete",
        "The model's reply was cut off: the stream ended without a finish reason. Try again.",
      );
    }
    const toolCalls = Object.freeze(this.toolCalls.finish());
    return Object.freeze({
      type: "step-finished",
      text: this.text,
      toolCalls,
      finishReason: mapFinishReason(this.rawFinishReason, toolCalls.length > 0),
      usage: this.usage,
    });
  }
}

/**
 * Normalise a server's finish reason: "function_call" is "tool_calls"; servers that say "stop"
 * (or something unknown such as "eos") after tool calls mean "tool_calls"; "tool_calls" with no
 * call assembled means "stop".
 */
export function mapFinishReason(raw: string, hasToolCalls: boolean): FinishReason {
  switch (raw) {
    case "length":
    case "content_filter":
      return raw;
    default:
      return hasToolCalls ? "tool_calls" : "stop";
  }
}

function tooLong(): ProviderError {
  return new ProviderError(
    "incomplete",
    `The model's reply was cut off: it was too long (over ${groupedCount(MAX_REPLY_CHARS)} characters).`,
  );
}

function tooMuchBesideTheReply(): ProviderError {
  return new ProviderError(
    "incomplete",
    `The model's reply was cut off: the endpoint streamed over ${groupedCount(MAX_REPLY_CHARS)} characters of chunks that are not part of the reply (empty chunks or other choices).`,
  );
}

/** Characters a delta of a choice that is not the reply carries: its texts and tool-call parts. */
function carriedChars(delta: NonNullable<StreamChunk["choices"]>[number]["delta"]): number {
  if (!delta) return 0;
  const content = deltaTexts(delta.content);
  let chars =
    content.text.length +
    content.reasoning.length +
    (delta.reasoning_content?.length ?? 0) +
    (delta.reasoning?.length ?? 0);
  for (const fragment of delta.tool_calls ?? []) chars += fragmentChars(fragment);
  return chars;
}

function fragmentChars(fragment: ToolCallFragment): number {
  const args = fragment.function?.arguments;
  const argChars = typeof args === "string" ? args.length : args ? JSON.stringify(args).length : 0;
  return (fragment.id?.length ?? 0) + (fragment.function?.name?.length ?? 0) + argChars;
}
