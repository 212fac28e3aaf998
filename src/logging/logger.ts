/**
 * The process logger: pino JSON lines by default, pino-pretty when writing to a terminal, with
 * secrets redacted everywhere. Each line is scrubbed once, in two complementary layers:
 * - by key, on the logged object (pino `redact` paths for the known secret fields, whatever their
 *   value, and `redactSecretKeys` for secret-named string fields at any depth): a value under a
 *   secret name (`password: "hunter2"`) has no shape the patterns could know;
 * - by value, on the finished JSON line (`scrubSecrets`: the registered secrets and token-shaped
 *   strings): the message, child bindings, error messages and stacks never pass the key layer, and
 *   a token may sit under an innocent key. This is the only pattern pass; the key layer runs none.
 * Turn loggers (`turnLogger`: the scheduler's and each channel renderer's, one per turn) carry
 * session and turn ids. pino-pretty loads only when it is used: a service logging JSON never pays
 * for it. A log file is owner-only (0600), and its folder, when this creates it, 0700.
 */
import { mkdirSync } from "node:fs";
import { ensurePrivateFile } from "../core/private-files.js";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import pino, { type DestinationStream, type Level, type Logger } from "pino";
import type Pretty from "pino-pretty";
import { REDACT_PATHS, REDACTED, redactSecretKeys, scrubSecrets } from "./redact.js";

export type { Logger } from "pino";

export type LogLevel = Level | "silent";

export interface LoggerOptions {
  readonly level: LogLevel;
  /** Where lines go; default stdout. */
  readonly destination?: DestinationStream;
  /**
   * Append JSON lines to this file instead (owner-only; its directory is created 0700 when missing);
   * wins over `destination`.
   */
  readonly file?: string;
  /** Human-readable output; default: when the destination is stdout and stdout is a TTY. */
  readonly pretty?: boolean;
}

/** Create the root logger. */
export function createLogger(options: LoggerOptions): Logger {
  if (options.file !== undefined) {
    openPrivateFile(options.file);
    return buildLogger(options.level, pino.destination({ dest: options.file, mode: 0o600, sync: false }));
  }
  const toStdout = options.destination === undefined;
  const usePretty = options.pretty ?? (toStdout && process.stdout.isTTY === true);
  const destination: DestinationStream = usePretty
    ? loadPretty()({ colorize: toStdout, sync: true, destination: options.destination ?? 1 })
    : (options.destination ?? pino.destination({ dest: 1, sync: false }));
  return buildLogger(options.level, destination);
}

/** Make `file` exist, owner-only, in a folder created 0700 when missing (one that exists keeps its mode). */
function openPrivateFile(file: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  ensurePrivateFile(file);
}

/** pino-pretty, loaded on first use (it is CommonJS, so this stays synchronous). */
function loadPretty(): typeof Pretty {
  return createRequire(import.meta.url)("pino-pretty") as typeof Pretty;
}

function buildLogger(level: LogLevel, destination: DestinationStream): Logger {
  return pino(
    {
      level,
      // By key: known secret fields by path, secret-named fields at any depth. Then by value, once,
      // the finished line (messages, child bindings, error messages and stacks, every field).
      redact: { paths: [...REDACT_PATHS], censor: REDACTED },
      formatters: { log: (object) => redactSecretKeys(object) as Record<string, unknown> },
      hooks: { streamWrite: scrubSecrets },
    },
    destination,
  );
}

/**
 * A logger whose every line carries the session and turn ids. The pino child behind it is made
 * when the logger is first used: turn loggers report what goes wrong, so most turns never use
 * theirs, and making a child serialises its bindings at once.
 */
export function turnLogger(
  base: Logger,
  ids: { readonly sessionId: string; readonly turnId: string },
): Logger {
  let child: Logger | undefined;
  const made = () => (child ??= base.child({ sessionId: ids.sessionId, turnId: ids.turnId }));
  return new Proxy(base, {
    get: (_base, property) => {
      const value: unknown = Reflect.get(made(), property);
      return typeof value === "function" ? value.bind(child) : value;
    },
    set: (_base, property, value) => Reflect.set(made(), property, value),
  });
}
