/**
 * Turn runner: drives one engine event stream (run, resume or retry) into the thread's renderer.
 * A failing renderer never stops the turn (the events are still persisted by the engine); the
 * usage of a completed turn is returned for the session totals. A turn whose start is still being
 * saved runs meanwhile, but shows nothing until that save is done, and is stopped if it fails.
 */
import type { Logger } from "pino";
import type { TurnStatus } from "../core/events.js";
import type { TokenUsage } from "../core/messages.js";
import type { ThreadOutput, TurnInfo, TurnRenderer } from "../core/thread-output.js";
import type { TurnEvents } from "../engine/turn-events.js";

export interface TurnOutcome {
  readonly status: TurnStatus | "abandoned";
  readonly usage: TokenUsage | undefined;
  readonly finalText: string;
}

/** The write of a turn's start failed: the turn was stopped before it showed anything. */
export class TurnStartNotSaved extends Error {
  constructor(cause: unknown) {
    super("the turn's start could not be saved", { cause });
  }
}

/** A renderer that drops everything (no output registered for the platform). */
const SILENT: TurnRenderer = { handle: () => undefined, close: async () => undefined };

/**
 * Consume `events`, rendering each; resolves when the stream ends. With `saved` (the write of the
 * turn's start), nothing is rendered before it is done; when it fails, the turn is stopped and
 * TurnStartNotSaved thrown.
 */
export async function driveTurn(input: {
  readonly events: TurnEvents;
  readonly output: ThreadOutput | undefined;
  readonly info: TurnInfo;
  readonly logger: Logger;
  readonly saved?: Promise<unknown> | undefined;
  /**
   * Once true, the turn's remaining events are logged, not shown: this process lost the session
   * (another holder continues it), so what its stale turn does on the way out is not news.
   */
  readonly quiet?: (() => boolean) | undefined;
}): Promise<TurnOutcome> {
  const { logger, events } = input;
  // The first `next()` begins the turn, so its model call does not wait for the save.
  const first = events.next();
  if (input.saved) {
    try {
      await input.saved;
    } catch (error) {
      first.catch(() => undefined);
      await events.return();
      throw new TurnStartNotSaved(error);
    }
  }
  let renderer = SILENT;
  try {
    renderer = input.output?.beginTurn(input.info) ?? SILENT;
  } catch (error) {
    logger.error({ err: error }, "the channel could not begin rendering a turn");
  }
  let outcome: TurnOutcome = { status: "abandoned", usage: undefined, finalText: "" };
  let quiet = false;
  try {
    for (let step = await first; !step.done; step = await events.next()) {
      const event = step.value;
      if (event.type === "turn-completed")
        outcome = { status: event.status, usage: event.usage, finalText: event.finalText };
      if (event.type === "error")
        logger.warn({ recoverable: event.recoverable }, `turn error: ${event.message}`);
      quiet ||= input.quiet?.() === true;
      if (quiet) continue;
      try {
        // Awaited only when the renderer has something to wait for (TurnRenderer.handle).
        const handled = renderer.handle(event);
        if (handled) await handled;
      } catch (error) {
        logger.warn({ err: error, event: event.type }, "rendering an event failed");
      }
    }
  } finally {
    try {
      await renderer.close();
    } catch (error) {
      logger.warn({ err: error }, "closing a turn renderer failed");
    }
  }
  return outcome;
}
