/**
 * WorkspaceDownloads: the files downloaded into the workspace, one record for every session on it.
 * The agent's commands and file tools all work in one workspace (workspace.root), shared by every
 * session of every conversation — only uploads/ is split by conversation — so a file one session
 * downloaded is there for the next: the thread's session after "new" (which anyone in a shared
 * thread may type), or another conversation's. The rule that running a downloaded file needs a
 * person (engine/permissions/download-execution.ts) therefore reads one record per workspace, keyed
 * by its root (`dl:ws:<root>:<n>`, or `dl#<SHA-256 of ws:<root>>:<n>` where that key would be too
 * long for the store: download-log.ts), and every live session of this process holds
 * the same set. The set is read from the store once; with several processes writing the record, it
 * is read again for what the others added whenever this process takes a session's lease to run its
 * turns (lease-gate.ts: every turn and every pressed or typed control runs under it). Sessions
 * stored before the record moved to the workspace kept one of their own, under their id: its files
 * join the workspace's when the session loads (such records never expire; none is written now).
 * Once they are stored in the workspace's record, the old one is marked folded into it up to the
 * first page the fold did not find (download-log.ts), and a load reads no more of it than that
 * mark and that page: a process that dies before the mark is written reads the old record again at
 * the next load, so no file is lost between the two (files are only ever added), and a page a
 * build before the move appends later (in a rolling deploy) is folded at the next load. A mark
 * names the workspace's record, so a session loaded on another workspace (its root changed) folds
 * its old record into that one too.
 * The record is bounded (downloaded-files.ts): past MAX_DOWNLOADED_FILES it is marked full, the
 * mark stored in it, and every shell command on the workspace asks a person — in every process,
 * after restarts — until an operator clears the workspace's record (README.md, "downloaded code").
 * A fold into a full record adds nothing, and is marked folded all the same (the mark stands for
 * its files).
 */
import path from "node:path";
import type { Logger } from "pino";
import type { DownloadLog } from "./download-log.js";
import { DownloadedFiles } from "./downloaded-files.js";

/** The id of the download log of the workspace whose root is `root`. */
export function workspaceDownloadLogId(root: string): string {
  return `ws:${path.resolve(root)}`;
}

/** One workspace's downloaded files, shared by every session on it (module comment). */
export class WorkspaceDownloads {
  /** The workspace's files: complete once `current()` resolved (a file added before is kept too). */
  readonly files: DownloadedFiles;
  /** The first read of the record, until it succeeds. */
  private loaded: Promise<void> | undefined;
  /** The id of the workspace's record. */
  private readonly logId: string;

  /** `root`: the workspace's root, as configured. */
  constructor(
    private readonly log: DownloadLog,
    root: string,
    private readonly logger: Logger,
  ) {
    this.logId = workspaceDownloadLogId(root);
    this.files = DownloadedFiles.fresh(log, this.logId, logger);
  }

  /** The workspace's files, read from the store the first time. */
  async current(): Promise<DownloadedFiles> {
    if (this.loaded === undefined) {
      const loading = this.files.catchUp();
      this.loaded = loading;
      loading.catch(() => {
        if (this.loaded === loading) this.loaded = undefined;
      });
    }
    await this.loaded;
    return this.files;
  }

  /**
   * The workspace's files with those of the record `sessionId` kept of its own before the record
   * moved to the workspace (none for a session since), those of its pages not marked folded into
   * the workspace's: they are written to the workspace's, then it is marked (module comment). A
   * failure to write either is logged, and the next load folds the old record again.
   */
  async forStoredSession(sessionId: string): Promise<DownloadedFiles> {
    const [files, own] = await Promise.all([
      this.current(),
      this.log.readUnlessFolded(sessionId, this.logId),
    ]);
    if (own === undefined) return files;
    for (const problem of own.problems)
      this.logger.error({ sessionId }, `unreadable downloaded-files log entry: ${problem}`);
    // A session since the move has no record of its own: nothing to fold, and no mark to write.
    if (own.next === 0 && own.snapshot === 0 && own.problems.length === 0) return files;
    for (const file of own.files) files.add(file);
    try {
      await files.written();
      await this.log.markFolded(sessionId, this.logId, own.next);
    } catch (error) {
      this.logger.warn(
        { err: error, sessionId },
        "marking a session's own downloaded-files record folded failed; its next load reads it again",
      );
    }
    return files;
  }
}
