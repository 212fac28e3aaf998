/**
 * Process-level faults: an exception nothing caught or a promise rejection nobody handled means
 * the process is in an unknown state. Intake never lets one inbound item get this far (channels
 * screen and answer garbage), so whatever arrives here is not tied to one item — the process
 * ends with one clear log line, one line on stderr and exit code 1, so a supervisor restarts it
 * and the store resumes the work. Never silently, and never by carrying on.
 */
import type { Writable } from "node:stream";
import type { Logger } from "../logging/logger.js";
import { scrubSecrets } from "../logging/redact.js";

/** Something that delivers the process's fault events (the process itself, or a test emitter). */
export interface FaultSource {
  on(event: "uncaughtException" | "unhandledRejection", listener: (error: unknown) => void): unknown;
  off(event: "uncaughtException" | "unhandledRejection", listener: (error: unknown) => void): unknown;
}

export interface FatalHandlerOptions {
  readonly logger: Logger;
  readonly stderr: Writable;
  /** Ends the process with the code (after the log line was flushed, or after a short wait). */
  readonly exit: (code: number) => void;
  readonly source?: FaultSource;
}

const FLUSH_WAIT_MS = 1_000;

function describe(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return scrubSecrets(text).slice(0, 500);
}

/** Listen for uncaught exceptions and unhandled rejections; returns a function that stops listening. */
export function installFatalHandlers(options: FatalHandlerOptions): () => void {
  const source = options.source ?? process;
  let exiting = false;
  const fatal = (kind: "uncaught exception" | "unhandled rejection") => (error: unknown) => {
    if (exiting) return;
    exiting = true;
    const reason = describe(error);
    let exited = false;
    // Kept referenced: the process must not drift into a clean exit before this fires.
    const timer = setTimeout(() => exit(), FLUSH_WAIT_MS);
    const exit = () => {
      if (exited) return;
      exited = true;
      clearTimeout(timer);
      options.exit(1);
    };
    try {
      options.logger.fatal(
        { err: error, kind },
        `fatal ${kind}: ${reason}; exiting so a supervisor restarts`,
      );
      options.stderr.write(`✗ Coworker stopped after an ${kind}: ${reason}\n`);
      options.logger.flush(() => exit());
    } catch {
      exit();
    }
  };
  const onException = fatal("uncaught exception");
  const onRejection = fatal("unhandled rejection");
  source.on("uncaughtException", onException);
  source.on("unhandledRejection", onRejection);
  return () => {
    source.off("uncaughtException", onException);
    source.off("unhandledRejection", onRejection);
  };
}
