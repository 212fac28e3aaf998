/**
 * Session-start knowledge: what the instructions need from disk, read once when a session starts
 * — the workspace's AGENTS.md (confined like any tool path, so a symlink cannot smuggle a file
 * from outside the workspace into the prompt; only a regular file, only a capped prefix). A
 * failure never stops the conversation: it becomes a notice people see, and the part is left
 * out (as with the memories of the person asking, requester-memories.ts).
 */
import { isMissing } from "../core/missing-file.js";
import { INSTRUCTIONS_FILE } from "../core/workspace-layout.js";
import { constants } from "node:fs";
import { open, stat } from "node:fs/promises";
import path from "node:path";
import { NotRegularFileError, readUpTo } from "../tools/files/anchored-fs.js";
import { fileErrorMessage } from "../tools/files/fs-errors.js";
import { withWorkspaceFile } from "../tools/files/service-file-access.js";
import type { WorkspacePaths } from "../tools/files/workspace-paths.js";

/** Reads at most `maxBytes` of a text file; rejects with the file-system error (ENOENT when missing). */
export type TextPrefixReader = (absolutePath: string, maxBytes: number) => Promise<string>;

/**
 * Read up to `maxBytes` of a regular file as UTF-8. Opened non-blocking and checked on the open
 * handle, so a FIFO in the workspace cannot hang a session start.
 */
export const readTextPrefix: TextPrefixReader = async (absolutePath, maxBytes) => {
  const handle = await open(absolutePath, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new NotRegularFileError(`${absolutePath} is not a regular file`);
    return new TextDecoder("utf-8").decode(await readUpTo(handle, Math.min(maxBytes, stats.size)));
  } finally {
    await handle.close();
  }
};

/** What a read contributed: the text (when there is one) and a notice (when something failed). */
export interface KnowledgePart {
  readonly text?: string;
  readonly notice?: string;
}

/**
 * The workspace's AGENTS.md, read as a prefix long enough to tell whether it exceeds `maxChars`
 * (the instructions cap it). Missing is not a failure; anything else is reported.
 */
export async function readAgentsMd(
  paths: WorkspacePaths,
  maxChars: number,
  read: TextPrefixReader = readTextPrefix,
): Promise<KnowledgePart> {
  try {
    // Held open while it is read (service-file-access.ts): a command of another session in the
    // same workspace may swap the file for a link to a host file between the check and the read.
    // UTF-8 needs at most 4 bytes per character: this is always more than maxChars characters.
    return {
      text: await withWorkspaceFile(paths, INSTRUCTIONS_FILE, (opened) => read(opened, maxChars * 4 + 4)),
    };
  } catch (error) {
    if (isMissing(error)) return {};
    const reason =
      error instanceof NotRegularFileError
        ? "it is not a regular file"
        : fileErrorMessage(error, INSTRUCTIONS_FILE);
    return {
      notice: `The workspace's ${INSTRUCTIONS_FILE} was not read (${reason}); continuing without it.`,
    };
  }
}

/** How long a look at AGENTS.md serves the sessions that start after it without another. */
export const AGENTS_MD_FRESH_MS = 1_000;

/**
 * AGENTS.md for every session that starts: read (as `readAgentsMd`) when the file is new or
 * changed, else the last reading again — at most one `stat` a second instead of resolving,
 * opening and reading it for each session (every top-level Slack DM starts a session). The file
 * is known by its device, inode, size and change times after following links, so an edit, a
 * replacement or a link pointed elsewhere (which is then refused as always) is read afresh by the
 * sessions that start a second later at most.
 */
export class AgentsMdReader {
  private last: { readonly identity: string; readonly part: KnowledgePart; readonly at: number } | undefined;

  constructor(
    private readonly paths: WorkspacePaths,
    private readonly maxChars: number,
    private readonly read: TextPrefixReader = readTextPrefix,
    private readonly now: () => number = Date.now,
  ) {}

  /** The workspace's AGENTS.md as `readAgentsMd` gives it. */
  async current(): Promise<KnowledgePart> {
    const at = this.now();
    if (this.last && at - this.last.at < AGENTS_MD_FRESH_MS) return this.last.part;
    const identity = await this.identity();
    if (identity !== undefined && this.last?.identity === identity) {
      this.last = { ...this.last, at };
      return this.last.part;
    }
    const part = await readAgentsMd(this.paths, this.maxChars, this.read);
    this.last = identity === undefined ? undefined : { identity, part, at };
    return part;
  }

  /** What the file is now ("missing" when absent); undefined when that cannot be told. */
  private async identity(): Promise<string | undefined> {
    try {
      const s = await stat(path.join(this.paths.root, INSTRUCTIONS_FILE), { bigint: true });
      return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
    } catch (error) {
      return isMissing(error) ? "missing" : undefined;
    }
  }
}
