/**
 * WorkspaceDownloads: the files downloaded into the workspace, one record for every session on it.
 * The agent's commands and file tools all work in one workspace (workspace.root), shared by every
 * session of every conversation — only uploads/ is split by conversation — so a file one session
 * downloaded is there for the next: the thread's session after "new" (which anyone in a shared
 * thread may type), or another conversation's. The rule that running a downloaded file needs a
 * person (engine/permissions/download-execution.ts) therefore reads one record per workspace, keyed
 * by its root (`dl:ws:<root>:<n>`, download-log.ts), and every live session of this process holds
 * the same set. The set is read from the store once; with several processes writing the record, it
 * is read again for what the others added whenever this process takes a session's lease to run its
 * turns (lease-gate.ts: every turn and every pressed or typed control runs under it). Sessions
 * stored before the record moved to the workspace kept one of their own, under their id: its files
 * join the workspace's when the session loads (such records never expire; none is written now).
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

  /** `root`: the workspace's root, as configured. */
  constructor(
    private readonly log: DownloadLog,
    root: string,
    private readonly logger: Logger,
  ) {
    this.files = DownloadedFiles.fresh(log, workspaceDownloadLogId(root), logger);
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
   * moved to the workspace (none for a session since), which are written to the workspace's.
   */
  async forStoredSession(sessionId: string): Promise<DownloadedFiles> {
    const [files, own] = await Promise.all([this.current(), this.log.read(sessionId)]);
    for (const problem of own.problems)
      this.logger.error({ sessionId }, `unreadable downloaded-files log entry: ${problem}`);
    for (const file of own.files) files.add(file);
    return files;
  }
}
