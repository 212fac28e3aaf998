/**
 * How often a remote MCP server's event streams may be opened. The SDK opens a stream (an HTTP
 * GET) again whenever the server ends it, after the delay the server's `retry:` field asks for,
 * and counts its attempts afresh after each clean end: a server that answered every GET with
 * `retry: 0` and ended it had the client reopen it as fast as the event loop allowed, forever and
 * unlogged (2,000 requests in seconds). A GET is one of two kinds:
 * - A resume of a running tool call's answer (its Last-Event-ID is the call's latest event id, as
 *   the SDK reports it): the MCP specification's SSE polling has a server end a call's stream after
 *   an event carrying only an id and the client come back for the rest, so a long call resumes
 *   many times. Each resume waits until at least `minGapMs` after the call's one before; past
 *   RESUMES_PER_MINUTE resumes of the server's calls within a minute, the one over is answered 405
 *   (the SDK then stops resuming it) and its call is failed: the server and its other calls go on.
 *   A resume of a call that has ended is answered 405 at once, as nobody waits for it.
 * - Any other GET, the standing stream's opens (also its reopens, which carry its last event id):
 *   each waits until at least `minGapMs` after the one before; once more than
 *   STREAM_OPENS_PER_MINUTE fall within a minute, it is answered 405 (the SDK takes it as "no
 *   stream" and stops) and the stream is given up (`givenUp`): tool calls go on over POST, so the
 *   server is not stopped for it. A given-up stream is not given up for good, as a server that
 *   stormed once (a restart behind a proxy) may behave later: after a cool-down (`retryInitialMs`,
 *   doubled on each give-up up to `retryMaxMs`, from the first again once the stream stayed up
 *   `retryMaxMs`) the transport is asked to open it again where it was given up (`reopenWith`),
 *   with a fresh minute's budget; once the server answers that open, the stream is back (`back`).
 *   Until then every open is answered 405, and one that fails waits for the next cool-down.
 * Time and timers are the injected clock's.
 */
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { backoffMs } from "../../core/backoff.js";
import { type Clock, systemClock, type TimerHandle } from "../../core/clock.js";

/** Opens of the standing event stream within a minute past which it is no longer opened. */
export const STREAM_OPENS_PER_MINUTE = 10;
/** Resumes of a server's calls within a minute past which the call resuming is failed. */
export const RESUMES_PER_MINUTE = 120;
const MINUTE_MS = 60_000;
/** Ids of ended calls remembered, so that their resumes are refused at once. */
const ENDED_CALLS_KEPT = 64;

/** The pace's timing (see the module comment). */
export interface StreamPacing {
  /** Least time between two opens of the standing stream, or two resumes of one call. */
  readonly minGapMs: number;
  /** First cool-down of a given-up standing stream, doubled on each give-up … */
  readonly retryInitialMs: number;
  /** … up to this. */
  readonly retryMaxMs: number;
}

/** What the pace reports of the standing stream. */
export interface StandingStreamEvents {
  /** It was given up and is opened again in `retryInMs`. */
  readonly givenUp: (retryInMs: number) => void;
  /** The server answered its open after a cool-down: it is listened to again. */
  readonly back: () => void;
}

/** Opens the standing stream again from `lastEventId` (none when empty), as the transport does. */
export type ReopenStanding = (lastEventId: string) => Promise<void>;

/** One tool call's stream, as `EventStreamPace.follow` gives it. */
export interface FollowedCall {
  /** Pass as the request's `onresumptiontoken`: the SDK reports each event id of the call's stream. */
  readonly onresumptiontoken: (eventId: string) => void;
  /** The call has settled: its stream is resumed no more. */
  readonly end: () => void;
}

interface RunningCall {
  eventId: string | undefined;
  lastResumeAt: number;
  readonly fail: (why: string) => void;
}

/** Resolves after `ms` (at once if not positive), or rejects with the signal's reason once it aborts. */
function pause(clock: Clock, ms: number, signal: AbortSignal | null | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    if (ms <= 0) {
      resolve();
      return;
    }
    const aborted = () => {
      clock.clearTimer(timer);
      reject(signal?.reason);
    };
    const timer = clock.setTimer(() => {
      signal?.removeEventListener("abort", aborted);
      resolve();
    }, ms);
    signal?.addEventListener("abort", aborted, { once: true });
  });
}

/** Takes a slot at `at` in a minute's `times` unless `limit` are taken already. */
function takeSlot(times: number[], at: number, limit: number): boolean {
  while (times.length > 0 && (times[0] ?? 0) <= at - MINUTE_MS) times.shift();
  if (times.length >= limit) return false;
  times.push(at);
  return true;
}

const refused = (why: string) =>
  new Response(null, { status: 405, statusText: `event stream refused: ${why}` });

/**
 * Where the standing stream is: listened to, given up for a cool-down, being opened again after
 * one, or never again (the connection closed).
 */
type Standing = "listening" | "cooling" | "retrying" | "stopped";

/** The pace of one connection's event streams (see the module comment). */
export class EventStreamPace {
  private readonly opens: number[] = [];
  private readonly resumes: number[] = [];
  private readonly running = new Map<string, RunningCall>();
  private readonly ended = new Set<string>();
  private standing: Standing = "listening";
  /** Give-ups since the stream last stayed up `retryMaxMs`: the next cool-down's doubling. */
  private giveUps = 0;
  private backAt: number | undefined;
  /** The last event id of the given-up stream, where it is opened again ("" for none). */
  private resumeFrom = "";
  private retryTimer: TimerHandle | undefined;
  private reopen: ReopenStanding | undefined;

