import { Writable } from "node:stream";
import pino from "pino";
import { describe, expect, it } from "vitest";
import type { ThreadTarget } from "../../src/core/thread-target.js";
import { ThreadOutputs } from "../../src/sessions/thread-outputs.js";
import { RecordingOutputs } from "../support/recording-output.js";

const SLACK: ThreadTarget = { platform: "slack", workspace: "T1", channel: "C1", thread: "1.1" };
const TELEGRAM: ThreadTarget = { platform: "telegram", workspace: "", channel: "42", thread: "" };

function logged() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
      callback();
    },
  });
  return { lines, logger: pino({ level: "warn" }, sink) };
}

describe("ThreadOutputs", () => {
  it("reaches a thread through its platform's registered factory", () => {
    const { logger } = logged();
    const outputs = new ThreadOutputs(logger);
    const recording = new RecordingOutputs();
    outputs.register("slack", recording.factory);
    expect(outputs.outputFor(SLACK)).toBe(recording.for(SLACK));
  });

  it("answers undefined, with a warning, for a platform that registered none", async () => {
    const { lines, logger } = logged();
    const outputs = new ThreadOutputs(logger);
    expect(outputs.outputFor(TELEGRAM)).toBeUndefined();
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toMatchObject([{ platform: "telegram", msg: "no output registered for platform" }]);
  });

  it("lets a later registration replace an earlier one", () => {
    const { logger } = logged();
    const outputs = new ThreadOutputs(logger);
    const first = new RecordingOutputs();
    const second = new RecordingOutputs();
    outputs.register("slack", first.factory);
    outputs.register("slack", second.factory);
    expect(outputs.outputFor(SLACK)).toBe(second.for(SLACK));
  });
});
