/**
 * The thread commands' parser, as the channels that read it from the session layer import it: it
 * lives in core (core/text-commands.ts), where ask_user's schema also reads it to refuse option
 * labels a person's typed copy would run as a command.
 */
export { COMMAND_NAMES, isAnotherBotsCommand, parseTextCommand } from "../core/text-commands.js";
