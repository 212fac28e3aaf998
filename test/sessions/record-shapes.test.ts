/**
 * Session records keep one shape across their versions: a turn's start and end change a record
 * (stamped as LiveSession stamps each version) without building it from a rest pattern, which in V8 gave every version a hidden class of its
 * own (a new one per turn, and megamorphic reads of every record). Checked in a fresh Node process
 * with V8's natives syntax, which compares hidden classes.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const module = (path: string) => JSON.stringify(fileURLToPath(new URL(`../../src/${path}`, import.meta.url)));

/** Builds 300 sessions' records through a turn each, and counts the hidden classes at each step. */
const CHILD = `
  const { newSessionRecord, stampedVersion } = await import(${module("sessions/session-record.ts")});
  const { withTurnStarted, withTurnFinished } = await import(${module("sessions/turn-record-changes.ts")});
  const { createRequest } = await import(${module("core/request.ts")});
  const sameShape = new Function("a", "b", "return %HaveSameMap(a, b)");
  const shapes = (records) => records.reduce((seen, r) => (seen.some((s) => sameShape(s, r)) ? seen : [...seen, r]), []).length;
  const version = (record, change) => stampedVersion(change(record), new Date().toISOString());
  const started = [];
  const finished = [];
  for (let i = 0; i < 300; i++) {
    const target = { platform: "slack", workspace: "T1", channel: "D" + i };
    const record = newSessionRecord({ id: "s" + i, target, key: "k" + i, mode: "interactive", provider: "p", model: "m", now: new Date() });
    const request = createRequest({
      prompt: "m" + i, attachments: [], messages: [], sessionId: record.id, turnId: "t" + i, platform: "slack",
      surface: "channel", provider: "p", model: "m", title: "", workspace: { root: "/w", context: "" },
      requester: { userId: "U" + i, displayName: "U" }, allowedTools: null, maxSteps: 5, runToCompletion: false,
      mode: "interactive", metadata: {},
    });
    const message = { user: { id: "U" + i, name: "U" }, text: "m" + i, files: [], sentAt: "now", dedupeKeys: ["d" + i] };
    const start = version(record, (r) => withTurnStarted(r, { message, how: "run", request, startedAt: "now", historyLength: 0 }));
    started.push(start);
    finished.push(version(start, (r) => withTurnFinished(r, undefined)));
  }
  process.stdout.write(JSON.stringify({ started: shapes(started), finished: shapes(finished) }));
`;

function runChild(): Promise<{ started: number; finished: number }> {
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      ["--allow-natives-syntax", "--import", "tsx", "--input-type=module", "-e", CHILD],
      { cwd: fileURLToPath(new URL("../..", import.meta.url)) },
      (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout))),
    ),
  );
}

describe("session record shapes", () => {
  it("a turn's start and end give 300 sessions' records one hidden class each, not one per record", async () => {
    expect(await runChild()).toEqual({ started: 1, finished: 1 });
  }, 30_000);
});
