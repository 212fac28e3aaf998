/**
 * A platform API call with a text body (JSON or form), posted on node:http(s) through a keep-alive
 * agent, its answer read whole and handed back as a TextAnswer: the part of a fetch Response that
 * Slack's WebClient reads, and its JSON at once for the Telegram channel's calls. Profiling a reply end to end showed node-fetch's
 * per-request wrapping (its body streams, headers class and abort shims) as the largest single
 * cost of a reply: a bare grammY echo bot spent 405 µs of CPU per reply on node-fetch and 245 µs
 * on this, the rest equal. Not followed: redirects (platform APIs answer a POST directly; a 3xx
 * comes back as it is). Not asked for: compression (answers are small JSON). An answer is held
 * whole in memory, so one past MAX_ANSWER_BYTES (a broken proxy's endless body) fails the call
 * rather than the process. */
import http from "node:http";
import https from "node:https";
import { urlToHttpOptions } from "node:url";
import { StartOverMap } from "./start-over-map.js";

/** What a text-body call carries: the caller's fetch options, of which these are honoured. */
export interface TextPostInit {
  readonly method?: string;
  readonly headers?: unknown;
  readonly body: string;
  readonly signal?: AbortSignalLike | null;
  /**
   * Give up after this long, answer included: a timer cleared when the call settles (an
   * AbortSignal.timeout outlives its call by the whole timeout, with a WeakRef and a finalization
   * cell kept for it).
   */
  readonly timeoutMs?: number;
}

/** The part of an AbortSignal read here (grammY's comes from a polyfill, Slack's is Node's). */
export interface AbortSignalLike {
  readonly aborted: boolean;
  addEventListener(type: "abort", listener: () => void): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/** The largest answer read: far past any Bot API or Web API answer (a page of history is a few MB). */
export const MAX_ANSWER_BYTES = 64 * 1_048_576;

/**
 * Keep-alive agents. An idle socket is closed after IDLE_SOCKET_MS, as Node's global agent does,
 * so it is not reused just as the server drops it (a reset call); a call in progress is not timed.
 */
const IDLE_SOCKET_MS = 5_000;
const agents = {
  "http:": new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
  "https:": new https.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
} as const;

/**
 * Where an http(s) URL's calls go: the request options node:http reads of it (urlToHttpOptions'
 * others it ignores; fewer options are fewer to copy, which node:http does three times a call).
 */
interface Target extends Readonly<Pick<http.RequestOptions, "hostname" | "port" | "path">> {
  readonly protocol: "http:" | "https:";
  /**
   * The headers every call to it sends, as a flat [name, value…] list: Host, and Authorization
   * for a URL with credentials. Headers given as a list are written as they are, where an object's
   * are validated and stored one by one, and node:http adds neither of these to a list.
   */
  readonly ownHeaders: readonly string[];
  /** The last frozen headers object posted with, and its headers merged with ownHeaders (headersOf). */
  frozen?: { readonly headers: object; readonly merged: readonly string[] };
}

/**
 * The URLs posted to, each parsed once: an API posts to a few dozen method URLs, and parsing one
 * into request options cost about 10 µs per call. Past MAX_TARGETS the cache starts over
 * (StartOverMap: a read stays a plain lookup, where an LRU rewrote the entry at every call).
 */
const MAX_TARGETS = 1_000;
const targets = new StartOverMap<string, Target>(MAX_TARGETS);

/** `url`'s target, or undefined for a URL that is not http(s). */
function targetOf(url: string): Target | undefined {
  const known = targets.get(url);
  if (known) return known;
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (parsed?.protocol !== "http:" && parsed?.protocol !== "https:") return undefined;
  const { hostname, port, path, auth } = urlToHttpOptions(parsed);
  const ownHeaders = ["host", parsed.host];
  if (auth) ownHeaders.push("authorization", `Basic ${Buffer.from(auth).toString("base64")}`);
  const target: Target = { protocol: parsed.protocol, hostname, port, path, ownHeaders };
  targets.set(url, target);
  return target;
}

/**
 * Post `init.body` to `url` and read the answer whole. Rejects on network failure or abort, and on
 * a URL that is not http(s): never with the URL in the message, nor in the Response (a JSON parse
 * error quotes the Response's URL), since a Bot API URL holds the bot's token.
 */
export function postText(url: string, init: TextPostInit): Promise<TextAnswer> {
  const { signal } = init;
  if (signal?.aborted) return Promise.reject(abortError());
  const target = targetOf(url);
  if (!target) return Promise.reject(new TypeError("the API URL is not an http or https URL"));
  const { protocol, hostname, port, path } = target;
  const transport = protocol === "https:" ? https : http;
  const agent = agents[protocol];
  return new Promise<TextAnswer>((resolve, reject) => {
    const request = transport.request(
      {
        protocol,
        hostname,
        port,
        path,
        method: init.method ?? "POST",
        headers: headersOf(target, init.headers, init.body),
        agent,
      },
      (answer) => {
        const chunks: Buffer[] = [];
        let bytes = 0;
        answer.on("data", (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes > MAX_ANSWER_BYTES)
            return fail(new Error(`the answer is over ${MAX_ANSWER_BYTES} bytes`));
          chunks.push(chunk);
        });
        answer.on("error", fail);
        answer.on("end", () => {
          if (!answer.complete) return fail(new Error("the connection closed before the answer ended"));
          settled();
          // An answer in one chunk, as a small one comes, is that chunk, not a copy of it.
          const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, bytes);
          resolve(
            new TextAnswer(answer.statusCode ?? 0, answer.statusMessage ?? "", answer.rawHeaders, body),
          );
        });
      },
    );
    const deadline =
      init.timeoutMs === undefined ? undefined : setTimeout(() => fail(timeoutError()), init.timeoutMs);
    function fail(error: Error): void {
      settled();
      request.destroy();
      reject(error);
    }
    function onAbort(): void {
      fail(abortError());
    }
    function settled(): void {
      signal?.removeEventListener("abort", onAbort);
      clearTimeout(deadline);
    }
    signal?.addEventListener("abort", onAbort);
    request.on("error", fail);
    request.end(init.body);
  });
}

