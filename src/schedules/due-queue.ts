/**
 * DueQueue: when each active task is next due, with one timer for the earliest — so ten thousand
 * idle tasks cost one pending timer, not ten thousand. A min-heap with lazy deletion: a changed or
 * removed task leaves its old heap entry behind, skipped when it surfaces. Long waits are cut
 * into steps (timers cannot wait more than ~24 days). All time comes from the injected clock.
 */
import type { Clock, TimerHandle } from "../core/clock.js";

/** Longest single timer; the queue re-arms after it. */
const MAX_TIMER_MS = 6 * 3_600_000;

interface Entry {
  readonly at: number;
  readonly id: string;
}

/** Due times by task id, firing `onDue` with the ids that are due. */
export class DueQueue {
  private readonly dueAt = new Map<string, number>();
  private heap: Entry[] = [];
  private timer: TimerHandle | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private closed = false;

  constructor(
    private readonly clock: Clock,
    /** Told the ids due now (each once per `set`), earliest first. */
    private readonly onDue: (ids: readonly string[]) => void,
  ) {}

  /** Set (or move) when the task is next due (epoch ms). */
  set(id: string, atMs: number): void {
    if (this.closed) return;
    this.dueAt.set(id, atMs);
    this.push({ at: atMs, id });
    if (atMs < this.timerAt) this.arm();
  }

  /** Forget the task. */
  delete(id: string): void {
    this.dueAt.delete(id);
  }

  /** How many tasks wait. */
  get size(): number {
    return this.dueAt.size;
  }

  /** Stop the timer; nothing fires afterwards. */
  close(): void {
    this.closed = true;
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const head = this.peek();
    if (!head || this.closed) return;
    const delay = Math.min(Math.max(0, head.at - this.clock.now()), MAX_TIMER_MS);
    this.timerAt = head.at;
    this.timer = this.clock.setTimer(() => this.fire(), delay);
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    if (this.closed) return;
    const now = this.clock.now();
    const due: string[] = [];
    for (let head = this.peek(); head && head.at <= now; head = this.peek()) {
      this.pop();
      this.dueAt.delete(head.id);
      due.push(head.id);
    }
    this.arm();
    if (due.length > 0) this.onDue(due);
  }

  /** The earliest live entry (stale ones are dropped on the way). */
  private peek(): Entry | undefined {
    while (this.heap.length > 0) {
      const top = this.heap[0]!;
      if (this.dueAt.get(top.id) === top.at) return top;
      this.pop();
    }
    return undefined;
  }

  private push(entry: Entry): void {
    const heap = this.heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.at <= entry.at) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = entry;
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop();
    if (!last || heap.length === 0) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && heap[right]!.at < heap[left]!.at ? right : left;
      if (heap[child]!.at >= last.at) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = last;
  }
}
