/**
 * How a Telegram command runs: once per update, never failing in silence. Every command the
 * channel runs — a service command (one the session layer answers: `service.command()`), /stop
 * among them, and an access command (/start, /pair, /pairs, /unpair) — claims its update here
 * (runOnce), in the session layer's record of deliveries (telegram-hand-over.ts claimDelivery), as a
 * message's hand-over and a stop's drop claim theirs, so an update Telegram delivers again (to any
 * process) runs nothing: a /skill's turn is not run twice, a /pair is not approved twice, and a
 * /stop delivered again does not stop a newer turn. It is claimed when it runs, never before: a
 * command waiting in its sender's lane that a stopping channel drops is left unclaimed for the
 * update's redelivery to run. A /stop the record cannot place still runs: one that comes twice
 * stops at worst a turn begun between them, one dropped would leave the turn she stopped running.
 * Any other command that could not run (the record unreachable, the command failing) is answered
 * commandFailed (replyOf), logged.
 */
import { errorText } from "./telegram-errors.js";
import { claimDelivery, type Delivered, type HandOverDeps } from "./telegram-hand-over.js";

/** What a command run needs: the record of deliveries (the service), the bot's name, a logger. */
type RunDeps = Pick<HandOverDeps, "service" | "bot" | "logger">;

/** What a person is told when their command could not run (see module comment). */
const commandFailed = (name: string): string => `Sorry, /${name} did not work. Please try again.`;

/**
 * Run command `name` (`run`) for the update `delivered` once its delivery is claimed: its result,
 * or undefined when it ran nothing. An update delivered again runs nothing (logged), and is
 * dropped untold by a stop, whose drop claims the same record. When the record cannot say, a /stop
 * runs and any other command's sender is told commandFailed (`tell`; see module comment).
 */
export async function runOnce<Result>(
  delivered: Delivered,
  name: string,
  run: () => Promise<Result>,
  tell: (text: string) => Promise<void>,
  deps: RunDeps,
): Promise<Result | undefined> {
  let first: boolean;
  try {
    first = await claimDelivery([delivered], deps);
  } catch (error) {
    if (name !== "stop") {
      deps.logger.error({ err: errorText(error), command: name }, "telegram: command could not be claimed");
      await tell(commandFailed(name));
      return undefined;
    }
    deps.logger.warn(
      { err: errorText(error) },
      "telegram: could not tell whether /stop was delivered before",
    );
    first = true;
  }
  if (first) return run();
  deps.logger.info(
    { updateId: delivered.updateId, command: name },
    "telegram: command delivered again, ignored",
  );
  return undefined;
}

/** The reply to command `name` (`answer`), or commandFailed(name) when it rejects (logged). */
export async function replyOf(name: string, answer: () => Promise<string>, deps: RunDeps): Promise<string> {
  try {
    return await answer();
  } catch (error) {
    deps.logger.error({ err: errorText(error), command: name }, "telegram: command failed");
    return commandFailed(name);
  }
}
