/**
 * Dropping a run of one character from the end of a text, by a scan back from the end. A pattern
 * such as `/\n+$/` is quadratic in V8: it tries every position of every run and reads each run
 * to its end before `$` fails, so a long run of newlines (or slashes) inside a model's code block
 * or command took seconds. This reads only the run at the end.
 */

/** `text` without the run of `char` (one UTF-16 unit) at its end. */
export function trimTrailing(text: string, char: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === char) end -= 1;
  return end === text.length ? text : text.slice(0, end);
}
