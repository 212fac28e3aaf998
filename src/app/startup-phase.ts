/**
 * Start-up as a sequence of named phases (store → ops → model check → conversation → channels →
 * ready), each with a deadline, so a store or endpoint that never answers ends start-up with a
 * line naming the phase instead of hanging, and a signal during start-up ends it at once: the
 * phase in progress is abandoned and start-up rejects with StartupInterrupted.
 */
import { ServiceFailure } from "../core/failure.js";

export type StartupPhaseName = "store" | "ops" | "model check" | "conversation" | "channels" | "ready";

/** Longest each phase may take. */
export const PHASE_DEADLINES_MS: Readonly<Record<Exclude<StartupPhaseName, "ready">, number>> = {
  store: 30_000,
  ops: 10_000,
  "model check": 10_000,
  conversation: 60_000,
  channels: 10_000,
};

/** Start-up was stopped by a signal (or the console's end) before it finished. */
export class StartupInterrupted extends Error {
  constructor(readonly exitCode: number) {
    super("start-up was interrupted");
    this.name = "StartupInterrupted";
  }
}

/** Tracks the current phase and runs each with its deadline, abandoning it when `stopped` settles. */
export class StartupPhases {
  private current: StartupPhaseName | "config" = "config";

  /**
   * @param stopping whether shutdown has begun: a phase failing meanwhile (its store closed under
   *   it) is the interruption, not a start-up failure.
   * @param stopped resolves with the exit code once shutdown has finished.
   */
  constructor(
    private readonly stopping: () => boolean,
    private readonly stopped: Promise<number>,
  ) {}

  get phase(): StartupPhaseName | "config" {
    return this.current;
  }

  /** Run `work` as `name`; rejects on its deadline or when shutdown has finished meanwhile. */
  async run<T>(name: Exclude<StartupPhaseName, "ready">, work: () => Promise<T>): Promise<T> {
    this.current = name;
    const ms = PHASE_DEADLINES_MS[name];
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new ServiceFailure(
              `start-up (${name})`,
              "unreachable",
              `no result within ${ms / 1_000} s`,
              "see the log, and run `coworker doctor`",
            ),
          ),
        ms,
      );
      timer.unref();
    });
    const interrupted = this.stopped.then((code) => {
      throw new StartupInterrupted(code);
    });
    // Handled here too, so a shutdown after this phase won is not an unhandled rejection.
    interrupted.catch(() => undefined);
    try {
      return await Promise.race([work(), deadline, interrupted]);
    } catch (error) {
      if (error instanceof StartupInterrupted || !this.stopping()) throw error;
      throw new StartupInterrupted(await this.stopped);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Every phase has finished. */
  ready(): void {
    this.current = "ready";
  }
}
