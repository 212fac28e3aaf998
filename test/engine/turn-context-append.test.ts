/**
 * TurnContext.append hands on the persistence's promise: a failure to freeze the message or to
 * start its write still comes back as a rejection, never as a throw at the caller.
 */
import { describe, expect, it } from "vitest";
import type { ConversationMessage } from "../../src/core/messages.js";
import type { TurnContext, TurnPersistence } from "../../src/engine/turn-context.js";
import { makeRequest } from "./helpers/harness.js";
import { harnessTurnContext, reviewedHarness } from "./reviewer/support.js";

function contextWith(persistence: TurnPersistence): TurnContext {
  return harnessTurnContext(reviewedHarness([]), makeRequest({}), persistence);
}

const persistence = (append: TurnPersistence["append"]): TurnPersistence => ({
  append,
  markToolStarted: async () => undefined,
  startedToolCalls: async () => new Set<string>(),
});

describe("TurnContext.append", () => {
  it("resolves once the persistence has stored the message", async () => {
    const stored: ConversationMessage[][] = [];
    const ctx = contextWith(persistence(async (messages) => void stored.push([...messages])));
    await ctx.append({ role: "assistant", content: "hi" });
    expect(stored).toEqual([[{ role: "assistant", content: "hi" }]]);
  });

  it("rejects, without throwing, when the persistence throws as the write starts", async () => {
    const ctx = contextWith(
      persistence(() => {
        throw new Error("no store");
      }),
    );
    let appended: Promise<void> | undefined;
    expect(() => {
      appended = ctx.append({ role: "assistant", content: "hi" });
    }).not.toThrow();
    await expect(appended).rejects.toThrow("no store");
  });

  it("rejects, without throwing, when the message cannot be frozen", async () => {
    const ctx = contextWith(persistence(async () => undefined));
    // A typed array with elements cannot be frozen.
    const message = { role: "assistant", content: "hi", meta: { bytes: new Uint8Array(1) } } as never;
    let appended: Promise<void> | undefined;
    expect(() => {
      appended = ctx.append(message);
    }).not.toThrow();
    await expect(appended).rejects.toThrow();
  });
});