/**
 * The caller's headers merged with the target's (mergedHeaders), then the body's length. A frozen
 * plain object (a caller's constant, as every Bot API call's) is merged once per target; a frozen
 * Headers can still change, so it is not.
 */
function headersOf(target: Target, headers: unknown, body: string): string[] {
  let merged: readonly string[];
  if (
    typeof headers === "object" &&
    headers !== null &&
    Object.isFrozen(headers) &&
    !(headers instanceof Headers)
  ) {
    if (target.frozen?.headers !== headers)
      target.frozen = { headers, merged: mergedHeaders(target.ownHeaders, headers) };
    merged = target.frozen.merged;
  } else merged = mergedHeaders(target.ownHeaders, headers);
  return [...merged, "content-length", String(Buffer.byteLength(body))];
}

/**
 * The caller's headers (a plain object or a Headers) but a length of their own, then the target's
 * the caller did not give: as node:http had them from an object, where a caller's Host or
 * Authorization stood instead of the URL's (and headersOf's body length replaces theirs).
 */
function mergedHeaders(own: readonly string[], headers: unknown): string[] {
  const flat: string[] = [];
  const given = new Set<string>();
  const add = (name: string, value: string) => {
    const lower = name.toLowerCase();
    if (lower === "content-length") return;
    given.add(lower);
    flat.push(name, value);
  };
  if (headers instanceof Headers) for (const [name, value] of headers) add(name, value);
  else if (headers && typeof headers === "object")
    // node:http validates each value as it writes it (an array's are written one by one).
    for (const name in headers) add(name, (headers as Record<string, string>)[name] as string);
  for (let i = 0; i < own.length; i += 2) {
    const name = own[i] as string;
    if (!given.has(name)) flat.push(name, own[i + 1] as string);
  }
  return flat;
}

/**
 * The answer of a text-body call, read whole: what Slack's WebClient (status, headers, `json`,
 * `text`, `arrayBuffer`) reads of a fetch Response, and the Telegram channel (`parsed`). Its headers
 * are built only when asked for; its `url` is empty, so no error built from it can quote the URL.
 */
export class TextAnswer {
  readonly url = "";
  private headerList: Headers | undefined;

  constructor(
    readonly status: number,
    readonly statusText: string,
    /** Node's flat [name, value, name, value…] list. */
    private readonly rawHeaders: readonly string[],
    private readonly body: Buffer,
  ) {}

  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  /** The answer's headers, repeated ones kept. */
  get headers(): Headers {
    if (!this.headerList) {
      const headers = new Headers();
      for (let i = 0; i + 1 < this.rawHeaders.length; i += 2)
        headers.append(this.rawHeaders[i] as string, this.rawHeaders[i + 1] as string);
      this.headerList = headers;
    }
    return this.headerList;
  }

  async text(): Promise<string> {
    return this.body.toString("utf8");
  }

  /** The body parsed as JSON; a body that is not JSON rejects with the parser's SyntaxError. */
  async json(): Promise<unknown> {
    return this.parsed();
  }

  /** The body parsed as JSON, at once; a body that is not JSON throws the parser's SyntaxError. */
  parsed(): unknown {
    return JSON.parse(this.body.toString("utf8"));
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    return new Uint8Array(this.body).buffer;
  }
}

function abortError(): Error {
  return new DOMException("The operation was aborted.", "AbortError");
}

/** What a call past its `timeoutMs` rejects with: what an AbortSignal.timeout's abort gives fetch. */
function timeoutError(): Error {
  return new DOMException("The operation was aborted due to timeout", "TimeoutError");
}
