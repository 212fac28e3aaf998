/**
 * How a Telegram service command runs (one the session layer answers: `service.command()`): once
 * per update, never failing in silence. Its update is claimed in the session layer's record of
 * deliveries (telegram-hand-over.ts claimDelivery), as a message's hand-over and a stop's drop
 * claim theirs, so an update Telegram delivers again (to any process) runs nothing: a /skill's
 * turn is not run twice, and a /stop delivered again does not stop a newer turn. A /stop the
 * record cannot place still runs (stopRunsOnce): one that comes twice stops at worst a turn begun
 * between them, one dropped would leave the turn she stopped running. A command that could not
 * run (the record unreachable, the command failing) is answered commandFailed (replyOf), logged.
 */
import { errorText } from "./telegram-errors.js";
import { claimDelivery, type Delivered, type HandOverDeps } from "./telegram-hand-over.js";

/** What a command run needs: the record of deliveries (the service), the bot's name, a logger. */
type RunDeps = Pick<HandOverDeps, "service" | "bot" | "logger">;

/** What a person is told when their service command could not run (see module comment). */
export const commandFailed = (name: string): string => `Sorry, /${name} did not work. Please try again.`;

/**
 * Whether a /stop's update is the first delivery of it (claimDelivery): one delivered again runs
 * nothing (logged). When the record cannot say, the stop runs (see module comment).
 */
export async function stopRunsOnce(delivered: Delivered, deps: RunDeps): Promise<boolean> {
  try {
    if (await claimDelivery([delivered], deps)) return true;
    deps.logger.info({ updateId: delivered.updateId }, "telegram: /stop delivered again, ignored");
    return false;
  } catch (error) {
    deps.logger.warn(
      { err: errorText(error) },
      "telegram: could not tell whether /stop was delivered before",
    );
    return true;
  }
}

/**
 * The service's reply to command `name` (`run`; undefined when it runs nothing), or
 * commandFailed(name) when it rejects (logged).
 */
export async function replyOf<Reply extends string | undefined>(
  name: string,
  run: () => Promise<Reply>,
  deps: RunDeps,
): Promise<Reply | string> {
  try {
    return await run();
  } catch (error) {
    deps.logger.error({ err: errorText(error), command: name }, "telegram: command failed");
    return commandFailed(name);
  }
}

/**
 * Run command `name` (`answer`) for the update `delivered` once its delivery is claimed, telling
 * its sender the reply; an update delivered again runs nothing (logged), and is dropped untold by
 * a stop, whose drop claims the same record.
 */
export async function runOnce(
  delivered: Delivered,
  name: string,
  answer: () => Promise<string>,
  tell: (text: string) => Promise<void>,
  deps: RunDeps,
): Promise<void> {
  const reply = await replyOf(
    name,
    async () => ((await claimDelivery([delivered], deps)) ? answer() : undefined),
    deps,
  );
  if (reply !== undefined) return tell(reply);
  deps.logger.info({ updateId: delivered.updateId }, "telegram: command delivered again, ignored");
}
