/**
 * The Web API clients the channel talks through, and how their failures are read. Two clients
 * with the bot token and the same base URL: `api` for posts, cards and final updates, `edits` for
 * best-effort live edits; and a third, createOneTryClient, the Socket Mode client's (with the app
 * token), each call tried once as its reconnect loop retries on its own terms. All reject rate-limited calls instead of pausing their whole queue
 * (the SDK default), so one busy channel never stalls the others: `callWithRetry` waits out
 * Retry-After for the calls that must land, and live edits simply skip a beat.
 */
import { webApi } from "@slack/bolt";
import type { Logger } from "pino";
import { slackFetchWithin } from "./slack-fetch.js";
import { sdkLogger } from "./slack-logger.js";

export type WebClient = InstanceType<typeof webApi.WebClient>;

export interface SlackClients {
  readonly api: WebClient;
  readonly edits: WebClient;
}

export interface ClientOptions {
  readonly token: string;
  /** Base URL with a trailing slash, e.g. "https://slack.com/api/". */
  readonly slackApiUrl: string;
  readonly logger: Logger;
}

/** Ensure the base URL ends in "/" (the SDK appends method names to it). */
export function withTrailingSlash(url: string): string {
  return url.endsWith("/") ? url : `${url}/`;
}

/**
 * A client whose every call ends at `deadlineMs` (the fetch's deadline, slackFetchWithin, not the
 * SDK's own timeout) and is tried `retries` more times by the SDK itself.
 */
function webClient(options: ClientOptions, deadlineMs: number, retries: number): WebClient {
  return new webApi.WebClient(options.token, {
    slackApiUrl: withTrailingSlash(options.slackApiUrl),
    rejectRateLimitedCalls: true,
    logger: sdkLogger(options.logger, "slack-web"),
    timeout: 0,
    fetch: slackFetchWithin(deadlineMs),
    retryConfig: retries === 0 ? { retries: 0 } : { retries, factor: 2, minTimeout: 200, maxTimeout: 2_000 },
  });
}

/**
 * A client whose calls are tried once (30 s each), for a caller that retries on its own terms
 * (the Socket Mode client's reconnect loop): the SDK's retries inside it would multiply its tries.
 */
export function createOneTryClient(options: ClientOptions): WebClient {
  return webClient(options, 30_000, 0);
}

/** Build the two clients: `api` 30 s a call with two quick retries, `edits` 10 s and one try. */
export function createClients(options: ClientOptions): SlackClients {
  return { api: webClient(options, 30_000, 2), edits: webClient(options, 10_000, 0) };
}

/** Slack's error code of a failed call ("ratelimited" for 429s), or undefined for other failures. */
export function slackErrorCode(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const e = error as { code?: unknown; data?: { error?: unknown } };
  if (e.code === webApi.ErrorCode.RateLimitedError) return "ratelimited";
  if (e.code === webApi.ErrorCode.PlatformError && typeof e.data?.error === "string") return e.data.error;
  return undefined;
}

/** Milliseconds Slack asked us to wait (Retry-After), for a rate-limited failure. */
export function retryAfterMs(error: unknown): number | undefined {
  if (slackErrorCode(error) !== "ratelimited") return undefined;
  const seconds = (error as { retryAfter?: unknown }).retryAfter;
  return typeof seconds === "number" && Number.isFinite(seconds) ? Math.max(0, seconds) * 1_000 : 1_000;
}

/** A short description of any failure, for logs. */
export function describeError(error: unknown): string {
  const code = slackErrorCode(error);
  if (code) return code;
  return error instanceof Error ? error.message : String(error);
}

export interface RetryOptions {
  /** Attempts in total (default 5). */
  readonly attempts?: number;
  /** Longest single wait honoured (default 60 s); longer Retry-After values fail the call. */
  readonly maxWaitMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Run `call`, waiting out Retry-After and trying again while Slack rate-limits it. */
export async function callWithRetry<T>(call: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const attempts = options.attempts ?? 5;
  const maxWaitMs = options.maxWaitMs ?? 60_000;
  const sleep = options.sleep ?? defaultSleep;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await call();
    } catch (error) {
      const wait = retryAfterMs(error);
      if (wait === undefined || attempt >= attempts || wait > maxWaitMs) throw error;
      await sleep(wait);
    }
  }
}
