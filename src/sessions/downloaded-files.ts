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
 *
 * The record is bounded, and fails closed: a prompt-injected model could download without end
 * (wget -r, curl URL globs record many names a command), and every process holds the set for every
 * session on the workspace, the store keeps it, and the rule that reads it (engine/permissions/
 * download-execution.ts) goes over it on every call. So at MAX_DOWNLOADED_FILES (beside that rule,
 * which asks before a command would take the record past it: the two must agree, so the cap is no
 * setting) the set stops growing: a file past it is not added, the set takes DOWNLOAD_RECORD_FULL
 * instead (the rule then asks a person for every shell command, at once in this process), and the
 * mark is written to the log, a page's only entry, after the files pending; once it is stored, or
 * read from the log, nothing more is written. The cap is checked again before each page is
 * claimed, on the set, which then holds every file of the pages before that one and those pending:
 * a writer whose set another writer's pages took past the cap writes the mark in place of its
 * pending files (the mark stands for them). So the log holds at most MAX_DOWNLOADED_FILES files
 * whatever the number of writers, and two racing at the cap both end full, neither losing a file
 * (it is stored, or under the mark).
 * Until the mark is stored, the files it stands for stay pending as any file does (a failed write
 * is tried again). Nothing here clears the mark: an operator does (README.md, "downloaded code").
 */
import type { Logger } from "pino";
import { DOWNLOAD_RECORD_FULL, MAX_DOWNLOADED_FILES } from "../engine/permissions/download-execution.js";
import {
  DOWNLOAD_PAGES_PER_SNAPSHOT,
  type DownloadLog,
  type DownloadPages,
  MAX_FILES_PER_DOWNLOAD_PAGE,
} from "./download-log.js";

/** What is logged when a record fills, and when a process first reads one full. */
const FULL_NOTICE =
  "the record of downloaded files is full: every shell command asks a person, until an operator clears the record (README.md)";

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
  /** Whether the log holds the full mark (read from it, or written): nothing more is written. */
  private fullStored = false;

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

  /** Whether the record is full: it holds DOWNLOAD_RECORD_FULL, and takes no more files. */
  get full(): boolean {
    return this.has(DOWNLOAD_RECORD_FULL);
  }

  /** Add a file; a new one is written to the log, or past the cap the full mark (see the module comment). */
  override add(file: string): this {
    if (this.has(file) || this.full) return this;
    if (this.size >= MAX_DOWNLOADED_FILES) this.fill();
    else {
      super.add(file);
      this.pending.push(file);
    }
    this.writeSoon();
    return this;
  }

  /** Resolves once every file added so far (or the mark in their place) is stored; rejects when a write failed. */
  written(): Promise<void> {
    this.writeSoon();
    return this.writing ?? Promise.resolve();
  }

  /**
   * Start writing what waits (files, the full mark, a snapshot due), unless a write is under way: in
   * the background (its failure is logged, and rejects only the `written()` promises handed out).
   */
  private writeSoon(): void {
    if (this.writing || !(this.unwritten || this.snapshotDue)) return;
    this.writing = this.writePending();
    this.writing.catch(() => undefined);
  }

  /** Whether files or the full mark wait to be written. */
  private get unwritten(): boolean {
    return !this.fullStored && (this.pending.length > 0 || this.full);
  }

  /** Mark the set full (once): the rule asks from now on, and the mark is written after what is pending. */
  private fill(): void {
    if (this.full) return;
    super.add(DOWNLOAD_RECORD_FULL);
    this.logger.error({ logId: this.logId, maxFiles: MAX_DOWNLOADED_FILES }, FULL_NOTICE);
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
      if (this.full) this.logger.warn({ logId: this.logId }, FULL_NOTICE);
    }
    // The mark, when the pages read took the set past the cap, or a snapshot due.
    this.writeSoon();
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
      let at = this.next;
      do {
        while (this.unwritten) {
          // The set holds every file of the pages before `at` and those pending: past the cap, the
          // log would be too, so the mark goes instead of them; else they go first, then the mark.
          const over = this.size - (this.full ? 1 : 0) > MAX_DOWNLOADED_FILES;
          if (over) this.fill();
          const marking = over || this.pending.length === 0;
          const page = marking ? [DOWNLOAD_RECORD_FULL] : this.pending.slice(0, MAX_FILES_PER_DOWNLOAD_PAGE);
          at = Math.max(this.next, at);
          if (await this.log.claim(this.logId, at, page)) {
            this.next = Math.max(this.next, at + 1);
            if (marking) this.fullStored = true;
            else this.pending.splice(0, page.length);
          } else {
            this.take(await this.log.readFrom(this.logId, at));
            at += 1;
          }
        }
        // The mark stands for every file still pending.
        if (this.fullStored) this.pending.length = 0;
        if (this.snapshotDue) await this.writeSnapshot();
        // Files added while the snapshot was written are this write's too.
      } while (this.unwritten);
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
    if (this.full) this.fullStored ||= pages.files.includes(DOWNLOAD_RECORD_FULL);
    // Past the cap only through other writers' pages (adds stop at it): full all the same (the
    // write under way, or the catch-up's, stores the mark).
    else if (this.size > MAX_DOWNLOADED_FILES) this.fill();
  }
}
