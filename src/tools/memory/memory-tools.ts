/**
 * remember {content, summary, scope}, memory_update {id, content, summary}, memory_forget {id}.
 * Saving is a live switch consulted on every call: when it is off the tools refuse and say so, so
 * the agent never pretends to have remembered. Category "write": a memory outlives the session
 * (and untrusted channel content must not plant one without a person seeing it). The store puts
 * each memory on one line and records who wrote it (shown with channel memories).
 */
import { z } from "zod";
import { defineTool, fail, labelText, ok, type ToolPreview, type ToolResult } from "../../core/tool.js";
import {
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
}

/** The refusal when saving is off. */
export const MEMORY_OFF_MESSAGE =
  "Saving memories is switched off in this user's settings: nothing was saved, changed or deleted. " +
  "Tell the user you cannot remember this; do not pretend you will.";

const summary = z
  .string()
  .trim()
  .min(1)
  .max(200)
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
    if (error instanceof MemoryLimitError) return fail(error.message);
    throw error;
  }
}

/** An approval preview: a one-line summary over the memory's full text. */
function textPreview(summary: string, text: string): ToolPreview {
  return { summary, detail: { kind: "text", text } };
}

/** Build remember, memory_update and memory_forget. */
export function createMemoryTools(options: MemoryToolsOptions) {
  const { store, savingEnabled } = options;
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
      return textPreview(`Remember (${args.scope}): ${args.summary}`, args.content);
    },
  });

  const update = defineTool({
    name: "memory_update",
    description: "Revise a saved memory (by id) when a fact changed or was incomplete.",
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
          await store.update(memoryKeysOf(context.request), args.id, args, {
            userId: context.request.requester.userId,
            name: context.request.requester.displayName,
          }),
          "Updated",
        ),
      );
    },
    async preview(args) {
      return textPreview(`Update memory ${args.id}: ${args.summary}`, args.content);
    },
  });

  const forget = defineTool({
    name: "memory_forget",
    description: "Delete a saved memory (by id) that is wrong or obsolete.",
    inputSchema: forgetSchema,
    category: "write",
    risk: "low",
    concurrent: false,
    label: (args) => args.id,
    async execute(args, context) {
      return whileSaving(async () =>
        changed("forgotten", args.id, await store.forget(memoryKeysOf(context.request), args.id), "Forgot"),
      );
    },
    async preview(args) {
      return { summary: `Forget memory ${args.id}` };
    },
  });

  return [remember, update, forget] as const;
}
