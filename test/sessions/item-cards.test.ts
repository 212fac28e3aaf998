import { describe, expect, it } from "vitest";
import type { Card, CardRef } from "../../src/core/card.js";
import type { ThreadOutput } from "../../src/core/thread-output.js";
import type { ThreadTarget } from "../../src/core/thread-target.js";
import { isTaskId } from "../../src/schedules/scheduled-task.js";
import { type ItemCanceller, ItemCards, itemCard } from "../../src/sessions/item-cards.js";
import { outcomeLine } from "../support/card-outcome.js";
import { cardPress } from "../support/card-press.js";

const HOME: ThreadTarget = { platform: "slack", workspace: "T1", channel: "D1", thread: "1.0" };

function recordingOutput() {
  const posted: Card[] = [];
  const updated: { ref: CardRef; card: Card }[] = [];
  const output: ThreadOutput = {
    beginTurn: () => ({ handle: async () => undefined, close: async () => undefined }),
    postCard: async (card) => {
      posted.push(card);
      return { messageId: `m${posted.length}` };
    },
    updateCard: async (ref, card) => {
      updated.push({ ref, card });
    },
    postText: async () => undefined,
  };
  return { output, posted, updated };
}

const canceller: ItemCanceller = {
  isItem: isTaskId,
  cancel: async (_target, user, id) =>
    user.id === "UANA" ? { ok: true, message: `Cancelled ${id}.` } : { ok: false, message: "Not yours." },
};

describe("ItemCards", () => {
  it("posts one card per item with a Cancel button and routes presses by their whole id", async () => {
    const { output, posted, updated } = recordingOutput();
    const cards = new ItemCards([canceller], () => output);
    await cards.post(HOME, [
      { id: "tsk_000000000001", title: "Task one", text: "first" },
      { id: "tsk_000000000002", title: "Task two", text: "second" },
    ]);
    expect(posted).toEqual([
      itemCard({ id: "tsk_000000000001", title: "Task one", text: "first" }),
      itemCard({ id: "tsk_000000000002", title: "Task two", text: "second" }),
    ]);
    expect(posted[0]!.buttons).toEqual([{ action: "cancel", label: "Cancel", style: "danger" }]);
    expect([cards.owns("tsk_000000000001"), cards.owns("apr_123")]).toEqual([true, false]);

    const press = (userId: string, pendingId: string, action = "cancel") =>
      cards.press(cardPress(HOME, pendingId, action, { id: userId, name: userId }));
    expect(await press("UBEN", "tsk_000000000001")).toEqual({ status: "not_allowed", message: "Not yours." });
    expect(updated).toEqual([]);
    expect(await press("UANA", "tsk_000000000001", "approve")).toMatchObject({ status: "invalid" });
    expect(await press("UANA", "tsk_000000000001")).toEqual({
      status: "accepted",
      message: "Cancelled tsk_000000000001.",
    });
    expect(updated).toHaveLength(1);
    expect(updated[0]!.ref).toEqual({ messageId: "m1" });
    expect(updated[0]!.card?.buttons).toEqual([]);
    expect(outcomeLine(updated[0]!.card)).toBe("Cancelled by UANA (id UANA)");
  });

  it("a press on a card from before a restart still cancels, without an update", async () => {
    const { output, updated } = recordingOutput();
    const cards = new ItemCards([canceller], () => output);
    const result = await cards.press(
      cardPress(HOME, "tsk_000000000009", "cancel", { id: "UANA", name: "Ana" }),
    );
    expect(result.status).toBe("accepted");
    expect(updated).toEqual([]);
  });
});
