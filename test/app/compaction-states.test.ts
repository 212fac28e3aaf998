/**
 * The session layer keeps each session's compaction state in the store, and the app's engine
 * factory hands it to the engine: a restart (a new SessionManager on the same SQLite file, so new
 * engines) starts from the summary instead of overflowing again; 'new' starts without it; a
 * stored value that is not a valid state is logged and ignored, and the turn runs.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { CompactionStates } from "../../src/app/compaction-states.js";
import { createEngineFactory } from "../../src/app/engine-factory.js";
import { ContextOverflowError, ProviderError } from "../../src/engine/provider/provider.js";
import type { Store } from "../../src/store/store.js";
import { ANA, makeHarness, message, openStore, tempDir, thread } from "../sessions/helpers/harness.js";
import { ScriptedProvider, type ScriptedStep, textStep } from "../support/scripted-provider.js";

const FIXTURES = path.resolve(import.meta.dirname, "../fixtures/store/v1");
/** sha256 of the canonical JSON of the fixtures' anchor, the assistant's "hi back". */
const HI_BACK_HASH = "1d837ec54fdf98addabe278d54618c736d7fd2c2cc30b4c50e1dbb72ec80f116";
const overflow = () => ({ error: new ContextOverflowError() });
const SUMMARY = "- Ana (U_ANA) said hello and set CONSTRAINT-X9";

const open: Store[] = [];
afterEach(async () => {
  for (const store of open.splice(0)) await store.close();
});

/** One "process": a SessionManager on `store` whose engines run `steps`, recording session ids and warnings. */
async function start(store: Store, steps: readonly ScriptedStep[]) {
  const provider = new ScriptedProvider(steps);
  const base = createEngineFactory({ provider, workspaceRoot: tempDir(), os: "TestOS" });
  const sessionIds: string[] = [];
  const warnings: string[] = [];
  const logger = pino({ level: "warn" }, { write: (line: string) => void warnings.push(line) });
  const h = await makeHarness({
    store,
    overrides: {
      logger,
      createEngine: (context) => {
        sessionIds.push(context.sessionId);
        return base(context);
      },
    },
  });
  const say = async (text: string) => {
    await h.manager.receive(message(text));
    await h.manager.idle();
  };
  return { h, provider, sessionIds, warnings, say };
}

/** A session whose second turn overflowed and was compacted, in a store then closed; its data dir. */
async function compactedSession(): Promise<{ dataDir: string; sessionId: string }> {
  const dataDir = tempDir();
  const store = await openStore(dataDir);
  const first = await start(store, [textStep("hi back"), overflow(), textStep(SUMMARY), textStep("ok")]);
  await first.say("hello");
  await first.say("second");
  first.provider.assertAllConsumed();
  await first.h.manager.drain(1_000);
  await store.close();
  return { dataDir, sessionId: first.sessionIds[0]! };
}

async function reopen(dataDir: string): Promise<Store> {
  const store = await openStore(dataDir);
  open.push(store);
  return store;
}

describe("compaction state in the store", () => {
  it.each(["compaction-state.json", "compaction-state-hashed.json"])(
    "reads the v1 stored shape %s back, its anchor as the message's hash",
    async (file) => {
      const fixture = JSON.parse(readFileSync(path.join(FIXTURES, file), "utf8")) as {
        entries: Record<string, unknown>;
      };
      const store = await openStore();
      open.push(store);
      const [[sessionId, stored]] = Object.entries(fixture.entries) as [[string, unknown]];
      await store.space("compaction").set(sessionId, stored);
      const port = new CompactionStates(store.space("compaction"), pino({ level: "silent" }));
      expect(await port.forSession(sessionId).load()).toEqual({
        covered: 2,
        anchorHash: HI_BACK_HASH,
        summary: "- Ana (U_ANA) said hello",
        trimmed: false,
      });
    },
  );

  it("after a restart the session's new engine starts from the stored summary instead of overflowing again", async () => {
    const { dataDir } = await compactedSession();
    const after = await start(await reopen(dataDir), [textStep("fits")]);
    await after.say("third");
    after.provider.assertAllConsumed();
    const request = after.provider.requests[0]!;
    expect(String(request.messages[0]?.content)).toContain(SUMMARY);
    expect(request.messages.map((m) => m.content)).not.toContain("hello");
  });

  it("'new' starts the thread's next session without the summary", async () => {
    const { dataDir, sessionId } = await compactedSession();
    const after = await start(await reopen(dataDir), [textStep("fresh")]);
    expect(await after.h.manager.command(thread(), ANA, "new", [])).toMatch(/^Started a new session/);
    await after.say("a fresh start");
    expect(after.sessionIds.at(-1)).not.toBe(sessionId);
    expect(String(after.provider.requests[0]?.messages[0]?.content)).not.toContain(SUMMARY);
  });

  it("stores the anchor as a hash, and logs a stored state built on another history at info", async () => {
    const { dataDir, sessionId } = await compactedSession();
    const store = await reopen(dataDir);
    const saved = await store.space("compaction").get(sessionId);
    expect(saved).toMatchObject({
      data: { covered: 2, anchorHash: expect.stringMatching(/^[0-9a-f]{64}$/), summary: SUMMARY },
    });
    expect(JSON.stringify(saved)).not.toContain("hi back");

    const lines: string[] = [];
    const port = new CompactionStates(
      store.space("compaction"),
      pino({ level: "info" }, { write: (line: string) => void lines.push(line) }),
    ).forSession(sessionId);
    port.notUsed("the history's message 2 is not the one it was built on");
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
      expect.objectContaining({
        level: 30,
        sessionId,
        reason: "the history's message 2 is not the one it was built on",
        msg: expect.stringContaining("built on another history"),
      }),
    ]);
  });

  it("logs why a summary call failed, fails the turn with that reason and keeps no state", async () => {
    const dataDir = tempDir();
    const store = await reopen(dataDir);
    const refused = new ProviderError(
      "bad_request",
      "The model endpoint rejected the request (HTTP 422): `max_new_tokens` must be <= 2048",
    );
    const first = await start(store, [textStep("hi back"), overflow(), { error: refused }]);
    await first.say("hello");
    await first.say("second");
    first.provider.assertAllConsumed();
    const warned = first.warnings.map(
      (line) => JSON.parse(line) as { msg: string; err?: { message?: string } },
    );
    expect(warned).toContainEqual(
      expect.objectContaining({
        msg: "a compaction summary call failed",
        err: expect.objectContaining({ message: refused.message }),
      }),
    );
    expect(first.h.outputs.for(thread()).closedTurns.at(-1)?.events).toContainEqual(
      expect.objectContaining({
        type: "error",
        message: expect.stringContaining("`max_new_tokens` must be <= 2048"),
      }),
    );
    expect(await store.space("compaction").get(first.sessionIds[0]!)).toBeUndefined();
  });

  it("logs and ignores a stored value that is not a valid state, and runs the turn on the whole history", async () => {
    const { dataDir, sessionId } = await compactedSession();
    const store = await reopen(dataDir);
    await store
      .space("compaction")
      .set(sessionId, { v: 1, kind: "compaction-state", data: { covered: "x" } });
    const after = await start(store, [textStep("fits")]);
    await after.say("third");
    after.provider.assertAllConsumed();
    expect(after.provider.requests[0]?.messages.map((m) => m.content)).toContain("hello");
    expect(after.warnings.join("\n")).toContain("compaction state could not be read");
    expect(after.h.outputs.for(thread()).closedTurns.at(-1)?.events.at(-1)).toMatchObject({
      type: "turn-completed",
      status: "completed",
    });
  });
});
