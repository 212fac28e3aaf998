/**
 * remember {content, summary, scope}, memory_update {id, content, summary}, memory_forget {id}.
 * Saving is a live switch consulted on every call: when it is off the tools refuse and say so, so
 * the agent never pretends to have remembered. Category "write": a memory outlives the session
 * (and untrusted channel content must not plant one without a person seeing it). The store puts
 * each memory on one line and records who wrote it (shown with channel memories); a channel
 * memory is changed or deleted only by its author or a configured approver (memory-store.ts).
 * The cards of memory_update and memory_forget show the memory as it is now and whose it is, so
 * whoever approves sees what is replaced or deleted. Everything a card shows of a memory (the
 * model's and members' words, display names) is code: literal text, and all of it can be read — a
 * memory may be 2,000 characters, past what a card's text block holds (a Telegram card shows 1,500
 * and drops the rest), and a tail nobody read would reach every later turn's instructions; a code
 * block the card cuts is posted whole beside it (card-attachment.ts). A personal (user) memory's
 * current text is not put on a card in a conversation several people share.
 */
import { z } from "zod";
import { clipLine, literalLine } from "../../core/one-line.js";
import type { ConversationExecutionRequest } from "../../core/request.js";
import { isSharedThread } from "../../core/thread-target.js";
import { defineTool, fail, labelText, ok, type ToolPreview, type ToolResult } from "../../core/tool.js";
import { threadTargetOf } from "../session-target.js";
import { authorLine, editorNote } from "./memory-authorship.js";
import {
  MemoryAccessError,
  type MemoryEditor,
  type MemoryItem,
  MemoryLimitError,
  type MemoryStore,
  MEMORY_SCOPES,
  memoryKeysOf,
} from "./memory-store.js";

/** What happened to a memory. */
export type MemoryChangeKind = "saved" | "updated" | "forgotten";

/** Dependencies of the memory tools. */
export interface MemoryToolsOptions {
  readonly store: MemoryStore;
  /** Whether saving is on right now (the user's setting); read per call. */
  readonly savingEnabled: () => boolean;
  /** Called after a memory was saved, changed or deleted (e.g. for a "memory saved" notice). */
  readonly onChange?: (change: { readonly kind: MemoryChangeKind; readonly item: MemoryItem }) => void;
  /**
   * Whether the person asking is a configured approver (global or the conversation's channel's):
   * they may change and delete other members' channel memories. None: nobody may.
   */
  readonly mayChangeOthers?: (request: ConversationExecutionRequest) => boolean;
}

/** The refusal when saving is off. */
export const MEMORY_OFF_MESSAGE =
  "Saving memories is switched off in this user's settings: nothing was saved, changed or deleted. " +
  "Tell the user you cannot remember this; do not pretend you will.";

/** The longest summary a memory has; a card shows it whole, on one line. */
const SUMMARY_MAX = 200;
/**
 * The most of an id a card shows: ids are short ("m12"), so a longer one is the model's invention
 * and the call will fail; its card shows it on one line, cut.
 */
const ID_SHOWN_MAX = 40;

const summary = z
  .string()
  .trim()
  .min(1)
  .max(SUMMARY_MAX)
  .describe("One line (15 words at most) describing the memory");
const content = z
  .string()
  .trim()
  .min(1)
  .describe("The full fact to remember, with the why; use absolute dates");
const id = z.string().min(1).describe("The memory's id, as shown in the known-memories list");

const rememberSchema = z.object({
  content,
  summary,
  scope: z
    .enum(MEMORY_SCOPES)
    .describe("user: about this person, in every chat · channel: about this channel"),
});
const updateSchema = z.object({ id, content, summary });
const forgetSchema = z.object({ id });

async function guarded(task: () => Promise<ToolResult>): Promise<ToolResult> {
  try {
    return await task();
  } catch (error) {
    if (error instanceof MemoryLimitError || error instanceof MemoryAccessError) return fail(error.message);
    throw error;
  }
}

/** An approval preview: a one-line summary over the memory's text, as code (see the module header). */
function textPreview(summary: string, text: string): ToolPreview {
  return { summary, detail: { kind: "code", text } };
}

/**
 * What a card says of the memory `id` as it is now, for `request`'s conversation: its text and
 * whose it is (a channel memory's author, and who last edited it), or that there is none. A
 * personal memory's text only outside shared conversations.
 */
