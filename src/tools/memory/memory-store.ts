/**
 * MemoryStore: what the agent remembers about a user (across chats) and about a channel, kept in
 * the Store's "memory" space as one versioned list per owner. Changes go through the lists this
 * session can see (the requester's and the current channel's), so nobody edits others' user
 * memories. A channel's list is shared by its members and goes into every member's instructions,
 * so a channel memory stays its author's (`createdBy`): only they change or delete it — anyone
 * else only as a configured approver (MemoryEditor.mayChangeOthers), whose edit keeps the author
 * and names the editor (`editedBy`) — and the per-person share counts it as the author's, so no
 * member can take over other members' notes or hold more than their share.
 * `memoryBlock` reads the memories of one requester and channel and renders them for the
 * instructions (memory-block.ts; engine/requester-memories.ts).
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { oneLine } from "../../core/one-line.js";
import type { ConversationExecutionRequest } from "../../core/request.js";
import { KeyedMutex } from "../../store/key-mutex.js";
import { getAll, type KeyValueSpace } from "../../store/store.js";
import { fromVersioned, toVersioned } from "../../store/versioned.js";
import { threadTargetOf } from "../session-target.js";
import { authorLine } from "./memory-authorship.js";
import { type MemoryBlockOptions, memoryBlock } from "./memory-block.js";

export const MEMORY_SCOPES = ["user", "channel"] as const;
export type MemoryScope = (typeof MEMORY_SCOPES)[number];

const memoryItemSchema = z.object({
  id: z.string(),
  scope: z.enum(MEMORY_SCOPES),
  content: z.string(),
  summary: z.string(),
  /**
   * The memory's author: whoever first saved it. A change never moves it (an approver's edit is
   * recorded as `editedBy`), so the memory, its edit rights and its place in the per-person share
   * stay theirs (memory-authorship.ts renders it).
   */
  createdBy: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  /**
   * The author's display name as recorded when saving (`savedByName`), with whose name it is
   * (`savedBy`: the author's user id). Older records lack them and show no name; records changed
   * by another member before edits kept the author hold that member here, whose name is not shown
   * as the author's (memory-authorship.ts).
   */
  savedBy: z.string().optional(),
  savedByName: z.string().optional(),
  /**
   * Who last changed the text of a channel memory when that was not its author (a configured
   * approver): the memory stays its author's, and the list names the editor too.
   */
  editedBy: z.string().optional(),
  editedByName: z.string().optional(),
});

/** One remembered fact. */
export type MemoryItem = Readonly<z.infer<typeof memoryItemSchema>>;

const memoryListSchema = z.array(memoryItemSchema);
const LIST_KIND = "memory-list";

/** Whose memories a session sees: the requester's and (when known) the current channel's. */
export interface MemoryKeys {
  readonly userKey: string;
  readonly channelKey: string | undefined;
}

/** Memory keys for a request: user = platform + workspace + user id; channel = platform + workspace + channel. */
export function memoryKeysOf(request: ConversationExecutionRequest): MemoryKeys {
  const target = threadTargetOf(request);
  const workspace = target?.workspace ?? "-";
  return {
    userKey: `${request.platform}:${workspace}:${request.requester.userId}`,
    channelKey: target ? `${target.platform}:${target.workspace}:${target.channel}` : undefined,
  };
}

/**
 * Most of one channel's memories one person may have written. The channel's list is shared by
 * everyone in it and shown in every one of their turns, so without a per-person share one member
 * could fill every slot (and the instructions of everyone else) alone.
 */
export const MAX_CHANNEL_ITEMS_PER_PERSON = 20;

/** Thrown when a memory cannot be saved (limits, no channel). */
export class MemoryLimitError extends Error {
  override readonly name = "MemoryLimitError";
}

/** Thrown when a person may not change or delete a memory (another member's channel memory). */
export class MemoryAccessError extends Error {
  override readonly name = "MemoryAccessError";
}

/** Who changes or deletes a memory. */
export interface MemoryEditor {
  readonly userId: string;
  /** Their display name, shown with a channel memory they change. */
  readonly name?: string;
  /** A configured approver: may change and delete other members' channel memories. */
  readonly mayChangeOthers: boolean;
}

