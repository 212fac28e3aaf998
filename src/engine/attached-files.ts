/**
 * The files a turn's message came with, named for those who decide on its calls: the safety
 * reviewer (reviewer/review-input.ts) and the person on the approval card (approvals/). A file's
 * text reaches the model apart from the person's words (engine/outbound.ts), but it is still in
 * the turn and may have steered a call, so both are told the files' names — never their text.
 */

/** Names shown at most; the rest are counted. */
const MAX_NAMES = 10;
/** Characters of one name shown at most. */
const NAME_CHARS = 80;

function shown(name: string): string {
  const flat = name.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, " ");
  return flat.length <= NAME_CHARS ? flat : `${flat.slice(0, NAME_CHARS - 1)}…`;
}

/**
 * The names of the files in a request's `metadata.files` (request-builder.ts), as
 * "report.pdf, notes.txt"; undefined when the message came with none.
 */
export function attachedFilesOf(metadata: Readonly<Record<string, unknown>>): string | undefined {
  const files = metadata.files;
  if (!Array.isArray(files) || files.length === 0) return undefined;
  const names = files
    .slice(0, MAX_NAMES)
    .map((file) => shown(String((file as { name?: unknown } | null)?.name ?? "a file")));
  const more = files.length - names.length;
  return more > 0 ? `${names.join(", ")} and ${more} more` : names.join(", ");
}
