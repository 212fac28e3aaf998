/**
 * TaskRegistry: the persisted scheduled tasks ("schedules" space) and their in-memory indexes by
 * owner and workspace. The store has no key listing, so catalog records list the ids — split
 * into shards by id, so adding a task rewrites a small list even with many thousands of tasks.
 * A record is written before a catalog names it and forgotten by its catalog before it is
 * deleted, so a crash never leaves a catalog naming a missing record; a shard is changed by
 * compare-and-set, so processes sharing a store keep each other's ids. `reload` re-reads one task,
 * for a process that must see another's change (a cancel, a run) before acting on it, and
 * `update` changes one as stored now, by compare-and-set (the store's `replaceIf`): a task another
 * process cancelled or changed meanwhile is never written back over that (a run's result, "new"
 * re-pointing a thread's tasks), and an update never writes a catalog, so it cannot list again a
 * task whose cancel took it out.
 *
 * Several processes on one store: each loads every task at start and then changes its indexes
 * only by its own writes, so before it counts a person's or a workspace's active tasks (the
 * limits), lists a person's tasks or pauses a channel's, it `refresh`es: the catalog shards are
 * read in one call, and the records of ids it did not know, of ids no longer listed, and of the
 * person's or workspace's tasks (bounded by that workspace's tasks) are re-read in another.
 */
import { z } from "zod";
import { IdIndex } from "../core/id-index.js";
import { KeyedMutex } from "../store/key-mutex.js";
import { getAll, type KeyValueSpace } from "../store/store.js";
import { updateByCompareAndSet } from "../store/update-by-compare-and-set.js";
import { fromVersioned, toVersioned } from "../store/versioned.js";
import {
  freezeTask,
  ownerKeyOf,
  type ScheduledTask,
  scheduledTaskSchema,
  workspaceKeyOf,
} from "./scheduled-task.js";

export const TASK_KIND = "scheduled-task";
export const TASK_CATALOG_KIND = "scheduled-task-catalog";
/** Catalog shards: a task's shard is picked by the last hex digit of its id. */
const SHARDS = 16;
/** Reads and compare-and-sets a change makes before it gives up on a record others keep changing. */
const MAX_UPDATE_ATTEMPTS = 16;

const catalogSchema = z.object({ ids: z.array(z.string()) });

/** Store key of a task record. */
export const taskKey = (id: string) => `task:${id}`;
const shardKey = (shard: number) => `catalog:${shard.toString(16)}`;
const shardOf = (id: string) => Number.parseInt(id.slice(-1), 16) % SHARDS;
const SHARD_KEYS = Array.from({ length: SHARDS }, (_, shard) => shardKey(shard));

/** Whose tasks a refresh re-reads besides the new and vanished ones: a person's, a workspace's. */
export interface RefreshScope {
  /** "platform:userId" */
  readonly owner?: string;
  /** "platform:workspace" */
  readonly workspace?: string;
}

/** What a refresh found: tasks new or changed in the store, and ids of tasks gone from it. */
export interface Refreshed {
  readonly changed: readonly ScheduledTask[];
  readonly removed: readonly string[];
}

/** Persisted tasks with indexes by owner and by workspace. */
export class TaskRegistry {
  private readonly byId = new Map<string, ScheduledTask>();
  private readonly byOwner = new IdIndex();
  private readonly byWorkspace = new IdIndex();
  private readonly mutex = new KeyedMutex();

  private constructor(
    private readonly space: KeyValueSpace,
    private readonly onError: (error: unknown, context: string) => void,
  ) {}

  /** Load every task the catalogs name; unreadable ones are reported to `onError` and skipped. */
  static async load(
    space: KeyValueSpace,
    onError: (error: unknown, context: string) => void,
  ): Promise<TaskRegistry> {
    const registry = new TaskRegistry(space, onError);
    for (let shard = 0; shard < SHARDS; shard++) {
      for (const id of await registry.shard(shard)) {
        try {
          const task = await registry.read(id);
          if (!task) throw new Error(`task ${id} is in the catalog but its record is missing`);
          registry.index(task);
        } catch (error) {
          onError(error, `loading scheduled task ${id}`);
        }
      }
    }
    return registry;
  }

  /** Every task. */
  all(): readonly ScheduledTask[] {
    return [...this.byId.values()];
  }

