/**
 * Graceful shutdown. On SIGTERM / SIGINT (or `run()`): stop taking new work, give the registered
 * drainers (running turns) a grace period, then abort their signal so they interrupt at a safe
 * point, run the closers (channels, servers, store) newest first, and report exit code 0 — 1
 * when a step failed or overran. A second signal exits the process at once, and a shutdown that
 * is still not done a few seconds past the grace period (a closer that hangs, a library retrying
 * forever) exits it too: one signal always ends the process.
 */
import type { Logger } from "../logging/logger.js";

/** Something that can deliver process signals (the process itself, or a test emitter). */
export interface SignalSource {
  on(signal: "SIGTERM" | "SIGINT", listener: () => void): unknown;
  off(signal: "SIGTERM" | "SIGINT", listener: () => void): unknown;
}

/** Receives an AbortSignal that fires when the grace period is over: interrupt now. */
export type Drainer = (deadline: AbortSignal) => Promise<void>;

export interface ShutdownOptions {
  readonly logger: Logger;
  /** How long drainers may run before their signal aborts. */
  readonly graceMs: number;
  /** How long drainers get after the abort before shutdown proceeds without them; default 5 s. */
  readonly interruptMs?: number;
  /** How long the closers may take, after the drainers, before the process is ended; default 5 s. */
  readonly closeMs?: number;
  /** Ends the process at once on a second signal; injected so tests can observe it. */
  readonly forceExit: (code: number) => void;
  /** Where SIGTERM / SIGINT come from; default `process`. */
  readonly signals?: SignalSource;
}

interface Step<F> {
  readonly name: string;
  readonly fn: F;
}

const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;

/**
 * A wait that holds the process open until it ends, unlike settlesWithin's: while the drainers
 * overrun, this timer is what keeps the closers (the store's last writes) from being skipped by
 * an exit with nothing else left to wait on.
 */
function timeout(ms: number): { promise: Promise<"timeout">; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

/** Coordinates an orderly stop; register steps as the app's parts start. */
export class Shutdown {
  private readonly intake: Step<() => void | Promise<void>>[] = [];
  private readonly drainers: Step<Drainer>[] = [];
  private readonly closers: Step<() => Promise<void>>[] = [];
  private running: Promise<number> | undefined;
  private detach: (() => void) | undefined;
  private resolveDone: (code: number) => void = () => undefined;
  /** Resolves with the exit code once a shutdown (however triggered) has completed. */
  readonly done: Promise<number>;

  constructor(private readonly options: ShutdownOptions) {
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
  }

  /** True once shutdown has begun (channels use it to refuse new work). */
  get stopping(): boolean {
    return this.running !== undefined;
  }

  /** Called first: stop accepting messages (channels stop receiving, readiness goes red). */
  onStopIntake(name: string, fn: () => void | Promise<void>): void {
    this.intake.push({ name, fn });
  }

  /** Called concurrently after intake stopped: let work finish, interrupt when the signal aborts. */
  addDrainer(name: string, fn: Drainer): void {
    this.drainers.push({ name, fn });
  }

  /** Called last, newest first: close connections, servers, the store. */
  addCloser(name: string, fn: () => Promise<void>): void {
    this.closers.push({ name, fn });
  }

  /** Listen for SIGTERM / SIGINT; returns a function that stops listening. */
  install(): () => void {
    const source = this.options.signals ?? process;
    const handlers = (["SIGTERM", "SIGINT"] as const).map((signal) => {
      const handler = (): void => this.signal(signal);
      source.on(signal, handler);
      return [signal, handler] as const;
    });
    this.detach = () => {
      for (const [signal, handler] of handlers) source.off(signal, handler);
    };
    return this.detach;
  }

  /** Handle a signal (also used for Ctrl-C read by a terminal): first shuts down, second forces exit. */
  signal(signal: "SIGTERM" | "SIGINT"): void {
    if (this.running !== undefined) {
      this.options.logger.warn({ signal }, "second signal: exiting now");
      this.options.forceExit(SIGNAL_EXIT_CODES[signal]);
      return;
    }
    void this.run(signal);
  }

  /** Shut down once (later calls return the same promise); resolves with the exit code. */
  run(reason: string): Promise<number> {
    if (this.running !== undefined) return this.running;
    const limitMs =
      this.options.graceMs + (this.options.interruptMs ?? 5_000) + (this.options.closeMs ?? 5_000);
    const watchdog = setTimeout(() => {
      this.options.logger.error({ limitMs }, "shutdown did not finish in time: exiting now");
      this.options.forceExit(1);
    }, limitMs);
    watchdog.unref();
    this.running = this.sequence(reason).then((code) => {
      clearTimeout(watchdog);
      this.detach?.();
      this.resolveDone(code);
      return code;
    });
    return this.running;
  }

  private async sequence(reason: string): Promise<number> {
    const { logger } = this.options;
    logger.info({ reason, graceMs: this.options.graceMs }, "shutting down");
    let clean = true;
    const attempt = async (phase: string, name: string, fn: () => unknown): Promise<void> => {
      try {
        await fn();
      } catch (error) {
        clean = false;
        logger.error({ err: error, phase, step: name }, "shutdown step failed");
      }
    };
    for (const step of this.intake) await attempt("stop-intake", step.name, step.fn);
    clean = (await this.drain(attempt)) && clean;
    for (const step of [...this.closers].reverse()) await attempt("close", step.name, step.fn);
    logger.info({ clean }, "shutdown complete");
    return clean ? 0 : 1;
  }

  private async drain(
    attempt: (phase: string, name: string, fn: () => unknown) => Promise<void>,
  ): Promise<boolean> {
    if (this.drainers.length === 0) return true;
    const controller = new AbortController();
    const grace = setTimeout(() => {
      this.options.logger.warn("grace period over: interrupting running work");
      controller.abort(new Error("shutdown grace period over"));
    }, this.options.graceMs);
    const all = Promise.all(
      this.drainers.map((step) => attempt("drain", step.name, () => step.fn(controller.signal))),
    );
    const limit = timeout(this.options.graceMs + (this.options.interruptMs ?? 5_000));
    const outcome = await Promise.race([all.then(() => "done" as const), limit.promise]);
    clearTimeout(grace);
    limit.cancel();
    if (outcome === "timeout")
      this.options.logger.error("drainers did not finish after interruption; closing anyway");
    return outcome === "done";
  }
}
