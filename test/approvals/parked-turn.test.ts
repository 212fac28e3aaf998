import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  decodeParkedTurn,
  encodeParkedTurn,
  type ParkedTurn,
  parkTurn,
  type TurnMarker,
  waitingCallOf,
  waitsFor,
} from "../../src/approvals/parked-turn.js";
import { callHash } from "../../src/approvals/pending-item.js";
import type { ConversationMessage } from "../../src/core/messages.js";
import { StoredDataError } from "../../src/store/versioned.js";

const FIXTURES = join(import.meta.dirname, "fixtures");
const fixture = (name: string): unknown => JSON.parse(readFileSync(join(FIXTURES, name), "utf8"));

const marker: TurnMarker = {
  turnId: "t1",
  request: { prompt: "write hi", messages: [] },
  startedAt: "2026-01-02T03:04:00.000Z",
  startedFrom: { how: "run", historyLength: 0 },
};

const call = (id: string, name: string, args: string) => ({
  id,
  type: "function" as const,
  function: { name, arguments: args },
});

const history: ConversationMessage[] = [
  { role: "user", content: "write hi" },
  {
    role: "assistant",
    content: null,
    tool_calls: [call("c1", "write_note", '{"text":"hi"}'), call("c2", "read_note", "{}")],
  },
  { role: "tool", tool_call_id: "c2", content: "ok" },
];

describe("parked turn", () => {
  it("decodes every stored fixture version", () => {
    const names = readdirSync(FIXTURES).filter((name) => /^parked-turn\.v\d+\.json$/.test(name));
    expect(names).toContain("parked-turn.v1.json");
    for (const name of names) {
      const parked = decodeParkedTurn(fixture(name));
      expect(parked.waiting.length, name).toBeGreaterThan(0);
      expect(decodeParkedTurn(encodeParkedTurn(parked))).toEqual(parked);
    }
    expect(decodeParkedTurn(fixture("parked-turn.v1.json"))).toMatchObject({
      sessionId: "Xy12Ab34Cd56Ef78Gh90Ij12",
      turnId: "a1b2c3d4e5f6",
      historyLength: 6,
      waiting: [{ callId: "c1", tool: "write_note" }],
    });
  });

  it("fails loudly on a newer version or a corrupt state", () => {
    const stored = fixture("parked-turn.v1.json") as { data: Record<string, unknown> };
    expect(() => decodeParkedTurn({ ...stored, v: 2 })).toThrow(StoredDataError);
    expect(() => decodeParkedTurn({ ...stored, v: 2 })).toThrow(/newer Coworker \(schema v2\)/);
    expect(() => decodeParkedTurn({ ...stored, data: { ...stored.data, waiting: "c1" } })).toThrow(/waiting/);
    expect(() => decodeParkedTurn({ ...stored, kind: "session" })).toThrow(/kind "session"/);
  });

  it("is the turn marker with the journal position and the calls still waiting", () => {
    const parked = parkTurn("s1", marker, history);
    expect(parked).toMatchObject({ ...marker, sessionId: "s1", historyLength: 3 });
    expect(parked.waiting).toEqual([{ callId: "c1", tool: "write_note", arguments: '{"text":"hi"}' }]);
    expect(Object.isFrozen(parked)).toBe(true);
    expect(decodeParkedTurn(JSON.parse(JSON.stringify(encodeParkedTurn(parked))))).toEqual(parked);
  });

  it("waits for a call only with the same tool and arguments", () => {
    const parked = parkTurn("s1", marker, history);
    expect(waitsFor(parked, "c1", callHash("write_note", { text: "hi" }))).toBe(true);
    expect(waitsFor(parked, "c1", callHash("write_note", { text: "other" }))).toBe(false);
    expect(waitsFor(parked, "c2", callHash("read_note", {}))).toBe(false);
    expect(waitsFor(undefined, "c1", callHash("write_note", { text: "hi" }))).toBe(false);
    const answered = parkTurn("s1", marker, [
      ...history,
      { role: "tool", tool_call_id: "c1", content: "done" },
    ]);
    expect(answered.waiting).toEqual([]);
  });

  it("keeps arguments that are not JSON as text", () => {
    const parked: ParkedTurn = {
      ...parkTurn("s1", marker, []),
      waiting: [{ callId: "c9", tool: "shell", arguments: "not json" }],
    };
    expect(waitingCallOf(parked, "c9")).toEqual({ tool: "shell", args: "not json" });
    expect(waitingCallOf(parked, "c1")).toBeUndefined();
  });
});
