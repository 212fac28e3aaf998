/**
 * The process logger: pino JSON lines by default, pino-pretty when writing to a terminal, with
 * secrets redacted everywhere (known secret fields via pino `redact`, token-shaped strings in
 * messages, bindings and nested objects via a scrubber). Turn loggers carry session and turn ids.
 */
import pino, { type DestinationStream, type Level, type Logger } from "pino";
import pretty from "pino-pretty";
import { REDACT_PATHS, REDACTED, redactDeep, scrubSecrets } from "./redact.js";

export type { Logger } from "pino";

export type LogLevel = Level | "silent";

export interface LoggerOptions {
  readonly level: LogLevel;
  /** Where lines go; default stdout. */
  readonly destination?: DestinationStream;
  /** Human-readable output; default: when the destination is stdout and stdout is a TTY. */
  readonly pretty?: boolean;
}

function scrubArgs(args: unknown[]): unknown[] {
  return args.map((arg) => (typeof arg === "string" ? scrubSecrets(arg) : arg));
}

/** Serialize an error and scrub its message and stack (they may quote a request URL or header). */
function errorSerializer(err: unknown): unknown {
  return redactDeep(pino.stdSerializers.err(err as Error));
}

/** Create the root logger. */
export function createLogger(options: LoggerOptions): Logger {
  const toStdout = options.destination === undefined;
  const usePretty = options.pretty ?? (toStdout && process.stdout.isTTY === true);
  const destination: DestinationStream = usePretty
    ? pretty({ colorize: toStdout, sync: true, destination: options.destination ?? 1 })
    : (options.destination ?? pino.destination({ dest: 1, sync: false }));
  return pino(
    {
      level: options.level,
      redact: { paths: [...REDACT_PATHS], censor: REDACTED },
      serializers: { err: errorSerializer, error: errorSerializer },
      formatters: {
        log: (object) => redactDeep(object) as Record<string, unknown>,
        bindings: (bindings) => redactDeep(bindings) as Record<string, unknown>,
      },
      hooks: {
        logMethod(args, method) {
          method.apply(this, scrubArgs(args) as Parameters<typeof method>);
        },
      },
    },
    destination,
  );
}

/** A child logger whose every line carries the session and turn ids. */
export function turnLogger(
  base: Logger,
  ids: { readonly sessionId: string; readonly turnId: string },
): Logger {
  return base.child({ sessionId: ids.sessionId, turnId: ids.turnId });
}
