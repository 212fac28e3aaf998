/**
 * The workspace as one conversation may use it. The files people send are kept under uploads/,
 * one folder per conversation (core/upload-folders.ts), and are private to it: a session may use
 * its own conversation's folders — those of every thread or topic of the same channel, DM or chat
 * — and nothing else under uploads/. Any other is refused with one answer, whether it exists or
 * not: judged on the path as asked before anything is looked up, then on its real path, so a link
 * from the session's own folder into another's is refused too. Listings and searches leave the
 * others out (hidden()). The tools are shared by every session, so each call takes this view for
 * the session its request comes from: the tools that act for a caller hold a ConversationWorkspace
 * (conversation-workspace.ts), which offers nothing but this view. A view of no conversation holds
 * no upload at all. The service's own saves and reads of the files people send (the channels, the
 * attachment intake and its PDF extracts) go through the view of the message's conversation too,
 * so a link left in one conversation's folder cannot carry them into another's.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { isWithin } from "../../core/real-paths.js";
import type { ThreadTarget } from "../../core/thread-target.js";
import { isConversationUploadFolder, UPLOADS_FOLDER } from "../../core/upload-folders.js";
import { PathOutsideWorkspaceError, realpathOfMaybeMissing, type WorkspacePaths } from "./workspace-paths.js";

/** The real path of the workspace's uploads folder, also before it exists. */
export async function uploadsFolder(paths: WorkspacePaths): Promise<string> {
  const [root] = await paths.realRoots();
  return realpathOfMaybeMissing(path.join(root ?? paths.root, UPLOADS_FOLDER));
}

/** Whether `name`, a folder directly under uploads/, is not one of `target`'s (all are not, for no target). */
function othersFolder(name: string, target: ThreadTarget | undefined): boolean {
  return target === undefined || !isConversationUploadFolder(name, target);
}

/** Whether `absolute` lies in a folder of `uploads` that is not one of `target`'s. */
function inOthersUploads(absolute: string, uploads: string, target: ThreadTarget | undefined): boolean {
  if (absolute === uploads || !isWithin(absolute, uploads)) return false;
  return othersFolder(path.relative(uploads, absolute).split(path.sep)[0] ?? "", target);
}

/**
 * The entries of `uploads` that are not `target`'s folders, when `uploads` is `dir` or lies inside
 * it (none otherwise, or when it cannot be read: the hidden test still judges every path).
 */
async function othersUploadsWithin(
  dir: string,
  uploads: string,
  target: ThreadTarget | undefined,
): Promise<readonly string[]> {
  if (!isWithin(uploads, dir)) return [];
  const names = await readdir(uploads).catch(() => []);
  return names.filter((name) => othersFolder(name, target)).map((name) => path.join(uploads, name));
}

/**
 * `paths` as the conversation of `target` may use it (module comment); with no target, none of
 * uploads/ is open. A view of a view opens only what both do.
 */
export function conversationPaths(paths: WorkspacePaths, target: ThreadTarget | undefined): WorkspacePaths {
  const refuse = (input: string) =>
    new PathOutsideWorkspaceError(
      target === undefined
        ? `${input}: nothing under ${UPLOADS_FOLDER}/ is available here (the files people send stay in the conversation they sent them in)`
        : `${input}: of ${UPLOADS_FOLDER}/, only this conversation's own folders are available here (the files people send stay in the conversation they sent them in)`,
    );
  return Object.freeze({
    root: paths.root,
    realRoots: () => paths.realRoots(),
    display: (absolute: string) => paths.display(absolute),
    async resolve(input: string) {
      const [root = paths.root] = await paths.realRoots();
      if (inOthersUploads(path.resolve(root, input), path.join(root, UPLOADS_FOLDER), target))
        throw refuse(input);
      const resolved = await paths.resolve(input);
      if (inOthersUploads(resolved.absolute, await uploadsFolder(paths), target)) throw refuse(input);
      return resolved;
    },
    async hidden() {
      const [hiddenBefore, uploads] = await Promise.all([paths.hidden(), uploadsFolder(paths)]);
      return (absolute: string) => hiddenBefore(absolute) || inOthersUploads(absolute, uploads, target);
    },
    async hidingIn(dir: string) {
      const [before, uploads] = await Promise.all([paths.hidingIn(dir), uploadsFolder(paths)]);
      return {
        hidden: (absolute: string) => before.hidden(absolute) || inOthersUploads(absolute, uploads, target),
        within: [...before.within, ...(await othersUploadsWithin(dir, uploads, target))],
      };
    },
  });
}
