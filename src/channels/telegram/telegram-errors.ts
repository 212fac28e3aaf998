/**
 * Classifies Bot API failures by Telegram's error texts, so callers can react to the few that
 * have a right answer (re-send as plain text, treat as done, fall back, back off) instead of
 * matching strings all over the adapter.
 */
import { GrammyError } from "grammy";

function described(error: unknown, pattern: RegExp, code = 400): boolean {
  return error instanceof GrammyError && error.error_code === code && pattern.test(error.description);
}

/** "Bad Request: can't parse entities: …" — our HTML was rejected. */
export function isParseError(error: unknown): boolean {
  return described(error, /can't parse entities/i);
}

/**
 * The message's keyboard was refused: too many or too long buttons ("reply markup is too long"),
 * a button Telegram will not take ("BUTTON_DATA_INVALID", "BUTTON_TEXT_INVALID"), and the like.
 */
export function isKeyboardRefused(error: unknown): boolean {
  return described(error, /reply markup|keyboard|BUTTON_|REPLY_MARKUP/i);
}

/** "Bad Request: message is not modified" — the edit is already in place. */
export function isNotModified(error: unknown): boolean {
  return described(error, /message is not modified/i);
}

/** The message to edit is gone or can no longer be edited (deleted, too old). */
export function isMessageGone(error: unknown): boolean {
  return described(error, /message to edit not found|message can't be edited|MESSAGE_ID_INVALID/i);
}

/**
 * The forum topic is closed ("TOPIC_CLOSED"), deleted ("TOPIC_DELETED", "message thread not
 * found"): nothing can be sent there until it is reopened.
 */
export function isTopicGone(error: unknown): boolean {
  return described(error, /TOPIC_CLOSED|TOPIC_DELETED|message thread not found/i);
}

/** The Bot API server does not know the method (older or local server), or rejects drafts here. */
export function isUnsupported(error: unknown): boolean {
  return (
    (error instanceof GrammyError && error.error_code === 404) ||
    described(error, /method not found|TEXTDRAFT_PEER_INVALID|not supported/i)
  );
}

/** 409: another process is polling this bot token (or a webhook is set). */
export function isConflict(error: unknown): boolean {
  return error instanceof GrammyError && error.error_code === 409;
}

/** 401: the bot token is wrong or revoked; retrying cannot help. */
export function isUnauthorized(error: unknown): boolean {
  return error instanceof GrammyError && error.error_code === 401;
}

/** A short, log-friendly description of any failure. */
export function errorText(error: unknown): string {
  if (error instanceof GrammyError) return `${error.method}: ${error.error_code} ${error.description}`;
  return error instanceof Error ? error.message : String(error);
}
