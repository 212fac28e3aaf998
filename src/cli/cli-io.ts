/** What the CLI runs with: arguments' environment, streams and process hooks, all injectable. */
import type { Readable, Writable } from "node:stream";
import type { AppAssembly } from "../app/app-parts.js";
import type { Env } from "../config/env-overrides.js";
import type { FaultSource } from "../ops/fatal-errors.js";
import type { SignalSource } from "../ops/shutdown.js";
import type { DoctorDeps } from "./doctor-checks.js";

export interface CliIo {
  readonly env: Env;
  readonly cwd: string;
  readonly stdin: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;
  /** Ends the process at once (second Ctrl-C / signal during shutdown). */
  readonly forceExit: (code: number) => void;
  readonly signals?: SignalSource;
  /** Where uncaught exceptions and unhandled rejections come from; default `process`. */
  readonly faults?: FaultSource;
  /** Overrides for tests; default: the real assembly, fetch and store. */
  readonly assembly?: AppAssembly;
  readonly doctor?: Partial<DoctorDeps>;
  /**
   * Told once `start` is over starting: the app is ready and every platform channel's first
   * connection attempt has ended (the executable ends its start-up heap settings).
   */
  readonly onStartedUp?: () => void;
}
