/**
 * Turns file-system failures into short, clear tool errors for the model (never a stack trace).
 */
import { errorCode } from "../../core/missing-file.js";
import { UnsafeFileError } from "./anchored-fs.js";
import { CredentialFileError } from "./credential-paths.js";
import { NotTextError } from "./text-file.js";
import { PathOutsideWorkspaceError } from "./workspace-paths.js";

/** A one-line explanation of why an operation on `shownPath` failed. */
export function fileErrorMessage(error: unknown, shownPath: string): string {
  if (
    error instanceof PathOutsideWorkspaceError ||
    error instanceof NotTextError ||
    error instanceof CredentialFileError ||
    error instanceof UnsafeFileError
  )
    return error.message;
  const code = errorCode(error);
  switch (code) {
    case "ENOENT":
      return `${shownPath}: no such file or directory`;
    case "ELOOP":
      return `${shownPath}: a symbolic link is in the way; the file tools do not follow links here`;
    case "ENOTDIR":
      return `${shownPath}: a parent of this path is not a directory`;
    case "EISDIR":
      return `${shownPath} is a directory`;
    case "EACCES":
    case "EPERM":
      return `${shownPath}: permission denied`;
    case "ENOSPC":
      return `${shownPath}: no space left on the device`;
    default:
      return `${shownPath}: ${error instanceof Error ? error.message : String(error)}`;
  }
}
