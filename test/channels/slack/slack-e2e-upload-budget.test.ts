/**
 * End to end for the disk budget of files shared in Slack (attachments/upload-gate.ts): the real
 * Bolt app and session stack against the fake Slack, with the gate counting in the stack's store.
 * A person past their bytes of the day gets their message through with a note (to the model and
 * in the thread) and the file is not written; another person is not affected; the count survives
 * a restart on the same store; and the free-space floor (an injected reader) refuses too.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type TestDisk, testUploadGate } from "../../support/test-upload-gate.js";
import { echoHandler } from "../../fakes/fake-openai.js";
import {
  ANA,
  BEN,
  DM,
  type E2E,
  GENERAL,
  MENTION,
  type ProcessExtension,
  startE2E,
  thread,
} from "./e2e-harness.js";

let e2e: E2E;
afterEach(async () => e2e?.close());

/** The disk as the gate reads it: the test sets its free bytes. */
const disk: TestDisk = { free: Number.MAX_SAFE_INTEGER };

/** Each "process" gets a gate on its own store (the same SQLite file across a restart). */
const gated =
  (bytesPerPerson: number, minFreeBytes = 0): ProcessExtension =>
  (parts) => ({ channel: { uploads: testUploadGate(parts, disk, bytesPerPerson, minFreeBytes) } });

/** Names of every file saved under the workspace's uploads/. */
async function uploaded(root: string): Promise<string[]> {
  const entries = await readdir(join(root, "uploads"), { recursive: true, withFileTypes: true }).catch(
    () => [],
  );
  return entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
}

/** The last user text of the model request that answered `text`. */
function modelSaw(e2e: E2E, text: string): string | undefined {
  for (const request of e2e.openai.requests) {
    const messages = (request.messages ?? []) as { role: string; content: unknown }[];
    const last = messages.filter((m) => m.role === "user").at(-1);
    const content = typeof last?.content === "string" ? last.content : JSON.stringify(last?.content ?? "");
    if (content.includes(text)) return content;
  }
  return undefined;
}

/** `user` posts `text` with the file `id` (of `bytes`) in `channel`; resolves once the reply is in. */
async function postWithFile(user: string, channel: string, text: string, id: string, bytes: number) {
  const { fake } = e2e;
  fake.state.addFile({
    id,
    name: `${id}.bin`,
    mimetype: "application/octet-stream",
    content: Buffer.alloc(bytes, 7),
  });
  const { ts } = fake.userPosts({ user, channel, text, files: [id] });
  await fake.waitFor(
    () =>
      thread(fake, channel, ts).some(
        (t) => t.startsWith("You said") && t.includes(text.replace(MENTION, "").trim()),
      ),
    `the reply to ${text}`,
  );
  return { ts, seen: modelSaw(e2e, text) ?? "", told: thread(fake, channel, ts).join("\n") };
}

describe("Slack end to end: the disk budget for files people send", () => {
  it("past a person's bytes of the day, their message arrives with a note and the file is not saved; others go on; a restart keeps the count", async () => {
    disk.free = Number.MAX_SAFE_INTEGER;
    e2e = await startE2E(echoHandler, {}, gated(1_000_000));
    const first = await postWithFile(ANA, DM, "first file", "FANA1", 600_000);
    expect(first.seen).not.toContain("was not saved");
    expect(await uploaded(e2e.dataDir)).toEqual(["FANA1-FANA1.bin"]);

    const second = await postWithFile(ANA, DM, "second file", "FANA2", 600_000);
    // The message reached the model, its words first, with the note beside them.
    expect(second.seen.startsWith("second file")).toBe(true);
    expect(second.seen).toMatch(
      /"FANA2\.bin" was not saved: your files of the last 24 hours \(585\.9 KB\) and this one \(585\.9 KB\) would pass the 976\.6 KB saved per person/,
    );
    // And the person was told in the thread.
    expect(second.told).toContain('"FANA2.bin" was not saved: your files of the last 24 hours');
    expect(await uploaded(e2e.dataDir)).toEqual(["FANA1-FANA1.bin"]);

    // Another person has their own bytes.
    const ben = await postWithFile(BEN, GENERAL, `${MENTION} ben's file`, "FBEN1", 600_000);
    expect(ben.seen).not.toContain("was not saved");
    expect((await uploaded(e2e.dataDir)).sort()).toEqual(["FANA1-FANA1.bin", "FBEN1-FBEN1.bin"]);

    // A new process on the same store still counts Ana's bytes.
    await e2e.restart();
    const third = await postWithFile(ANA, DM, "third file", "FANA3", 600_000);
    expect(third.seen).toContain('"FANA3.bin" was not saved: your files of the last 24 hours');
    // A small one still fits what is left of her day.
    const small = await postWithFile(ANA, DM, "small file", "FANA4", 100_000);
    expect(small.seen).not.toContain("was not saved");
    expect((await uploaded(e2e.dataDir)).sort()).toEqual([
      "FANA1-FANA1.bin",
      "FANA4-FANA4.bin",
      "FBEN1-FBEN1.bin",
    ]);
  });

  it("while the disk is under the free-space floor, no file is downloaded and the person is told", async () => {
    disk.free = 1_500_000;
    e2e = await startE2E(echoHandler, {}, gated(100_000_000, 1_000_000));
    const refused = await postWithFile(ANA, DM, "a big one", "FBIG", 600_000);
    expect(refused.seen.startsWith("a big one")).toBe(true);
    expect(refused.seen).toContain('"FBIG.bin" was not saved: the server is low on disk space');
    expect(refused.told).toContain('"FBIG.bin" was not saved: the server is low on disk space');
    expect(await uploaded(e2e.dataDir)).toEqual([]);
    // One that leaves the floor intact is saved.
    const fits = await postWithFile(ANA, DM, "a small one", "FSMALL", 100_000);
    expect(fits.seen).not.toContain("was not saved");
    expect(await uploaded(e2e.dataDir)).toEqual(["FSMALL-FSMALL.bin"]);
  });
});
