/**
 * How long a Bot API call may go unanswered, by what it is, as a grammY API transformer. grammY's
 * client gives every call 500 s, so a call whose connection hangs (the server took it and never
 * answers) held a turn's reply — and with it the session — for over eight minutes. Here an ordinary
 * call gets 30 s (as Slack's Web API calls do); the calls whose use passes within seconds get 10 s
 * (as Slack's live edits do): message edits, chat actions ("typing…" lasts 5 s), draft previews
 * and callback answers (too old after ~10–15 s); an upload 5 minutes (the Bot API takes up to 50 MB,
 * about 200 s at 2 Mbit/s up); getUpdates the long-poll timeout it asks for plus a margin, since
 * Telegram answers a quiet poll only then.
 *
 * Installed innermost, under the throttle: a call's wait for a send slot does not count, and each
 * attempt of the network retry gets a deadline of its own. A call past its deadline fails with
 * BotApiTimeout — an HttpError, so it is retried like the network failure it is — naming the
 * method and the deadline, never the URL (it holds the bot token). The caller's own signal still
 * aborts the call.
 *
 * A call with a JSON body (every call but uploads) ends here: it is posted here (postJsonCall)
 * with its deadline as the post's own timeout, and fails as grammY's client fails it, with an
 * HttpError. grammY's client would race each call against its own 500 s timeout and a stream-error
 * promise, under an abort controller of its own: the deadline leaves those nothing to do. Uploads,
 * whose multipart bodies grammY streams, still go through its client, raced against their
 * deadline; its own timeout stays behind them, which is why a deadline is at most MAX_DEADLINE_MS.
 */
import { HttpError, InputFile, type Transformer } from "grammy";
import { StartOverMap } from "../shared/start-over-map.js";
import { isTimeout, postJsonCall } from "./telegram-json-call.js";

/** Deadlines in ms by kind of call (see the module comment). */
export interface CallDeadlines {
  /** Every call not named below. */
  readonly callMs: number;
  /** Message edits, chat actions, draft previews and callback answers. */
  readonly editMs: number;
  /** Calls that upload a file (multipart: sendDocument, sendPhoto, … carrying an InputFile). */
  readonly uploadMs: number;
  /** getUpdates: added to the long-poll timeout the call asks for. */
  readonly pollMarginMs: number;
}

export const DEFAULT_CALL_DEADLINES: CallDeadlines = Object.freeze({
  callMs: 30_000,
  editMs: 10_000,
  uploadMs: 5 * 60_000,
  pollMarginMs: 10_000,
});

/**
 * grammY's own timeout of a call through its client (its default): an upload past it ends then,
 * whatever its deadline. Every deadline is kept within it, the JSON calls' too.
 */
export const MAX_DEADLINE_MS = 500_000;

/** grammY types signals as the abort-controller polyfill's; it only listens to them, as to Node's. */
type ApiSignal = Parameters<Transformer>[3];

/**
 * The abort signal an upload is handed: all grammY's client does with one is read `aborted` and add
 * and remove an "abort" listener (linking it to the controller of its own fetch), so this is all
 * it is. A Node AbortController per call cost a Telegram reply about 7 % of its throughput. It is
 * linked to the caller's signal by a listener rather than with AbortSignal.any, which ignores the
 * abort-controller polyfill signals that grammY's runner passes (checked on Node 20).
 */
class CallAbort {
  aborted = false;
  private listeners: Array<() => void> = [];

  addEventListener(_type: "abort", listener: () => void): void {
    this.listeners.push(listener);
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    this.listeners = this.listeners.filter((known) => known !== listener);
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    for (const listener of this.listeners) listener();
  }
}

const QUICK_CALLS = /^(editMessage|sendChatAction$|sendMessageDraft$|answerCallbackQuery$)/;

/** A Bot API call that got no answer within its deadline (a network failure: an HttpError). */
export class BotApiTimeout extends HttpError {
  /** Node's code for a connection that timed out, which failure classifiers read as a network failure. */
  readonly code = "ETIMEDOUT";

  constructor(
    readonly method: string,
    readonly deadlineMs: number,
  ) {
    super(`${method}: no answer from the Bot API within ${deadlineMs / 1000} s`, undefined);
    this.name = "BotApiTimeout";
  }
}

