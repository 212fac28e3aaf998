/**
 * SqliteCheckpointer: write-ahead-log checkpoints for the SQLite store, off the event loop. A
 * checkpoint copies committed pages from the WAL into the database file and syncs both to disk;
 * SQLite runs one on the committing connection every ~1,000 pages by default, so every fiftieth
 * turn or so the event loop waited for two fsyncs. Here the store's connection never checkpoints:
 * a worker thread with its own connection to the file runs PASSIVE checkpoints (they never block
 * the writer, and the writer starts the log over once a checkpoint caught up) each time enough
 * rows were committed. The worker starts on first need and stops after a quiet spell, so an idle
 * process does not keep its memory. When it cannot run, the connection checkpoints itself again,
 * exactly as SQLite does by default.
 *
 * The log starts over only once a checkpoint has copied all of it, and commits that keep arriving
 * while the worker copies leave it a little behind each time: under steady load the log grew
 * without end (140 MB in twelve seconds of the Slack bench, for a 7 MB database). So when a pass
 * ends behind, the store holds its commits (they queue in memory; the event loop never waits)
 * while the worker runs one more pass over what is left, which then catches up; the next commit
 * starts the log over. The hold lasts at most MAX_HOLD_MS.
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** What the checkpointer needs of the store's connection. */
export interface CheckpointHost {
  /** The database file. */
  readonly file: string;
  /** How long the worker's connection waits for a lock. */
  readonly busyTimeoutMs: number;
  /** Set the store connection's own automatic checkpoint threshold in pages (0 = never). */
  autoCheckpoint(pages: number): void;
  /** Hold the store's commits (true) while a catch-up pass runs, or let them go again (false). */
  holdCommits(hold: boolean): void;
  /** Told when the worker failed (the connection checkpoints itself from then on). */
  onError(error: unknown): void;
}

export interface CheckpointTiming {
  /** Rows committed between two checkpoints (a row dirties about one page of the log). */
  readonly rowsPerCheckpoint: number;
  /** Stop the worker after this long without a commit. */
  readonly idleStopMs: number;
}

export const DEFAULT_CHECKPOINT_TIMING: CheckpointTiming = Object.freeze({
  rowsPerCheckpoint: 1_000,
  idleStopMs: 60_000,
});

/** SQLite's own automatic checkpoint threshold, used again when the worker cannot run. */
const SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES = 1_000;

/** The longest the store's commits are held for a catch-up pass (see the module comment). */
const MAX_HOLD_MS = 200;

/**
 * The worker's program (run as a CommonJS script in the worker): one connection that runs a
 * PASSIVE checkpoint for each "checkpoint" message and answers "done", and a last one on "stop"
 * (then it exits, whether that one succeeded or not: the log stays and SQLite replays it on open).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: workerData.busyTimeoutMs });
parentPort.on("message", (message) => {
  let failure;
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
  } catch (error) {
    failure = String(error && error.message || error);
  }
  if (message === "stop") {
    db.close();
    parentPort.close();
  } else parentPort.postMessage(failure === undefined ? "done" : { error: failure });
});
`;

/** What the worker answers to a "checkpoint". */
type WorkerReply = "done" | { readonly error: string };

/** Checkpoints of one SQLite file, run by a worker thread (see the module comment). */
export class SqliteCheckpointer {
  private worker: Worker | undefined;
  private rowsSince = 0;
  private running = false;
  /** Rows committed since the running pass began (a pass copies the log as it was when it began). */
  private rowsDuringPass = 0;
  /** The running pass is the catch-up after a pass that ended behind the log. */
  private catchingUp = false;
  /** Set while the store's commits are held for the catch-up (at most MAX_HOLD_MS). */
  private holdTimer: NodeJS.Timeout | undefined;
  private failed = false;
  private idleTimer: NodeJS.Timeout | undefined;
  private stopped: Promise<void> | undefined;

  constructor(
    private readonly host: CheckpointHost,
    private readonly timing: CheckpointTiming = DEFAULT_CHECKPOINT_TIMING,
  ) {
    host.autoCheckpoint(0);
  }

  /** `rows` rows were just committed: checkpoint when enough have gathered. */
  committed(rows: number): void {
    if (this.failed || this.stopped) return;
    this.rowsSince += rows;
    this.rowsDuringPass += rows;
    this.armIdleStop();
    if (this.running || this.rowsSince < this.timing.rowsPerCheckpoint) return;
    this.rowsSince = 0;
    this.running = true;
    this.rowsDuringPass = 0;
    this.ensureWorker().postMessage("checkpoint");
  }

  /** Whether the worker thread is running now. */
  get active(): boolean {
    return this.worker !== undefined;
  }

  /** Stop the worker after a last checkpoint; resolves once it has exited. */
  stop(): Promise<void> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    this.release();
    const worker = this.worker;
    if (!worker) return Promise.resolve();
    this.worker = undefined;
    this.running = false;
    this.catchingUp = false;
    const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
    // Idle, the worker does not hold the process open; its last checkpoint must, or a process with
    // nothing else left to do would end before this resolves.
    worker.ref();
    worker.postMessage("stop");
    return exited;
  }

  /** Stop for good (the store closes): no worker starts again. */
  close(): Promise<void> {
    this.stopped ??= this.stop();
    return this.stopped;
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        file: this.host.file,
        busyTimeoutMs: this.host.busyTimeoutMs,
        driver: createRequire(import.meta.url).resolve("better-sqlite3"),
      },
      resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 2 },
    });
    worker.unref();
    worker.on("message", (message: WorkerReply) => {
      if (message === "done") this.passEnded();
      else this.fail(new Error(`checkpoint failed: ${message.error}`));
    });
    worker.on("error", (error) => this.fail(error));
    worker.on("exit", () => {
      if (this.worker === worker) {
        this.worker = undefined;
        this.running = false;
        this.catchingUp = false;
        this.release();
      }
    });
    this.worker = worker;
    return worker;
  }

  /**
   * A pass ended. Behind the log (rows were committed while it ran) and not already catching up:
   * hold the commits and run one more pass over what is left, so the log can start over.
   */
  private passEnded(): void {
    if (this.rowsDuringPass === 0 || this.catchingUp || !this.worker) {
      this.catchingUp = false;
      this.release();
      this.running = false;
      return;
    }
    this.catchingUp = true;
    this.rowsDuringPass = 0;
    this.host.holdCommits(true);
    this.holdTimer = setTimeout(() => this.release(), MAX_HOLD_MS);
    this.holdTimer.unref();
    this.worker.postMessage("checkpoint");
  }

  /** Let held commits go. */
  private release(): void {
    if (!this.holdTimer) return;
    clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
    this.host.holdCommits(false);
  }

  /** (Re)start the idle countdown: every commit calls this, so a running countdown is only refreshed. */
  private armIdleStop(): void {
    if (this.idleTimer) {
      this.idleTimer.refresh();
      return;
    }
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      void this.stop();
    }, this.timing.idleStopMs);
    this.idleTimer.unref();
  }

  /** The worker cannot checkpoint: the connection does it itself from now on. */
  private fail(error: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.running = false;
    this.release();
    const worker = this.worker;
    this.worker = undefined;
    void worker?.terminate();
    this.host.autoCheckpoint(SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES);
    this.host.onError(error);
  }
}