  get(id: string): ScheduledTask | undefined {
    return this.byId.get(id);
  }

  /** The person's tasks ("platform:userId"), oldest first. */
  forOwner(ownerKey: string): readonly ScheduledTask[] {
    return this.pick(this.byOwner.idsOf(ownerKey));
  }

  /** Tasks of a person, active and paused. */
  heldByOwner(ownerKey: string): number {
    return this.byOwner.idsOf(ownerKey)?.size ?? 0;
  }

  /** Active tasks of a person. */
  activeForOwner(ownerKey: string): number {
    return this.countActive(this.byOwner.idsOf(ownerKey));
  }

  /** Active tasks in a platform workspace ("platform:workspace"). */
  activeInWorkspace(workspaceKey: string): number {
    return this.countActive(this.byWorkspace.idsOf(workspaceKey));
  }

  /** Create or replace a task (validated; its catalog shard is written after the record). */
  async put(task: ScheduledTask): Promise<ScheduledTask> {
    const shard = shardOf(task.id);
    return this.mutex.run(shardKey(shard), async () => {
      const valid = freezeTask(scheduledTaskSchema.parse(task));
      await this.space.set(taskKey(valid.id), toVersioned(TASK_KIND, valid));
      await this.changeShard(shard, (ids) => (ids.includes(valid.id) ? undefined : [...ids, valid.id]));
      this.unindex(valid.id);
      this.index(valid);
      return valid;
    });
  }

  /**
   * Change a task as it is stored now, not as this process last saw it: `change` gets the record
   * read from the store and returns the record to write, or undefined to leave it. The write is a
   * compare-and-set: when another process changed the record since it was read, it is read again
   * and `change` asked again; when it removed it, the task is forgotten and left alone (a cancel
   * on any process between the read and the write stays a cancel). The catalog is not written:
   * a task is listed from its `put` until its `remove`. This process's own `put` and `remove` of
   * the shard wait for it (its lock). Returns what was written.
   */
  async update(
    id: string,
    change: (current: ScheduledTask) => ScheduledTask | undefined,
  ): Promise<ScheduledTask | undefined> {
    const shard = shardOf(id);
    return this.mutex.run(shardKey(shard), async () => {
      const result = await updateByCompareAndSet(
        this.space,
        taskKey(id),
        (raw) => {
          this.unindex(id);
          if (raw === undefined) return undefined; // removed: never written back
          const current = this.parse(raw, id);
          this.index(current);
          const changed = change(current);
          if (changed === undefined) return undefined;
          if (changed.id !== id) throw new Error(`updating task ${id} cannot turn it into ${changed.id}`);
          return toVersioned(TASK_KIND, freezeTask(scheduledTaskSchema.parse(changed)));
        },
        { attempts: MAX_UPDATE_ATTEMPTS },
      );
      if (result.outcome === "unchanged") return undefined;
      if (result.outcome === "gave-up")
        throw new Error(
          `scheduled task ${id} was changed by other processes ${result.attempts} times while this one updated it; left as they wrote it`,
        );
      const written = result.value.data;
      this.unindex(id);
      this.index(written);
      return written;
    });
  }

  /** Remove a task; returns what was known of it, or undefined when unknown. */
  async remove(id: string): Promise<ScheduledTask | undefined> {
    const shard = shardOf(id);
    return this.mutex.run(shardKey(shard), async () => {
      const existing = this.byId.get(id);
      await this.changeShard(shard, (ids) =>
        ids.includes(id) ? ids.filter((other) => other !== id) : undefined,
      );
      this.unindex(id);
      await this.space.delete(taskKey(id));
      return existing;
    });
  }

  /** Re-read a task from the store (another process may have changed or removed it). */
  async reload(id: string): Promise<ScheduledTask | undefined> {
    const task = await this.read(id);
    this.unindex(id);
    if (task) this.index(task);
    return task;
  }