/** Whether a payload carries a file to upload anywhere in it (grammY then sends it as multipart). */
function carriesFile(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (value instanceof InputFile) return true;
  for (const key in value) if (carriesFile((value as Record<string, unknown>)[key])) return true;
  return false;
}

/**
 * The deadline in ms for one call of `method` with `payload`; `upload` says whether the payload
 * carries a file, for a caller that has looked already.
 */
export function deadlineOf(
  method: string,
  payload: unknown,
  deadlines: CallDeadlines,
  upload = carriesFile(payload),
): number {
  if (upload) return deadlines.uploadMs;
  if (method === "getUpdates") {
    const timeout = Number((payload as { timeout?: unknown } | undefined)?.timeout ?? 0);
    return (Number.isFinite(timeout) ? timeout * 1000 : 0) + deadlines.pollMarginMs;
  }
  return QUICK_CALLS.test(method) ? deadlines.editMs : deadlines.callMs;
}

/**
 * The call of `method`'s `answer`, or BotApiTimeout once `deadlineMs` pass first: whichever comes
 * first settles it. At the deadline the call is also aborted (`abort` ends it), after the timeout
 * is given, so the abort's own failure never wins. Either way, as it settles, the timer is cleared
 * and `abort` is unlinked from the caller's `signal`.
 *
 * One promise per upload, on purpose: the answer's handlers and the timer settle it directly,
 * where racing the answer against a timer promise (Promise.race) would make two more.
 */
function settleFirst<T>(
  answer: Promise<T>,
  method: string,
  deadlineMs: number,
  abort: () => void,
  signal: ApiSignal | undefined,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", abort);
      reject(new BotApiTimeout(method, deadlineMs));
      abort();
    }, deadlineMs);
    const settled = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", abort);
    };
    answer.then(
      (value) => {
        settled();
        resolve(value);
      },
      (error: unknown) => {
        settled();
        reject(error);
      },
    );
  });
}

/** The most method URLs a client keeps built (the Bot API has under 200 methods). */
const MAX_METHODS = 1_000;

/** Where a client's calls go: grammY posts method `m` to `${apiRoot}/bot${token}/m`. */
export interface BotApiEndpoint {
  readonly apiRoot: string;
  readonly token: string;
}

/**
 * A grammY API transformer that ends each call at its deadline with BotApiTimeout (aborting the
 * request), and passes the caller's abort on to it: the end of the chain for a call with a JSON
 * body, which it posts to `endpoint` (see the module comment).
 */
export function deadlineTransformer(
  endpoint: BotApiEndpoint,
  deadlines: CallDeadlines = DEFAULT_CALL_DEADLINES,
): Transformer {
  const methodRoot = `${endpoint.apiRoot}/bot${endpoint.token}/`;
  // Each method's URL built once: a URL built anew is a new string, hashed again by every lookup
  // of it (postText's parsed URLs). Calls name a few dozen methods; past MAX_METHODS it starts over.
  const methodUrls = new StartOverMap<string, string>(MAX_METHODS);
  const urlOf = (method: string): string => {
    let url = methodUrls.get(method);
    if (url === undefined) {
      url = methodRoot + method;
      methodUrls.set(method, url);
    }
    return url;
  };
  return (prev, method, payload, signal) => {
    const upload = carriesFile(payload);
    const deadlineMs = deadlineOf(method, payload, deadlines, upload);
    if (upload) return uploadWithin(prev, method, payload, deadlineMs, signal);
    return postJsonCall(urlOf(method), payload, {
      signal,
      timeoutMs: deadlineMs,
      failure: (error) =>
        isTimeout(error)
          ? new BotApiTimeout(method, deadlineMs)
          : new HttpError(`Network request for '${method}' failed!`, error),
    });
  };
}

/** An upload through grammY's client, ended at `deadlineMs` (see settleFirst). */
function uploadWithin(
  prev: Parameters<Transformer>[0],
  method: string,
  payload: unknown,
  deadlineMs: number,
  signal: ApiSignal | undefined,
): ReturnType<Transformer> {
  const request = new CallAbort();
  const abort = () => request.abort();
  if (signal?.aborted) abort();
  const answer = prev(method as never, payload as never, request as unknown as ApiSignal);
  signal?.addEventListener("abort", abort);
  // The deadline also ends a call whose fetch would not heed the abort.
  return settleFirst(answer, method, deadlineMs, abort, signal);
}
