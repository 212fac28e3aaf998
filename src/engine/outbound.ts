/**
 * The outbound view: what one model call actually receives.
 *
 * Built fresh for every call from the stored history, and never written back: the system prompt
 * (with the compaction summary, when older turns are compacted), the history with display-only
 * fields stripped and failed-attempt markers dropped, and the ephemeral context block appended to
 * the last user message. Attachments are rendered by the call's media view: a user message's images
 * join it as parts (or placeholder text), a tool result's images follow the run of tool results
 * as one user message (tool messages cannot carry images) on a vision model.
 */
import {
  type ContentPart,
  type ConversationMessage,
  type ModelMessage,
  toModelMessage,
} from "../core/messages.js";
import { deepFreeze, isDeeplyFrozen } from "../core/deep-freeze.js";
import { type MediaView, textOnlyView } from "./outbound-media.js";

export interface OutboundInput {
  readonly instructions: string;
  /** Summary of the compacted older turns, when compaction is in force. */
  readonly summary?: string | undefined;
  /** The history to send (already without the compacted prefix). */
  readonly messages: readonly ConversationMessage[];
  /** Ephemeral per-call context (mode reminders, channel info); never persisted. */
  readonly context?: string | undefined;
  /** How this call renders attachments (placeholders when absent). */
  readonly media?: MediaView;
}

/** Whether a stored message is a failed model attempt (kept for display and `retry`, never sent). */
export function isErrorMarker(message: ConversationMessage): boolean {
  return message.role === "assistant" && typeof message.meta?.error === "string";
}

/** The text before the images that tool results (read_file on an image) returned. */
export const TOOL_IMAGES_LEAD = "The images returned by the tool results above:";

/** Build the model-facing message list (see the module header). */
export function buildOutbound(input: OutboundInput): ModelMessage[] {
  const out: ModelMessage[] = [];
  const system = input.summary
    ? `${input.instructions}\n\n<conversation-summary>\nEarlier turns of this conversation were compacted. Summary:\n${input.summary}\n</conversation-summary>`
    : input.instructions;
  if (system) out.push({ role: "system", content: system });
  const media = input.media ?? textOnlyView();
  let toolImages: ContentPart[] = [];
  for (const message of input.messages) {
    if (isErrorMarker(message)) continue;
    if (toolImages.length > 0 && message.role !== "tool") {
      out.push(toolImagesMessage(toolImages));
      toolImages = [];
    }
    out.push(withAttachments(message, media));
    if (message.role === "tool" && media.vision && message.attachments?.length)
      toolImages.push(...media.parts(message.attachments));
  }
  if (toolImages.length > 0) out.push(toolImagesMessage(toolImages));
  if (input.context) {
    for (let i = out.length - 1; i >= 0; i--) {
      const message = out[i]!;
      if (message.role === "user") {
        out[i] = {
          role: "user",
          content: appendText(message.content, `<context>\n${input.context}\n</context>`),
        };
        break;
      }
    }
  }
  return out;
}

/** The user message after a run of tool results that carries the images those results returned. */
function toolImagesMessage(images: ContentPart[]): ModelMessage {
  return { role: "user", content: [{ type: "text", text: TOOL_IMAGES_LEAD }, ...images] };
}

/**
 * Model messages of stored messages (deep-frozen, so never changed): each is projected once, not
 * again on every call of a long session.
 */
const projections = new WeakMap<ConversationMessage, ModelMessage>();

function projected(message: ConversationMessage): ModelMessage {
  // A message with a projection was deep-frozen when it got it (and stays so): no second check.
  const known = projections.get(message);
  if (known) return known;
  if (!isDeeplyFrozen(message)) return toModelMessage(message);
  const model = deepFreeze(toModelMessage(message));
  projections.set(message, model);
  return model;
}

/** The model message, with a user message's attachments rendered by the call's media view. */
function withAttachments(message: ConversationMessage, media: MediaView): ModelMessage {
  if (message.role !== "user" || !message.attachments?.length) return projected(message);
  const parts = media.parts(message.attachments);
  const texts = parts.flatMap((part) => (part.type === "text" ? [part.text] : []));
  if (texts.length === parts.length)
    return { role: "user", content: [message.content, ...texts].filter(Boolean).join("\n\n") };
  const lead: ContentPart[] = message.content ? [{ type: "text", text: message.content }] : [];
  return { role: "user", content: [...lead, ...parts] };
}

function appendText(content: string | ContentPart[], text: string): string | ContentPart[] {
  return typeof content === "string" ? `${content}\n\n${text}` : [...content, { type: "text", text }];
}
