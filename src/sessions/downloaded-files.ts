/**
 * DownloadedFiles: the downloaded files of one log (a workspace's: workspace-downloads.ts), a Set
 * the permission checks read as it is (every live session on the workspace holds the same one as
 * its SessionFacts.downloadedFiles), that writes each file it gains to the DownloadLog once. The
 * files added in one tick go out together as one page (or several: a page holds at most
 * MAX_FILES_PER_DOWNLOAD_PAGE), in the background and in order; `written()` resolves once every
 * file added so far is stored, and a record save waits for it (LiveSession), so no record is
 * stored ahead of the downloads made before it. A write that fails keeps its files pending: it is
 * logged, `written()` rejects with it, and the next add or `written()` tries again. A page another
 * writer claimed first is read into the set, and the files go to the next one. Once
 * DOWNLOAD_PAGES_PER_SNAPSHOT pages follow the latest snapshot, the set (which holds every file
 * of the pages before `next`) is written as the new one, after the pages and before `written()`
 * resolves; a snapshot that fails is logged and tried again by the next `written()` (the files are
 * stored in their pages all the same). A log found that long when read is compacted then.
 */
import type { Logger } from "pino";
import {
  DOWNLOAD_PAGES_PER_SNAPSHOT,
  type DownloadLog,
  type DownloadPages,
  MAX_FILES_PER_DOWNLOAD_PAGE,
} from "./download-log.js";

export class DownloadedFiles extends Set<string> {
  /** Files added and not stored yet, oldest first. */
  private readonly pending: string[] = [];
  /** The write under way, if any (it takes files added meanwhile too). */
  private writing: Promise<void> | undefined;
  /** The first page of the log not known to be written (every file of the pages before it is in the set). */
  private next = 0;
  /** The latest snapshot known (0: none): the pages from it on are what a load reads. */
  private snapshot = 0;
  /** Whether the log was read whole once: a catch-up then reads only the pages from `next` on. */
  private readWhole = false;

  private constructor(
    private readonly log: DownloadLog,
    private readonly logId: string,
    private readonly logger: Logger,
  ) {
    super();
  }

  /** The files of the log `logId`, none read yet (`catchUp` reads them). */
  static fresh(log: DownloadLog, logId: string, logger: Logger): DownloadedFiles {
    return new DownloadedFiles(log, logId, logger);
  }

  /** Add a file; a new one is written to the log (see the class comment). */
  override add(file: string): this {
    if (this.has(file)) return this;
    super.add(file);
    this.pending.push(file);
    if (!this.writing) void this.written().catch(() => undefined);
    return this;
  }

  /** Resolves once every file added so far is stored; rejects when a write of one failed. */
  written(): Promise<void> {
    if (!this.writing && (this.pending.length > 0 || this.snapshotDue)) this.writing = this.writePending();
    return this.writing ?? Promise.resolve();
  }

  /**
   * Read the pages not read yet: all of them the first time (from the snapshot the head names),
   * then what other writers (other processes) added since — the pages from `next` on, one key
   * read when there are none (a lease takes it each time: lease-gate.ts). A log found long
   * enough is compacted then.
   */
  async catchUp(): Promise<void> {
    if (this.readWhole) this.take(await this.log.readFrom(this.logId, this.next));
    else {
      this.take(await this.log.read(this.logId));
      this.readWhole = true;
    }
    if (this.snapshotDue) void this.written().catch(() => undefined);
  }

  /** Whether enough pages follow the latest snapshot for a new one. */
  private get snapshotDue(): boolean {
    return this.next - this.snapshot >= DOWNLOAD_PAGES_PER_SNAPSHOT;
  }

  /**
   * Writes the files pending, and a snapshot when due, until none is pending (it awaits before its
   * `finally`, so `writing` is its promise).
   */
  private async writePending(): Promise<void> {
    try {
      // The files added in this tick (a command's whole list) join the first page.
      await Promise.resolve();
      do {
        while (this.pending.length > 0) {
          const page = this.pending.slice(0, MAX_FILES_PER_DOWNLOAD_PAGE);
          let at = this.next;
          while (!(await this.log.claim(this.logId, at, page))) {
            this.take(await this.log.readFrom(this.logId, at));
            at = Math.max(this.next, at + 1);
          }
          this.next = Math.max(this.next, at + 1);
          this.pending.splice(0, page.length);
        }
        if (this.snapshotDue) await this.writeSnapshot();
        // Files added while the snapshot was written are this write's too.
      } while (this.pending.length > 0);
    } catch (error) {
      this.logger.error(
        { err: error, logId: this.logId, pending: this.pending.length },
        "recording downloaded files failed; they are kept in memory and written with the next save",
      );
      throw error;
    } finally {
      this.writing = undefined;
    }
  }

  /** Write the set as the snapshot of the pages before `next`; a failure is logged (the pages hold the files). */
  private async writeSnapshot(): Promise<void> {
    const upTo = this.next;
    try {
      await this.log.snapshot(this.logId, upTo, [...this], this.snapshot);
      this.snapshot = Math.max(this.snapshot, upTo);
    } catch (error) {
      this.logger.warn(
        { err: error, logId: this.logId, pages: upTo - this.snapshot },
        "compacting the downloaded-files log failed; its pages hold every file, and the next save tries again",
      );
    }
  }

  /** Take in pages read from the log: their files (without writing them again), and problems logged. */
  private take(pages: DownloadPages): void {
    for (const file of pages.files) super.add(file);
    // Only ever forward: a read and a claim may end in either order, and a page is never skipped.
    this.next = Math.max(this.next, pages.next);
    this.snapshot = Math.max(this.snapshot, pages.snapshot);
    for (const problem of pages.problems) {
      this.logger.error({ logId: this.logId }, `unreadable downloaded-files log entry: ${problem}`);
    }
  }
}