/** Limits and clock of the memory store. */
export interface MemoryStoreOptions {
  /** Most memories per user or channel (default 100). */
  readonly maxItemsPerOwner?: number;
  /** Longest content (default 2000 characters). */
  readonly maxContentChars?: number;
  /** Most of one channel's memories written by one person (default MAX_CHANNEL_ITEMS_PER_PERSON). */
  readonly maxChannelItemsPerPerson?: number;
  readonly now?: () => Date;
  readonly newId?: () => string;
}

/** Reads and changes memories in the Store's "memory" space. */
export class MemoryStore {
  private readonly mutex = new KeyedMutex();
  private readonly maxItems: number;
  private readonly maxContent: number;
  private readonly maxPerPerson: number;
  private readonly now: () => Date;
  private readonly newId: () => string;

  /** `space` is `store.space("memory")`. */
  constructor(
    private readonly space: KeyValueSpace,
    options: MemoryStoreOptions = {},
  ) {
    this.maxItems = options.maxItemsPerOwner ?? 100;
    this.maxContent = options.maxContentChars ?? 2000;
    this.maxPerPerson = options.maxChannelItemsPerPerson ?? MAX_CHANNEL_ITEMS_PER_PERSON;
    this.now = options.now ?? (() => new Date());
    this.newId = options.newId ?? (() => `m${randomBytes(4).toString("hex")}`);
  }

  private async read(owner: string): Promise<MemoryItem[]> {
    return this.decode(owner, await this.space.get(`list:${owner}`));
  }

  private decode(owner: string, raw: unknown): MemoryItem[] {
    if (raw === undefined) return [];
    return fromVersioned(raw, { kind: LIST_KIND, schema: memoryListSchema, where: owner });
  }

  private async write(owner: string, items: readonly MemoryItem[]): Promise<void> {
    if (items.length === 0) await this.space.delete(`list:${owner}`);
    else await this.space.set(`list:${owner}`, toVersioned(LIST_KIND, items));
  }

  /** The owners whose lists `keys` name: the user's, then the channel's, each when known. */
  private owners(keys: Partial<MemoryKeys>): string[] {
    return [
      ...(keys.userKey ? [`user:${keys.userKey}`] : []),
      ...(keys.channelKey ? [`channel:${keys.channelKey}`] : []),
    ];
  }

  /** The user's memories, then the channel's (both lists in one store read); no user: the channel's. */
  async list(userKey: string | undefined, channelKey?: string): Promise<MemoryItem[]> {
    const owners = this.owners({ userKey, channelKey });
    const raws = await getAll(
      this.space,
      owners.map((owner) => `list:${owner}`),
    );
    return owners.flatMap((owner, index) => this.decode(owner, raws[index]));
  }

  /**
   * Save a new memory in the user's or the channel's list; its content and summary are put on one
   * line (`oneLine`). `createdByName` is the saver's display name, shown with channel memories.
   */
  async add(
    keys: MemoryKeys,
    input: {
      readonly scope: MemoryScope;
      readonly content: string;
      readonly summary: string;
      readonly createdBy: string;
      readonly createdByName?: string;
    },
  ): Promise<MemoryItem> {
    if (input.scope === "channel" && !keys.channelKey) {
      throw new MemoryLimitError(
        "this conversation has no channel, so there is nowhere to keep a channel memory",
      );
    }
    const content = oneLine(input.content).trim();
    this.checkContent(content);
    const owner = input.scope === "user" ? `user:${keys.userKey}` : `channel:${keys.channelKey}`;
    return this.mutex.run(owner, async () => {
      const items = await this.read(owner);
      if (items.length >= this.maxItems) {
        throw new MemoryLimitError(
          `there are already ${items.length} ${input.scope} memories (the limit); update or forget one first`,
        );
      }
      if (input.scope === "channel") {
        const mine = items.filter((item) => item.createdBy === input.createdBy).length;
        if (mine >= this.maxPerPerson) {
          throw new MemoryLimitError(
            `you already wrote ${mine} of this channel's memories, the most one person may (${this.maxPerPerson}), so that the channel's shared list is not one person's; update or forget one of yours first`,
          );
        }
      }
      const at = this.now().toISOString();
      const item: MemoryItem = {
        id: this.newId(),
        scope: input.scope,
        content,
        summary: oneLine(input.summary).trim(),
        createdBy: input.createdBy,
        createdAt: at,
        updatedAt: at,
        savedBy: input.createdBy,
        ...(input.createdByName ? { savedByName: oneLine(input.createdByName).trim() } : {}),
      };
      await this.write(owner, [...items, item]);
      return item;
    });
  }

