/**
 * Empty files made on the host for the sandbox to cover a name no command may create. bwrap can
 * only mount over something, and what it would make itself it leaves behind; so a missing file
 * that must stay out of a command's reach (the workspace's AGENTS.md) is made here, empty, while
 * commands that cover it run, and removed when the last of them ends — unless something else has
 * taken its place meanwhile (another file, or text written into it). Commands running at once
 * share one placeholder: removing it under a running one would lift that one's cover. An empty
 * AGENTS.md reads as none, so one left by a service stopped mid-command changes nothing.
 *
 * Making, sharing and removing are synchronous, so no other call of this process comes between
 * the look at a name and the change to it.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, unlinkSync } from "node:fs";
import { errorCode } from "../../core/missing-file.js";

/** A placeholder this process made and the commands that cover it. */
interface Placeholder {
  users: number;
  readonly dev: number;
  readonly ino: number;
}

/** Placeholders by real path; shared by every sandboxed command of this process. */
const placeholders = new Map<string, Placeholder>();

/** Removes the placeholder at `file` when it is still the empty file made there. */
function removeIfUnchanged(file: string, made: Placeholder): void {
  const now = lstatSync(file, { throwIfNoEntry: false });
  if (now?.isFile() && now.dev === made.dev && now.ino === made.ino && now.size === 0) unlinkSync(file);
}

/**
 * Make sure something is at `file` (a real path in an existing folder) for a command to be covered
 * by: a placeholder made now, or one already covering another running command, or whatever is
 * there already. Returns the release to call, once, when the command has ended: it removes a
 * placeholder no other command covers any more.
 */
export function holdPlaceholder(file: string): () => void {
  let held = placeholders.get(file);
  if (held === undefined) {
    let fd: number;
    try {
      fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW);
    } catch (error) {
      if (errorCode(error) === "EEXIST") return () => undefined;
      throw error;
    }
    try {
      const { dev, ino } = fstatSync(fd);
      held = { users: 0, dev, ino };
    } finally {
      closeSync(fd);
    }
    placeholders.set(file, held);
  }
  const placeholder = held;
  placeholder.users += 1;
  return () => {
    placeholder.users -= 1;
    if (placeholder.users > 0) return;
    placeholders.delete(file);
    removeIfUnchanged(file, placeholder);
  };
}
