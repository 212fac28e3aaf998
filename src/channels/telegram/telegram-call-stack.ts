/**
 * The transformers every Bot API client of the Telegram channel runs its calls through, in their
 * order: a deadline per attempt (innermost, it also posts every call but uploads itself:
 * telegram-deadlines.ts), the send throttle, a bounded retry of 429 and 5xx answers with a few
 * retries of network failures in each of its attempts, and the redirect of calls to an upgraded
 * group. The channel's bot client and its lookup client (directory, membership) share the same
 * stack; the lookup client's retries network failures only.
 */
import type { Api } from "grammy";
import { answerRetryTransformer, type CallRetry } from "./telegram-answer-retry.js";
import { type BotApiEndpoint, type CallDeadlines, deadlineTransformer } from "./telegram-deadlines.js";
import type { ChatMigrations } from "./telegram-migrations.js";
import { networkRetryTransformer } from "./telegram-network-retry.js";
import { type SendScheduler, throttleTransformer } from "./telegram-throttle.js";

/** 429 / 5xx retries unless the channel's options say otherwise. */
export const DEFAULT_RETRY: CallRetry = Object.freeze({ maxRetryAttempts: 5, maxDelaySeconds: 60 });

/** The parts every Bot API client of the channel shares. */
export interface CallStack {
  /** Where the calls go (the client's apiRoot and token). */
  readonly endpoint: BotApiEndpoint;
  readonly deadlines: CallDeadlines | undefined;
  readonly scheduler: SendScheduler;
  readonly migrations: ChatMigrations;
  /** Bounded retry of 429 and 5xx answers; none when absent (the call fails at once). */
  readonly retry?: CallRetry;
}

/** Installs the channel's transformers on `api`, innermost first. */
export function useCallStack(
  api: Api,
  { endpoint, deadlines, scheduler, migrations, retry }: CallStack,
): void {
  // Innermost, so each attempt's deadline runs from when it is sent, not from its wait for a slot.
  api.config.use(deadlineTransformer(endpoint, deadlines));
  api.config.use(throttleTransformer(scheduler));
  // Network failures — a call past its deadline is one — are retried a few times within each
  // attempt of the retries of 429 and 5xx answers, when there are those (each attempt books its
  // send slot again and gets a deadline of its own; polling retries network failures visibly).
  api.config.use(retry ? answerRetryTransformer(retry) : networkRetryTransformer());
  // Outermost: a call to an upgraded group goes to its supergroup, and a send that meets the
  // upgrade's 400 is re-sent there once, through the retries above (telegram-migrations.ts).
  api.config.use(migrations.transformer());
}
