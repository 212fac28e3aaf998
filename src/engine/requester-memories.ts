/**
 * Requester memories: the end of the system prompt that belongs to the person asking a turn —
 * what the agent remembers about them (user-scope memories, which follow a person into every
 * chat) and about the channel. Every turn carries its own requester's memories only (in a shared
 * conversation not even those, see below), so one person's personal memories never reach the
 * prompt of another person's turn; a resumed or scheduled turn is its request's requester's (a
 * scheduled turn names the person who created it). A turn woken by channel content carries the channel's memories only: nobody asked
 * for it, and its answer goes to a thread others may read, so the subscriber's personal memories
 * (which follow them out of their DM) stay out of it.
 *
 * In a conversation several people share (a channel thread, a group: isSharedThread) a person's
 * own turns carry the channel's memories only, too. Their user memories follow them from every
 * chat, their DMs included, and what is in the instructions needs no tool call, no card and no
 * decision to be recited into the thread — by a model steered by a page or a message it read in
 * that turn. That is session-target.ts's rule for the other listings of a person's items from
 * every conversation (a shared thread must not show them unasked), and the simplest safe form of
 * it here is to leave them out: the section says so, so the model can tell the person to ask in a
 * direct message. A DM (and the console) carries them as before.
 *
 * Each person's block is read from the store on their first turn in the session and kept for the
 * rest of it, as the session's one block was before: a later turn by someone already seen costs
 * no store call and keeps the same prompt (friendly to the model's prompt cache). What is saved
 * meanwhile reaches the sessions that start after it; within the session the model has the tool
 * results. A failed read is a notice on that turn, and the person's turns go on without memories.
 */
import type { ConversationExecutionRequest, Requester } from "../core/request.js";
import { oneLine } from "../core/one-line.js";
import { isSharedThread } from "../core/thread-target.js";
import { type MemoryKeys, type MemoryStore, memoryKeysOf } from "../tools/memory/memory-store.js";
import { threadTargetOf } from "../tools/session-target.js";
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
 * Whose memories a turn carries: "channel_content", a turn woken by channel content (the
 * channel's only); "shared", a person's turn in a conversation several people share (the
 * channel's only); "own", a person's turn in their DM or a conversation without a thread (theirs
 * and the channel's).
 */
type Reach = "channel_content" | "shared" | "own";

/** The reach of `request`'s turn (see Reach). */
function reachOf(request: ConversationExecutionRequest): Reach {
  if (provenanceOf(request).kind === "channel_content") return "channel_content";
  const target = threadTargetOf(request);
  return target && isSharedThread(target) ? "shared" : "own";
}

/** The line under the memories saying who "this user" is and whose memories are not listed. */
function whoLine(reach: Reach, { displayName, userId }: Requester): string {
  if (reach === "channel_content")
    return "(This turn was started by channel content, not by a person: what you remember about people personally is not listed here.)";
  // On one line and short: a display name comes from the chat platform.
  const person = `"This user" is ${oneLine(displayName || userId).slice(0, 64)}, user id ${oneLine(userId)}, who is asking in this turn; others in the thread are different people`;
  if (reach === "shared")
    return `(${person}. This conversation is shared by several people, so personal memories — what you remember about any person, this user included, which may have been saved in a private chat — are not loaded here. If this user asks what you remember about them, tell them to ask you in a direct message.)`;
  return `(${person}, and what you remember about them personally is not listed here.)`;
}

/**
 * The memory block of the lists `keys` name, with the line `who` under it, since others may write
 * in the thread; an empty part when nothing is remembered and the line has nothing to add (in a
 * shared conversation it always does: personal memories are left out). The block is sized so the
 * whole section (tags and that line included) stays within MEMORIES_SECTION_MAX_CHARS.
 */
async function loadMemoryBlock(
  store: MemoryStore,
  keys: Partial<MemoryKeys>,
  reach: Reach,
  who: string,
): Promise<KnowledgePart> {
  try {
    const block = await store.memoryBlock(keys.userKey, keys.channelKey, {
      maxChars: MEMORIES_SECTION_MAX_CHARS - WRAPPER_CHARS - 1 - inBlockLength(who),
      measure: inBlockLength,
    });
    if (block === "")
      return reach === "shared" ? { text: `You have no saved memories about this channel yet.\n${who}` } : {};
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
  /** The rendered section per reach, requester and channel (memory keys). */
  private readonly sections = new Map<string, string>();

  constructor(private readonly store: MemoryStore) {}

  /**
   * The memories section for the turn `request` starts or resumes: read on its requester's first
   * turn (with a notice when the read failed), the kept section after that.
   */
  async sectionFor(request: ConversationExecutionRequest): Promise<KnowledgePart> {
    const all = memoryKeysOf(request);
    const reach = reachOf(request);
    const keys: Partial<MemoryKeys> = reach === "own" ? all : { channelKey: all.channelKey };
    const person = reach === "channel_content" ? "" : all.userKey;
    const key = `${reach}\n${person}\n${all.channelKey ?? ""}`;
    const kept = this.sections.get(key);
    if (kept !== undefined) return { text: kept };
    const loaded = await loadMemoryBlock(this.store, keys, reach, whoLine(reach, request.requester));
    const text = memoriesSection(loaded.text);
    this.sections.set(key, text);
    return loaded.notice === undefined ? { text } : { text, notice: loaded.notice };
  }
}
