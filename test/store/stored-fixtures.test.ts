/**
 * Stored-shape fixtures: every file in test/fixtures/store/v<N>/ is data exactly as an older (or
 * the current) build wrote it. These tests load them with today's code, so a change that would
 * break existing users' data fails here first.
 */
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createStore } from "../../src/store/create-store.js";
import { HistoryLog } from "../../src/store/history-log.js";
import { STORE_NAMESPACES, type Store } from "../../src/store/store.js";
import { SCHEMA_VERSION } from "../../src/store/versioned.js";

const FIXTURES = path.resolve(import.meta.dirname, "../fixtures/store");

const fixtureSchema = z.object({
  description: z.string().min(1),
  space: z.enum(STORE_NAMESPACES),
  entries: z.record(
    z.string(),
    z.object({ v: z.number().int(), kind: z.string().min(1), data: z.unknown() }),
  ),
});
type Fixture = z.infer<typeof fixtureSchema>;

function readFixture(version: number, name: string): Fixture {
  return fixtureSchema.parse(JSON.parse(readFileSync(path.join(FIXTURES, `v${version}`, name), "utf8")));
}

/** A memory store holding the fixture's entries verbatim. */
async function seeded(fixture: Fixture): Promise<Store> {
  const store = await createStore({ url: "memory:", dataDir: os.tmpdir() });
  for (const [key, value] of Object.entries(fixture.entries))
    await store.space(fixture.space).set(key, value);
  return store;
}

describe("stored-shape fixtures", () => {
  it("keeps a fixture directory for every schema version up to the current one", () => {
    const versions = readdirSync(FIXTURES).filter((name) => /^v\d+$/.test(name));
    expect(versions.sort()).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => `v${i + 1}`));
  });

  it.each(
    readdirSync(FIXTURES)
      .filter((name) => /^v\d+$/.test(name))
      .flatMap((dir) => readdirSync(path.join(FIXTURES, dir)).map((file) => [dir, file] as const)),
  )("%s/%s is a well-formed fixture whose records carry that schema version", (dir, file) => {
    const version = Number(dir.slice(1));
    const fixture = readFixture(version, file);
    for (const record of Object.values(fixture.entries)) expect(record.v).toBe(version);
  });

  it("v1 history loads with today's HistoryLog, and the head's count wins over a stale page tail", async () => {
    const store = await seeded(readFixture(1, "history.json"));
    const history = new HistoryLog(store.space("history"));
    const session = "slack:T0001:C0001:1700000000.000100";
    const { messages, count } = await history.open(session);
    expect(count).toBe(5);
    expect(messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant"]);
    expect(messages[2]).toMatchObject({ content: null, tool_calls: [{ id: "call_1", type: "function" }] });
    expect(messages[4]?.content).toBe("The repo holds README.md and src.");
    await (await history.open(session)).append({ role: "user", content: "thanks" });
    const { messages: after } = await history.open(session);
    expect(after).toHaveLength(6);
    expect(after[5]).toEqual({ role: "user", content: "thanks" });
    await store.close();
  });

  it("v1 history with attachment records loads them back on the user message and the tool result", async () => {
    const store = await seeded(readFixture(1, "history-attachments.json"));
    const history = new HistoryLog(store.space("history"));
    const { messages } = await history.open("telegram:tg:1001");
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(messages[0]).toMatchObject({
      attachments: [{ kind: "image", mediaType: "image/jpeg", width: 1280, height: 960, bytes: 48213 }],
    });
    expect(messages[2]).toMatchObject({ attachments: [{ kind: "image", path: "shot.png" }] });
    await store.close();
  });
});
