/**
 * The console does everything its cards advertise (issue #18): `approve <id>` / `deny <id>`
 * typed while the card asks, `stop` getting through while a card waits, and a card left pending
 * at exit shown again on the next start, where a plain "a" answers it. Real assembly, fake model.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeBody, type FakeOpenAI, startFakeOpenAI } from "../fakes/fake-openai.js";
import { makeProject, runCoworker } from "./run-coworker.js";

let fake: FakeOpenAI | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const lastMessage = (body: FakeBody): FakeBody => body.messages.at(-1);

/** A model that asks to write `path`, then says what the tool answered. */
async function writer(path: string): Promise<FakeOpenAI> {
  return startFakeOpenAI(({ body }) =>
    lastMessage(body).role === "user"
      ? { toolCalls: [{ name: "write_file", arguments: JSON.stringify({ path, content: "hello" }) }] }
      : { text: `Tool said: ${String(lastMessage(body).content).slice(0, 40)}` },
  );
}

const PENDING_ID = /reply "approve ([\w-]+)"/;

describe("console cards", () => {
  it("takes `approve <id>` typed while the card asks", async () => {
    fake = await writer("a.txt");
    const project = makeProject();
    const run = runCoworker(project, fake.baseURL);
    run.stdin.write("write a.txt\n");
    await run.waitForStdout("[a]pprove");
    const id = PENDING_ID.exec(run.stdout())?.[1];
    run.stdin.write(`approve ${id}\n`);
    await run.waitForStdout("Tool said:");
    run.stdin.end();
    expect(await run.exited).toBe(0);
    expect(readFileSync(join(project.workspace, "a.txt"), "utf8")).toBe("hello");
  });

  it("takes `deny <id>` typed while the card asks", async () => {
    fake = await writer("b.txt");
    const project = makeProject();
    const run = runCoworker(project, fake.baseURL);
    run.stdin.write("write b.txt\n");
    await run.waitForStdout("[a]pprove");
    const id = PENDING_ID.exec(run.stdout())?.[1];
    run.stdin.write(`deny ${id}\n`);
    await run.waitForStdout("Tool said:");
    run.stdin.end();
    expect(await run.exited).toBe(0);
    expect(existsSync(join(project.workspace, "b.txt"))).toBe(false);
    expect(String(lastMessage(fake.requests[1]).content)).toMatch(/denied|rejected/i);
  });

  it("lets `stop` through while a card waits: the turn ends and the card closes", async () => {
    fake = await writer("c.txt");
    const project = makeProject();
    const run = runCoworker(project, fake.baseURL);
    run.stdin.write("write c.txt\n");
    await run.waitForStdout("[a]pprove");
    const from = run.stdout().length;
    run.stdin.write("stop\n");
    await run.waitForStdout("(turn ended", from);
    run.stdin.write("/status\n");
    await run.waitForStdout("Usage:", from);
    run.stdin.end();
    expect(await run.exited).toBe(0);
    expect(existsSync(join(project.workspace, "c.txt"))).toBe(false);
    expect(fake.requests).toHaveLength(1);
  });

  it("shows a card left pending at exit again on the next start, where `a` answers it", async () => {
    fake = await writer("d.txt");
    const project = makeProject();
    const first = runCoworker(project, fake.baseURL);
    first.stdin.write("write d.txt\n");
    await first.waitForStdout("[a]pprove");
    first.stdin.end();
    expect(await first.exited).toBe(0);

    const second = runCoworker(project, fake.baseURL);
    await second.waitForStdout("(still waiting from before the restart)");
    await second.waitForStdout("[a]pprove");
    expect(second.stdout()).toContain("write_file");
    second.stdin.write("a\n");
    await second.waitForStdout("Tool said:");
    second.stdin.end();
    expect(await second.exited).toBe(0);
    expect(readFileSync(join(project.workspace, "d.txt"), "utf8")).toBe("hello");
  });
});
