/**
 * The options the hand-over lanes keep for each queued job have one hidden class, whatever the
 * channel routed (a message or a command, Slack's or Telegram's entry, with or without a position or
 * a claim) or enqueued (an album's own options): building them by spreading the entry and adding
 * `keptByStop`, which no entry holds, gave them twelve (docs/architecture.md, code on the message
 * path), and spreading it after `keptByStop` seven: one per entry shape. Checked in a fresh Node
 * process with V8's natives syntax, which compares hidden classes; the options are read where the
 * lanes keep them.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const module = (path: string) =>
  JSON.stringify(fileURLToPath(new URL(`../../../src/${path}`, import.meta.url)));

/** Queues 300 jobs of several entry shapes behind a slow one, and counts their options' hidden classes. */
const CHILD = `
  const { HandOverLanes } = await import(${module("channels/shared/hand-over-lanes.ts")});
  const pino = (await import("pino")).default;
  const sameShape = new Function("a", "b", "return %HaveSameMap(a, b)");
  const shapes = (all) => all.reduce((seen, o) => (seen.some((s) => sameShape(s, o)) ? seen : [...seen, o]), []).length;
  const lanes = new HandOverLanes({ maxWaiting: 400, logger: pino({ level: "silent" }) });
  let open;
  const slow = new Promise((resolve) => { open = resolve; });
  const tell = async () => {};
  const claimDrop = async () => true;
  const handOver = async () => {};
  lanes.enqueue("lane", () => slow, { tell, position: 0 });
  for (let i = 1; i <= 50; i++) {
    await lanes.route("lane", { kind: "message", handOver, tell });
    await lanes.route("lane", { kind: "message", position: i, tell, claimDrop, handOver });
    await lanes.route("lane", { kind: "message", handOver, tell, redelivered: () => false, claimDrop, position: i });
    await lanes.route("lane", { kind: "command", name: "new", position: i, tell, handOver });
    await lanes.route("lane", { kind: "command", name: "skill", handOver, tell, claimDrop });
    lanes.enqueue("lane", handOver, { tell, redelivered: () => false, claimDrop, position: i });
  }
  const queued = [...lanes.jobs.lanes.get("lane").jobs].map((signal) => signal.options);
  open();
  process.stdout.write(JSON.stringify({ queued: queued.length, shapes: shapes(queued) }));
`;

function runChild(): Promise<{ queued: number; shapes: number }> {
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      ["--allow-natives-syntax", "--import", "tsx", "--input-type=module", "-e", CHILD],
      { cwd: fileURLToPath(new URL("../../..", import.meta.url)) },
      (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout))),
    ),
  );
}

describe("hand-over lane job shapes", () => {
  it("gives the options of 300 queued jobs of six entry shapes one hidden class", async () => {
    expect(await runChild()).toEqual({ queued: 301, shapes: 1 });
  }, 30_000);
});