  /**
   * Catch up with the other processes on the store (see the module comment): tasks the catalogs
   * name that this process did not know, known ones no longer named, and those of `scope` are
   * re-read; what is new or changed is indexed, what is gone forgotten. An unreadable record is
   * reported and left as it was. Two reads, whatever the number of tasks.
   */
  async refresh(scope: RefreshScope): Promise<Refreshed> {
    const shards = await getAll<unknown>(this.space, SHARD_KEYS);
    const listed = new Set<string>();
    for (const [shard, raw] of shards.entries()) for (const id of this.parseShard(shard, raw)) listed.add(id);
    const wanted = new Set<string>();
    for (const id of listed) if (!this.byId.has(id)) wanted.add(id);
    // Not listed but known: removed elsewhere — or written here just after the shards were read.
    for (const id of this.byId.keys()) if (!listed.has(id)) wanted.add(id);
    if (scope.owner !== undefined) for (const id of this.byOwner.idsOf(scope.owner) ?? []) wanted.add(id);
    if (scope.workspace !== undefined)
      for (const id of this.byWorkspace.idsOf(scope.workspace) ?? []) wanted.add(id);
    const ids = [...wanted];
    const records = await getAll<unknown>(
      this.space,
      ids.map((id) => taskKey(id)),
    );
    const changed: ScheduledTask[] = [];
    const removed: string[] = [];
    for (const [i, id] of ids.entries()) {
      const raw = records[i];
      if (raw === undefined) {
        if (this.byId.has(id)) removed.push(id);
        this.unindex(id);
        continue;
      }
      let task: ScheduledTask;
      try {
        task = this.parse(raw, id);
      } catch (error) {
        this.onError(error, `refreshing scheduled task ${id}`);
        continue;
      }
      const known = this.byId.get(id);
      if (known !== undefined && JSON.stringify(known) === JSON.stringify(task)) continue;
      this.unindex(id);
      this.index(task);
      changed.push(task);
    }
    return { changed, removed };
  }

  /**
   * Change a catalog shard as it is stored now (`edit` returns its new ids, or undefined to leave
   * it), by compare-and-set like `update`: an id another process added or took out meanwhile is
   * kept so, never written back over (a cancelled task listed again, a created one dropped).
   */
  private async changeShard(
    shard: number,
    edit: (ids: readonly string[]) => string[] | undefined,
  ): Promise<void> {
    const result = await updateByCompareAndSet(
      this.space,
      shardKey(shard),
      (raw) => {
        const ids = edit(this.parseShard(shard, raw));
        return ids === undefined ? undefined : toVersioned(TASK_CATALOG_KIND, { ids });
      },
      { attempts: MAX_UPDATE_ATTEMPTS },
    );
    if (result.outcome === "gave-up")
      throw new Error(
        `${shardKey(shard)} of the scheduled tasks was changed by other processes ${result.attempts} times while this one changed it`,
      );
  }

  private async read(id: string): Promise<ScheduledTask | undefined> {
    const raw = await this.space.get(taskKey(id));
    if (raw === undefined) return undefined;
    return this.parse(raw, id);
  }

  private parse(raw: unknown, id: string): ScheduledTask {
    return freezeTask(fromVersioned(raw, { kind: TASK_KIND, schema: scheduledTaskSchema, where: id }));
  }

  private async shard(shard: number): Promise<string[]> {
    return this.parseShard(shard, await this.space.get(shardKey(shard)));
  }

  private parseShard(shard: number, raw: unknown): string[] {
    if (raw === undefined) return [];
    return fromVersioned(raw, { kind: TASK_CATALOG_KIND, schema: catalogSchema, where: shardKey(shard) }).ids;
  }

  private countActive(ids: ReadonlySet<string> | undefined): number {
    let active = 0;
    for (const id of ids ?? []) if (this.byId.get(id)?.status === "active") active += 1;
    return active;
  }

  private pick(ids: ReadonlySet<string> | undefined): readonly ScheduledTask[] {
    if (!ids) return [];
    return [...ids]
      .map((id) => this.byId.get(id))
      .filter((t): t is ScheduledTask => t !== undefined)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  private index(task: ScheduledTask): void {
    this.byId.set(task.id, task);
    this.byOwner.add(ownerKeyOf(task), task.id);
    this.byWorkspace.add(workspaceKeyOf(task.target), task.id);
  }

  private unindex(id: string): void {
    const existing = this.byId.get(id);
    if (!existing) return;
    this.byId.delete(id);
    this.byOwner.remove(ownerKeyOf(existing), id);
    this.byWorkspace.remove(workspaceKeyOf(existing.target), id);
  }
}