function currentMemory(
  item: MemoryItem | undefined,
  id: string,
  request: ConversationExecutionRequest,
): string {
  if (!item)
    return `There is no memory ${clipLine(id, ID_SHOWN_MAX)} for this user or channel: the call will fail.`;
  if (item.scope === "user") {
    const target = threadTargetOf(request);
    if (target && isSharedThread(target))
      return `Now: a personal memory of this user (its text is not shown in a shared conversation).`;
    return `Now (a personal memory of this user):\n${item.content}`;
  }
  return `Now (a channel note saved by ${authorLine(item)}${editorNote(item)}):\n${item.content}`;
}

/** Build remember, memory_update and memory_forget. */
export function createMemoryTools(options: MemoryToolsOptions) {
  const { store, savingEnabled } = options;
  /** Who asks to change a memory in `request`, and whether they may change others' channel memories. */
  const editorOf = (request: ConversationExecutionRequest): MemoryEditor => ({
    userId: request.requester.userId,
    name: request.requester.displayName,
    mayChangeOthers: options.mayChangeOthers?.(request) ?? false,
  });
  /** Run a change only while saving is on; a limit error becomes a failed result. */
  const whileSaving = (task: () => Promise<ToolResult>): Promise<ToolResult> =>
    savingEnabled() ? guarded(task) : Promise.resolve(fail(MEMORY_OFF_MESSAGE));
  /** Report a change to the memory `memoryId` named (and tell onChange), or that there is none. */
  const changed = (kind: MemoryChangeKind, memoryId: string, item: MemoryItem | undefined, done: string) => {
    if (!item)
      return fail(
        `There is no memory with id ${memoryId} for this user or channel; check the known-memories list.`,
      );
    options.onChange?.({ kind, item });
    return ok(`${done} memory ${item.id}: ${item.summary}`);
  };

  const remember = defineTool({
    name: "remember",
    description:
      "Save a durable fact for future conversations: about the user (scope user) or this channel (scope channel). " +
      "Save conservatively; update an existing memory instead of adding a near-duplicate.",
    inputSchema: rememberSchema,
    category: "write",
    risk: "low",
    concurrent: false,
    label: (args) => labelText(args.summary),
    async execute(args, context) {
      return whileSaving(async () => {
        const item = await store.add(memoryKeysOf(context.request), {
          ...args,
          createdBy: context.request.requester.userId,
          createdByName: context.request.requester.displayName,
        });
        options.onChange?.({ kind: "saved", item });
        return ok(`Remembered (${item.scope} memory ${item.id}): ${item.summary}`);
      });
    },
    async preview(args) {
      return textPreview(`Remember (${args.scope}): ${literalLine(args.summary, SUMMARY_MAX)}`, args.content);
    },
  });

  const update = defineTool({
    name: "memory_update",
    description:
      "Revise a saved memory (by id) when a fact changed or was incomplete. A channel memory only its author (or a configured approver) may change.",
    inputSchema: updateSchema,
    category: "write",
    risk: "low",
    concurrent: false,
    label: (args) => labelText(`${args.id}: ${args.summary}`),
    async execute(args, context) {
      return whileSaving(async () =>
        changed(
          "updated",
          args.id,
          await store.update(memoryKeysOf(context.request), args.id, args, editorOf(context.request)),
          "Updated",
        ),
      );
    },
    async preview(args, context) {
      const item = await store.find(memoryKeysOf(context.request), args.id);
      return textPreview(
        `Update memory ${literalLine(args.id, ID_SHOWN_MAX)}: ${literalLine(args.summary, SUMMARY_MAX)}`,
        `${currentMemory(item, args.id, context.request)}\n\nAfter the change:\n${args.content}`,
      );
    },
  });

  const forget = defineTool({
    name: "memory_forget",
    description:
      "Delete a saved memory (by id) that is wrong or obsolete. A channel memory only its author (or a configured approver) may delete.",
    inputSchema: forgetSchema,
    category: "write",
    risk: "low",
    concurrent: false,
    label: (args) => args.id,
    async execute(args, context) {
      return whileSaving(async () =>
        changed(
          "forgotten",
          args.id,
          await store.forget(memoryKeysOf(context.request), args.id, editorOf(context.request)),
          "Forgot",
        ),
      );
    },
    async preview(args, context) {
      const item = await store.find(memoryKeysOf(context.request), args.id);
      return textPreview(
        `Forget memory ${literalLine(args.id, ID_SHOWN_MAX)}`,
        currentMemory(item, args.id, context.request),
      );
    },
  });

  return [remember, update, forget] as const;
}
