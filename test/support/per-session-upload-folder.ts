/**
 * The name uploads/ folders had before conversation folders (core/upload-folders.ts): a session's
 * whole key with every character but letters, digits, ".", "_" and "-" made "_" — as Slack's
 * channel spelled it, for tests of files saved then.
 */
import { sessionKeyOf, type ThreadTarget } from "../../src/core/thread-target.js";

/** The per-session upload folder name a session of `target` had ("slack_T1_D1_1700.1"). */
export function perSessionUploadFolder(target: ThreadTarget): string {
  return sessionKeyOf(target).replace(/[^A-Za-z0-9._-]/g, "_");
}
