/**
 * The downloads of one step's calls, foreseen before any of them runs. Every call of a step is
 * decided before the first one runs (tool-scheduler.ts), so `curl -o x.sh …` and `sh x.sh` sent as
 * two calls of one step would have the second decided while x.sh is not yet recorded, and run
 * unasked. So each call is decided against the workspace's downloaded files plus what the step's
 * calls that may run before it or beside it would download: every earlier call, and for a call
 * that runs beside its neighbours every later one that does too (which of them share a batch is
 * known only once all are decided). What a call would download is read from its command with the
 * shell tool's own detection (detectDownloads), as written: the rule matches files by path or by
 * name, and paths under folders (download-execution.ts); an extraction counts when the session or
 * an earlier call downloads its archive. The session's facts stay as they are: a call's view is its own set.
 */
import { detectDownloads } from "../../tools/shell/downloads.js";

/** What foreseeing a step's downloads needs of one of its calls. */
export interface StepCall {
  /** The command it runs (commandOf), or undefined: it runs none, or its arguments do not parse. */
  readonly command: string | undefined;
  /** It may run at the same time as its neighbours (tool-scheduler.ts's concurrent-safe calls). */
  readonly concurrent: boolean;
}

/**
 * For the step's call at each index, the downloaded files to decide it against (see the module
 * comment): `session` itself when no call that may run before it or beside it downloads anything.
 */
export function stepDownloadedFiles(
  calls: readonly StepCall[],
  session: ReadonlySet<string>,
): (index: number) => ReadonlySet<string> {
  // An archive the session or an earlier call downloads is a download when a call extracts it.
  const earlier: string[] = [];
  const known = {
    *[Symbol.iterator]() {
      yield* session;
      yield* earlier;
    },
  };
  const foreseen = calls.map((call) => {
    const found = call.command === undefined ? [] : detectDownloads(call.command, known);
    for (const file of found) earlier.push(file);
    return found;
  });
  return (index) => {
    const concurrent = calls[index]?.concurrent === true;
    const files = foreseen.flatMap((found, i) =>
      i < index || (i > index && concurrent && calls[i]?.concurrent === true) ? found : [],
    );
    return files.length === 0 ? session : new Set([...session, ...files]);
  };
}