  constructor(
    private readonly pacing: StreamPacing,
    private readonly events: StandingStreamEvents,
    private readonly clock: Clock = systemClock,
  ) {}

  /** How the transport opens the standing stream again after a cool-down. */
  reopenWith(reopen: ReopenStanding): void {
    this.reopen = reopen;
  }

  /** The connection is gone: no more cool-downs or opens. */
  stop(): void {
    this.standing = "stopped";
    if (this.retryTimer !== undefined) this.clock.clearTimer(this.retryTimer);
    this.retryTimer = undefined;
  }

  /** Whether the connection is gone (stop): an await may have seen it happen. */
  private stopped(): boolean {
    return this.standing === "stopped";
  }

  /** Follow one tool call; `fail` is called when a resume of it runs over the budget. */
  follow(fail: (why: string) => void): FollowedCall {
    const call: RunningCall = { eventId: undefined, lastResumeAt: Number.NEGATIVE_INFINITY, fail };
    return {
      onresumptiontoken: (eventId) => {
        if (call.eventId !== undefined) this.running.delete(call.eventId);
        call.eventId = eventId;
        this.running.set(eventId, call);
      },
      end: () => {
        if (call.eventId === undefined || this.running.get(call.eventId) !== call) return;
        this.running.delete(call.eventId);
        this.ended.add(call.eventId);
        for (const old of this.ended) {
          if (this.ended.size <= ENDED_CALLS_KEPT) break;
          this.ended.delete(old);
        }
      },
    };
  }

  /** `base` with its GETs paced and counted. */
  fetch(base: FetchLike): FetchLike {
    return async (url, init) => {
      if ((init?.method ?? "GET").toUpperCase() !== "GET") return base(url, init);
      const lastEventId = new Headers(init?.headers).get("last-event-id");
      const call = lastEventId === null ? undefined : this.running.get(lastEventId);
      if (call) return this.resume(call, base, url, init);
      if (lastEventId !== null && this.ended.has(lastEventId)) return refused("its call has ended");
      return this.open(lastEventId, base, url, init);
    };
  }

  private async resume(call: RunningCall, base: FetchLike, ...request: Parameters<FetchLike>) {
    const at = Math.max(this.clock.now(), call.lastResumeAt + this.pacing.minGapMs);
    if (!takeSlot(this.resumes, at, RESUMES_PER_MINUTE)) {
      call.fail(`resumed its calls' answers too often (over ${RESUMES_PER_MINUTE} times a minute)`);
      return refused("resumed too often");
    }
    call.lastResumeAt = at;
    await pause(this.clock, at - this.clock.now(), request[1]?.signal);
    return base(...request);
  }

  private async open(lastEventId: string | null, base: FetchLike, ...request: Parameters<FetchLike>) {
    if (this.standing === "cooling" || this.standing === "stopped") return refused("reopened too often");
    // Each open takes its slot before it waits, so two at once are spaced as well.
    const last = this.opens.at(-1);
    const at = Math.max(this.clock.now(), last === undefined ? 0 : last + this.pacing.minGapMs);
    if (!takeSlot(this.opens, at, STREAM_OPENS_PER_MINUTE)) {
      this.giveUp(lastEventId);
      return refused("reopened too often");
    }
    await pause(this.clock, at - this.clock.now(), request[1]?.signal);
    if (this.standing !== "retrying") return base(...request);
    let response: Response;
    try {
      response = await base(...request);
    } catch (error) {
      this.coolDown();
      throw error;
    }
    // Closed while the open was in flight: it is the old connection's, and nothing follows it.
    if (this.stopped()) return response;
    if (!response.ok) {
      this.coolDown();
      return response;
    }
    this.standing = "listening";
    this.backAt = this.clock.now();
    this.events.back();
    return response;
  }

  private giveUp(lastEventId: string | null): void {
    this.resumeFrom = lastEventId ?? "";
    if (this.backAt !== undefined && this.clock.now() - this.backAt >= this.pacing.retryMaxMs)
      this.giveUps = 0;
    this.events.givenUp(this.coolDown());
  }

  /**
   * Waits the next cool-down, then opens the stream again; returns the wait. Once stopped, nothing
   * is armed: an open in flight when the connection closed ends (its abort) without a retry.
   */
  private coolDown(): number {
    const retryInMs = backoffMs(this.giveUps, this.pacing.retryInitialMs, this.pacing.retryMaxMs);
    if (this.stopped()) return retryInMs;
    this.giveUps += 1;
    this.standing = "cooling";
    this.retryTimer = this.clock.setTimer(() => this.retry(), retryInMs);
    return retryInMs;
  }

  private retry(): void {
    this.retryTimer = undefined;
    if (this.standing !== "cooling") return;
    this.standing = "retrying";
    this.opens.length = 0;
    const reopen = this.reopen ?? (async () => undefined);
    // An open that never reached the server (refused before it, or thrown before its GET) waits
    // for the next cool-down too; one that did has been judged in `open` already.
    void reopen(this.resumeFrom)
      .catch(() => undefined)
      .finally(() => {
        if (this.standing === "retrying") this.coolDown();
      });
  }
}