  /** The memory `id` among those visible to `keys`, or undefined when there is none. */
  async find(keys: MemoryKeys, id: string): Promise<MemoryItem | undefined> {
    return (await this.list(keys.userKey, keys.channelKey)).find((item) => item.id === id);
  }

  /**
   * Change a memory visible to `keys` (content and summary on one line); undefined when there is
   * no such memory. Another member's channel memory only when `by` may change others' (else a
   * MemoryAccessError): it stays its author's and names `by` as its editor. Its author's own
   * change shows them as its saver again.
   */
  async update(
    keys: MemoryKeys,
    id: string,
    change: { readonly content: string; readonly summary: string },
    by: MemoryEditor,
  ): Promise<MemoryItem | undefined> {
    const content = oneLine(change.content).trim();
    this.checkContent(content);
    const summary = oneLine(change.summary).trim();
    return this.change(keys, id, (item) => {
      this.checkMayChange(item, by);
      const { savedByName, editedBy: _, editedByName: __, ...rest } = item;
      const name = by.name ? oneLine(by.name).trim() : undefined;
      const changed = { ...rest, content, summary, updatedAt: this.now().toISOString() };
      if (item.scope === "channel" && item.createdBy !== by.userId) {
        // The author's name stays; a name an older record kept for someone else is dropped.
        const authorName = item.savedBy === item.createdBy ? savedByName : undefined;
        return {
          ...changed,
          savedBy: item.createdBy,
          ...(authorName === undefined ? {} : { savedByName: authorName }),
          editedBy: by.userId,
          ...(name ? { editedByName: name } : {}),
        };
      }
      return { ...changed, savedBy: by.userId, ...(name ? { savedByName: name } : {}) };
    });
  }

  /**
   * Delete a memory visible to `keys`; returns it, or undefined when there is no such memory.
   * Another member's channel memory only when `by` may change others' (else a MemoryAccessError).
   */
  async forget(keys: MemoryKeys, id: string, by: MemoryEditor): Promise<MemoryItem | undefined> {
    return this.change(keys, id, (item) => {
      this.checkMayChange(item, by);
      return undefined;
    });
  }

  /** Refuses `by` changing `item` when it is another member's channel memory and `by` is no approver. */
  private checkMayChange(item: MemoryItem, by: MemoryEditor): void {
    if (item.scope !== "channel" || by.mayChangeOthers) return;
    if (item.createdBy === by.userId) return;
    throw new MemoryAccessError(
      `memory ${item.id} is a channel note saved by ${authorLine(item)}; only they or a configured approver can change or delete it. Nothing was changed: ask them, or save a note of your own with remember.`,
    );
  }

  private async change(
    keys: MemoryKeys,
    id: string,
    apply: (item: MemoryItem) => MemoryItem | undefined,
  ): Promise<MemoryItem | undefined> {
    for (const owner of this.owners(keys)) {
      const found = await this.mutex.run(owner, async () => {
        const items = await this.read(owner);
        const index = items.findIndex((item) => item.id === id);
        if (index === -1) return undefined;
        const old = items[index] as MemoryItem;
        const next = apply(old);
        await this.write(
          owner,
          next ? items.map((item, i) => (i === index ? next : item)) : items.filter((_, i) => i !== index),
        );
        return next ?? old;
      });
      if (found) return found;
    }
    return undefined;
  }

  private checkContent(content: string): void {
    if (content === "") throw new MemoryLimitError("a memory needs some text; this one has none");
    if (content.length > this.maxContent) {
      throw new MemoryLimitError(
        `a memory may be at most ${this.maxContent} characters; this one has ${content.length}`,
      );
    }
  }

  /**
   * The memories of `userKey` and `channelKey` as a block for the instructions, within
   * `options.maxChars` (memory-block.ts); "" when there are none.
   */
  async memoryBlock(
    userKey: string | undefined,
    channelKey?: string,
    options: MemoryBlockOptions = {},
  ): Promise<string> {
    return memoryBlock(await this.list(userKey, channelKey), options);
  }
}
