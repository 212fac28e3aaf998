/**
 * Pending ids (approvals, questions, plans, reviewer denials) are random, and the session layer
 * routes a card press by its id: one starting like a standing item's ("tsk_", "wak_", "sub_") goes
 * to the item cards' Cancel, where every button of the card is "not valid" — it could never be
 * decided. No pending id takes that shape, whatever the random bytes.
 */
import { afterEach, describe, expect, it, vi } from "vitest";

const drawn: Buffer[] = [];
vi.mock("node:crypto", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:crypto")>();
  return {
    ...real,
    randomBytes: (size: number) => drawn.shift() ?? real.randomBytes(size),
  };
});

const { newPendingId } = await import("../../src/approvals/pending-item.js");

afterEach(() => {
  drawn.length = 0;
});

describe("newPendingId", () => {
  it("never gives an id shaped like a standing item's, which item cards would take", () => {
    for (const prefix of ["tsk_", "wak_", "sub_"]) {
      drawn.push(Buffer.from(`${prefix}AAAAAAAAAAAAAAAA`, "base64url"));
      const id = newPendingId();
      expect(id).not.toMatch(/^[a-z]{3}_/);
      expect(id).toMatch(/^[A-Za-z0-9_-]{20}$/);
    }
  });
});
