/**
 * ThreadOutputs: where channels register how to reach their threads (one ThreadOutputFactory per
 * platform), and the one lookup every part of the session layer posts through — turns, command
 * replies, cards, notices and the turns resumed after a restart. Shared by the SessionManager and
 * the collaborators the composition root builds for it.
 */
import type { Logger } from "pino";
import type { ThreadOutput, ThreadOutputFactory } from "../core/thread-output.js";
import type { ThreadTarget } from "../core/thread-target.js";

/** The platforms' thread outputs (see the module header). */
export class ThreadOutputs {
  private readonly factories = new Map<string, ThreadOutputFactory>();

  constructor(private readonly logger: Logger) {}

  /** A channel registers how to reach its threads; a later registration replaces an earlier one. */
  register(platform: string, factory: ThreadOutputFactory): void {
    this.factories.set(platform, factory);
  }

  /** The output of `target`'s thread; undefined (and a warning) when its platform registered none. */
  outputFor(target: ThreadTarget): ThreadOutput | undefined {
    const factory = this.factories.get(target.platform);
    if (!factory) {
      this.logger.warn({ platform: target.platform }, "no output registered for platform");
      return undefined;
    }
    return factory(target);
  }
}
