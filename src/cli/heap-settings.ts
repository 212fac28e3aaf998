/**
 * The V8 settings the `coworker` executable runs with, set from its entry point (src/cli.ts) so
 * every way of launching it (the bin, `npm start`, the Docker image) gets them:
 * - While the app starts, the young generation keeps its initial size. Start-up loads and builds
 *   tens of MB of modules and objects that live as long as the process; V8 reads their survival
 *   as a young generation too small for the load and doubles it up to its 16 MB × 2 maximum, which
 *   then stays committed (~30 MB of an idle process's RSS) until V8's memory reducer runs some
 *   16 s later. Copying objects that will all be promoted anyway gains nothing; once start-up is
 *   over the young generation grows with the load as usual.
 * - WebAssembly compiles with V8's baseline compiler (Liftoff) only. The WebAssembly that runs
 *   here is undici's HTTP parser (Node's fetch and the Slack Socket Mode client each load one;
 *   pdf.js also carries a JPEG 2000 decoder, which text extraction does not run). Its optimising
 *   recompilation peaks at ~40 MB of compiler memory in background threads, memory the C
 *   allocator keeps (~9 MB of RSS); parsing HTTP is not where the time goes (2,000 requests on
 *   loopback took as long either way, and the Slack bench's full stack showed no loss).
 * The young generation's maximum stays V8's (16 MB × 2). A larger one can only be given on the
 * command line (V8 sizes it when the heap is made) and was measured: with 64 MB for the bot and
 * the echo bot alike, the Telegram full stack at 200 chats ran at 0.61 of the echo's rate instead
 * of 0.52 (its turns' objects, alive across a scavenge when 200 are in flight, were promoted
 * less); but a burst left up to 128 MB of young generation committed until V8's memory reducer
 * ran: 10,000 sessions touched once grew RSS by 106 MB instead of 26, and 200 streaming threads
 * no longer settled flat (188 → 246 MB).
 */
import { setFlagsFromString } from "node:v8";

/** V8's default: a young generation that has to grow doubles. */
const DEFAULT_GROWTH_FACTOR = 2;

/** Start-up heap settings in force; `startUpOver` ends the start-up part (idempotent). */
export interface HeapSettings {
  readonly startUpOver: () => void;
}

/** Apply the executable's V8 settings (see the module header); call before the app loads. */
export function applyHeapSettings(): HeapSettings {
  setFlagsFromString("--liftoff-only");
  setFlagsFromString("--semi-space-growth-factor=1");
  let over = false;
  return {
    startUpOver: () => {
      if (over) return;
      over = true;
      setFlagsFromString(`--semi-space-growth-factor=${DEFAULT_GROWTH_FACTOR}`);
    },
  };
}
