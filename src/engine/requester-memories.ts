/**
 * Requester memories: the end of the system prompt that belongs to the person asking a turn —
 * what the agent remembers about them (user-scope memories, which follow a person into every
 * chat) and about the channel. Every turn carries its own requester's memories only, so in a
 * shared thread one person's personal memories never reach the prompt of another person's turn;
 * a resumed or scheduled turn is its request's requester's (a scheduled turn names the person who
 * created it). A turn woken by channel content carries the channel's memories only: nobody asked
 * for it, and its answer goes to a thread others may read, so the subscriber's personal memories
 * (which follow them out of their DM) stay out of it.
 *
 * Each person's block is read from the store on their first turn in the session and kept for the
 * rest of it, as the session's one block was before: a later turn by someone already seen costs
 * no store call and keeps the same prompt (friendly to the model's prompt cache). What is saved
 * meanwhile reaches the sessions that start after it; within the session the model has the tool
 * results. A failed read is a notice on that turn, and the person's turns go on without memories.
 */
import type { ConversationExecutionRequest, Requester } from "../core/request.js";
import { oneLine } from "../core/one-line.js";
import { type MemoryKeys, type MemoryStore, memoryKeysOf } from "../tools/memory/memory-store.js";
import { MEMORIES_SECTION_MAX_CHARS, memoriesSection } from "./instructions.js";
import { provenanceOf } from "./permissions/permission-engine.js";
import { promptBlock } from "./prompt-block.js";
import type { KnowledgePart } from "./session-knowledge.js";

/** What `promptBlock("memories", …)` adds around its text. */
const WRAPPER_CHARS = memoriesSection("x").length - 1;

/** How long `text` is once inside the memories block (defusing a tag there adds characters). */
function inBlockLength(text: string): number {
  return promptBlock("memories", text).length - WRAPPER_CHARS;
}

/**
 * The memory block of `requester` (whose memories and channel `keys` name), with a line saying
 * who "this user" is, since others may write in the thread; an empty part when nothing is
 * remembered. The block is sized so the whole section (tags and that line included) stays within
 * MEMORIES_SECTION_MAX_CHARS.
 */
async function loadMemoryBlock(
  store: MemoryStore,
  keys: Partial<MemoryKeys>,
  { displayName, userId }: Requester,
): Promise<KnowledgePart> {
  try {
    // On one line and short: a display name comes from the chat platform.
    const name = oneLine(displayName || userId).slice(0, 64);
    const who =
      keys.userKey === undefined
        ? "(This turn was started by channel content, not by a person: what you remember about people personally is not listed here.)"
        : `("This user" is ${name}, user id ${oneLine(userId)}, who is asking in this turn; others in the thread are different people, and what you remember about them personally is not listed here.)`;
    const block = await store.memoryBlock(keys.userKey, keys.channelKey, {
      maxChars: MEMORIES_SECTION_MAX_CHARS - WRAPPER_CHARS - 1 - inBlockLength(who),
      measure: inBlockLength,
    });
    if (block === "") return {};
    return { text: `${block}\n${who}` };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      notice: `Saved memories could not be loaded (${reason}); this conversation continues without them.`,
    };
  }
}

/** The memories section of each person who asks in one session (see the module header). */
export class RequesterMemories {
  /** The rendered section per requester and channel (memory keys). */
  private readonly sections = new Map<string, string>();

  constructor(private readonly store: MemoryStore) {}

  /**
   * The memories section for the turn `request` starts or resumes: read on its requester's first
   * turn (with a notice when the read failed), the kept section after that.
   */
  async sectionFor(request: ConversationExecutionRequest): Promise<KnowledgePart> {
    const all = memoryKeysOf(request);
    const keys: Partial<MemoryKeys> =
      provenanceOf(request).kind === "channel_content" ? { channelKey: all.channelKey } : all;
    const key = `${keys.userKey ?? ""}\n${keys.channelKey ?? ""}`;
    const kept = this.sections.get(key);
    if (kept !== undefined) return { text: kept };
    const loaded = await loadMemoryBlock(this.store, keys, request.requester);
    const text = memoriesSection(loaded.text);
    this.sections.set(key, text);
    return loaded.notice === undefined ? { text } : { text, notice: loaded.notice };
  }
}
