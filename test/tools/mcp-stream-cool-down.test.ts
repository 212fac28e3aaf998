/**
 * A remote MCP server's given-up event stream, on the pace alone (a manual clock, a stand-in
 * transport): after a cool-down (1 min, doubled per give-up up to 30 min, from 1 min again once
 * the stream stayed up 30 min) it is opened again where it was given up, and said once when it is
 * back; an open the server refuses waits the next cool-down. Once the connection is closed
 * (stop), an open then in flight ends without arming another cool-down or being taken as back.
 * mcp-event-stream.test.ts has the storms and resumes against real servers.
 */
import { describe, expect, it } from "vitest";
import type { Clock } from "../../src/core/clock.js";
import {
  EventStreamPace,
  type StandingStreamEvents,
  STREAM_OPENS_PER_MINUTE,
} from "../../src/tools/mcp/event-stream-pace.js";
import { ManualClock } from "../schedules/support.js";

const MIN = 60_000;

/** A pace with the least gap `minGapMs` and cool-downs of 1 min doubled up to 30 min. */
const paceOf = (minGapMs: number, events: StandingStreamEvents, clock?: Clock) =>
  new EventStreamPace({ minGapMs, retryInitialMs: MIN, retryMaxMs: 30 * MIN }, events, clock);

const get = (lastEventId?: string): RequestInit => ({
  method: "GET",
  headers: new Headers(lastEventId === undefined ? {} : { "last-event-id": lastEventId }),
});

describe("a remote MCP server's given-up event stream", () => {
  const url = "http://mcp.example/mcp";

  /**
   * A pace on a manual clock whose transport reopens the stream as the SDK does (a GET with the
   * id as Last-Event-ID, none for ""), over `base`; `storm()` opens it until it is refused.
   */
  function pacedStorm(base: (init?: RequestInit) => Response | Promise<Response>) {
    const clock = new ManualClock(0);
    const said: string[] = [];
    const reached: string[] = [];
    const pace = paceOf(
      0,
      { givenUp: (ms) => said.push(`given up for ${ms / MIN} min`), back: () => said.push("back") },
      clock,
    );
    const paced = pace.fetch(async (_url, init) => {
      reached.push(new Headers(init?.headers).get("last-event-id") ?? "");
      return base(init);
    });
    let reopening: Promise<void> = Promise.resolve();
    pace.reopenWith((lastEventId) => {
      reopening = (async () => {
        await paced(url, get(lastEventId === "" ? undefined : lastEventId));
      })();
      return reopening;
    });
    const storm = async () => {
      for (let n = 1; ; n += 1) if ((await paced(url, get(`e${n}`))).status === 405) return;
    };
    /** Move the clock by `ms` and let a reopen it starts finish. */
    const advance = async (ms: number) => {
      clock.advance(ms);
      await reopening;
    };
    return { said, reached, storm, advance, paced, pace, clock, reopened: () => reopening };
  }

  it("is opened again after a cool-down of 1 min, doubled per give-up up to 30 min, where it was given up, saying once when it is back", async () => {
    const { said, reached, storm, advance, paced } = pacedStorm(() => new Response("", { status: 200 }));
    await storm();
    expect(said).toEqual(["given up for 1 min"]);
    expect(reached).toHaveLength(STREAM_OPENS_PER_MINUTE);
    // While it cools down, the SDK's opens are refused without reaching the server.
    expect((await paced(url, get())).status).toBe(405);
    await advance(MIN - 1);
    expect(reached).toHaveLength(STREAM_OPENS_PER_MINUTE);
    await advance(1);
    // Opened from the event id the refused reopen carried, with a fresh minute's budget.
    expect(reached.at(-1)).toBe(`e${STREAM_OPENS_PER_MINUTE + 1}`);
    expect(said).toEqual(["given up for 1 min", "back"]);
    const coolDowns = [2, 4, 8, 16, 30, 30];
    for (const minutes of coolDowns) {
      const before = reached.length;
      await storm();
      expect(reached.length - before).toBe(STREAM_OPENS_PER_MINUTE - 1);
      expect(said.at(-1)).toBe(`given up for ${minutes} min`);
      await advance(minutes * MIN);
      expect(said.at(-1)).toBe("back");
    }
    expect(said).toHaveLength(2 + 2 * coolDowns.length);
  });

  it("listened to again for 30 min, starts from a cool-down of 1 min the next time it is given up", async () => {
    const { said, storm, advance } = pacedStorm(() => new Response("", { status: 200 }));
    await storm();
    await advance(MIN);
    await storm();
    expect(said).toEqual(["given up for 1 min", "back", "given up for 2 min"]);
    await advance(2 * MIN);
    await advance(30 * MIN);
    await storm();
    expect(said.slice(3)).toEqual(["back", "given up for 1 min"]);
  });

  it("opened again but refused by the server, waits the next cool-down without a word, then comes back", async () => {
    let answer = 200;
    const { said, reached, storm, advance } = pacedStorm(() => new Response("", { status: answer }));
    await storm();
    answer = 503;
    await advance(MIN);
    expect(reached).toHaveLength(STREAM_OPENS_PER_MINUTE + 1);
    expect(said).toEqual(["given up for 1 min"]);
    answer = 200;
    await advance(2 * MIN - 1);
    expect(reached).toHaveLength(STREAM_OPENS_PER_MINUTE + 1);
    await advance(1);
    expect(reached).toHaveLength(STREAM_OPENS_PER_MINUTE + 2);
    expect(said).toEqual(["given up for 1 min", "back"]);
  });

  it("closed while its reopen after a cool-down is in flight, arms no further cool-down and is not back, the open failing or answered", async () => {
    for (const ending of ["aborted", "answered"] as const) {
      let held = false;
      let arrived: () => void = () => undefined;
      const atServer = new Promise<void>((resolve) => {
        arrived = resolve;
      });
      let answer: { resolve: (response: Response) => void; reject: (error: Error) => void } | undefined;
      const { said, reached, storm, pace, clock, reopened } = pacedStorm(() => {
        if (!held) return new Response("", { status: 200 });
        arrived();
        return new Promise<Response>((resolve, reject) => {
          answer = { resolve, reject };
        });
      });
      await storm();
      held = true;
      clock.advance(MIN);
      await atServer;
      // The connection closes; its transport's abort rejects the open in flight, or the answer comes anyway.
      pace.stop();
      if (ending === "aborted") answer?.reject(new Error("aborted"));
      else answer?.resolve(new Response("", { status: 200 }));
      await reopened().catch(() => undefined);
      await new Promise((resolve) => setImmediate(resolve));
      expect(clock.pending).toBe(0);
      expect(said).toEqual(["given up for 1 min"]);
      const opens = reached.length;
      clock.advance(30 * MIN);
      expect(reached).toHaveLength(opens);
    }
  });
});
