/**
 * End to end for the disk budget of files sent on Telegram (attachments/upload-gate.ts): the real
 * grammY bot and session stack against the fake Bot API, with the gate counting in the stack's
 * store. A person past their bytes of the day gets their message through with a note (to the
 * model and in the chat) and the file is not written; another person is not affected; the count
 * survives a restart on the same store; and the free-space floor (an injected reader) refuses too.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type TestDisk, testUploadGate } from "../../support/test-upload-gate.js";
import type { FakeUser } from "../../fakes/fake-telegram/fake-telegram.js";
import { ALICE, ALICE_DM, BOB, BOB_DM } from "./harness.js";
import { type Stack, type StackExtension, startStack } from "./stack.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** The disk as the gate reads it: the test sets its free bytes. */
const disk: TestDisk = { free: Number.MAX_SAFE_INTEGER };

/** Each start gets a gate on its own store (the same SQLite file across a restart). */
const gated =
  (bytesPerPerson: number, minFreeBytes = 0): StackExtension =>
  (parts) => ({ channel: { uploads: testUploadGate(parts, disk, bytesPerPerson, minFreeBytes) } });

function start(extend: StackExtension): Promise<Stack> {
  return startStack({ allowedUsers: [ALICE.id, BOB.id], channel: { fileMaxBytes: 1_000_000 }, extend });
}

/** Names of every file saved under the workspace's uploads/. */
async function uploaded(s: Stack): Promise<string[]> {
  const root = join(s.dataDir, "workspace", "uploads");
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name.replace(/^\d+-/, ""))
    .sort();
}

/** `from` sends the document `name` (of `bytes`) with `caption`; resolves once the reply is in. */
async function sendFile(s: Stack, from: FakeUser, caption: string, name: string, bytes: number) {
  const chat = from.id === ALICE.id ? ALICE_DM : BOB_DM;
  s.tg.sendUserMessage({ chat, from, document: { content: Buffer.alloc(bytes, 7), name }, caption });
  await s.tg.waitFor(() =>
    s.tg.state.botMessages(from.id).find((m) => m.text.startsWith("You said") && m.text.includes(caption)),
  );
  const seen = s.openai.requests
    .map((request) =>
      JSON.stringify([...request.messages].reverse().find((m: { role: string }) => m.role === "user")),
    )
    .find((text) => text.includes(caption));
  const told = s.tg.state
    .botMessages(from.id)
    .map((m) => m.text)
    .join("\n");
  return { seen: seen ?? "", told };
}

describe("Telegram end to end: the disk budget for files people send", () => {
  it("past a person's bytes of the day, their message arrives with a note and the file is not saved; others go on; a restart keeps the count", async () => {
    disk.free = Number.MAX_SAFE_INTEGER;
    stack = await start(gated(1_000_000));
    const first = await sendFile(stack, ALICE, "first file", "one.bin", 600_000);
    expect(first.seen).not.toContain("was not saved");
    expect(await uploaded(stack)).toEqual(["one.bin"]);

    const second = await sendFile(stack, ALICE, "second file", "two.bin", 600_000);
    expect(second.seen).toMatch(
      /two\.bin was not saved: your files of the last 24 hours \(585\.9 KB\) and this one \(585\.9 KB\) would pass the 976\.6 KB saved per person/,
    );
    expect(second.told).toContain("two.bin was not saved: your files of the last 24 hours");
    expect(await uploaded(stack)).toEqual(["one.bin"]);

    const bob = await sendFile(stack, BOB, "bob's file", "bob.bin", 600_000);
    expect(bob.seen).not.toContain("was not saved");
    expect(await uploaded(stack)).toEqual(["bob.bin", "one.bin"]);

    stack = await stack.restart();
    const third = await sendFile(stack, ALICE, "third file", "three.bin", 600_000);
    expect(third.seen).toContain("three.bin was not saved: your files of the last 24 hours");
    expect(await uploaded(stack)).toEqual(["bob.bin", "one.bin"]);
  });

  it("while the disk is under the free-space floor, no file is downloaded and the person is told", async () => {
    disk.free = 1_500_000;
    stack = await start(gated(100_000_000, 1_000_000));
    const refused = await sendFile(stack, ALICE, "a big one", "big.bin", 600_000);
    expect(refused.seen).toContain("big.bin was not saved: the server is low on disk space");
    expect(refused.told).toContain("big.bin was not saved: the server is low on disk space");
    expect(await uploaded(stack)).toEqual([]);
    const fits = await sendFile(stack, ALICE, "a small one", "small.bin", 100_000);
    expect(fits.seen).not.toContain("was not saved");
    expect(await uploaded(stack)).toEqual(["small.bin"]);
  });
});
