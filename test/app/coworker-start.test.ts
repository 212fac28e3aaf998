import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeBody, type FakeOpenAI, startFakeOpenAI } from "../fakes/fake-openai.js";
import { makeProject, runCoworker, sample } from "./run-coworker.js";

let fake: FakeOpenAI | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const lastMessage = (body: FakeBody): FakeBody => body.messages.at(-1);

describe("coworker start (console channel, real assembly, fake model)", () => {
  it("answers a piped message and exits 0 when input ends", async () => {
    fake = await startFakeOpenAI(() => ({ text: ["Hello ", "from the fake model."] }));
    const project = makeProject();
    const run = runCoworker(project, fake.baseURL);
    run.stdin.end("hi\n");
    expect(await run.exited).toBe(0);
    expect(run.stdout()).toContain("Hello from the fake model.");
    expect(run.stderr()).toContain("channels  console");
    expect(run.stderr()).toContain(`workspace ${project.workspace}`);
    const request = fake.requests[0];
    expect(request.model).toBe("gpt-4o-mini");
    expect(request.messages[0].role).toBe("system");
    expect(request.tools.map((tool: FakeBody) => tool.function.name)).toContain("write_file");
    expect(lastMessage(request).content).toMatch(/^hi\n/);
  });

  it("asks before write_file, writes after [a]pprove, and shows it in /metrics and /readyz", async () => {
    fake = await startFakeOpenAI(({ body }) =>
      lastMessage(body).role === "user"
        ? { toolCalls: [{ name: "write_file", arguments: '{"path":"notes/out.txt","content":"hello"}' }] }
        : { text: "Wrote notes/out.txt." },
    );
    const project = makeProject();
    const run = runCoworker(project, fake.baseURL);
    const ops = await run.opsUrl();
    run.stdin.write("please write the file\n");
    await run.waitForStdout("[a]pprove");
    expect(run.stdout()).toContain("write_file");
    const pending = await (await fetch(`${ops}/metrics`)).text();
    expect(sample(pending, "coworker_approvals_pending", { platform: "console" })).toBe(1);

    run.stdin.write("a\n");
    await run.waitForStdout("Wrote notes/out.txt.");
    // Piped input is read only once the agent is idle: the status reply means the turn has closed.
    run.stdin.write("/status\n");
    await run.waitForStdout("Usage: 1 turns");
    expect(readFileSync(join(project.workspace, "notes/out.txt"), "utf8")).toBe("hello");
    const toolMessage = lastMessage(fake.requests[1]);
    expect(toolMessage.role).toBe("tool");

    const metrics = await (await fetch(`${ops}/metrics`)).text();
    expect(sample(metrics, "coworker_turns_total", { platform: "console", status: "completed" })).toBe(1);
    expect(sample(metrics, "coworker_turns_running", { platform: "console" })).toBe(0);
    expect(sample(metrics, "coworker_tool_calls_total", { tool: "write_file", status: "ok" })).toBe(1);
    expect(sample(metrics, "coworker_approvals_pending", { platform: "console" })).toBe(0);
    expect(
      sample(metrics, "coworker_approvals_resolved_total", { platform: "console", outcome: "approved" }),
    ).toBe(1);
    expect(
      sample(metrics, "coworker_model_request_duration_seconds_count", {
        model: "gpt-4o-mini",
        outcome: "ok",
      }),
    ).toBe(2);
    expect(
      sample(metrics, "coworker_model_tokens_total", { model: "gpt-4o-mini", kind: "prompt" }),
    ).toBeGreaterThan(0);
    expect(
      sample(metrics, "coworker_inbound_messages_total", { platform: "console", result: "started" }),
    ).toBe(1);

    const ready = await fetch(`${ops}/readyz`);
    expect(ready.status).toBe(200);
    const report = (await ready.json()) as { checks: { name: string; ok: boolean }[] };
    expect(report.checks.map((check) => `${check.name}:${check.ok}`)).toEqual([
      "startup:true",
      "intake:true",
      "store:true",
      "channel:console:true",
    ]);
    expect((await fetch(`${ops}/healthz`)).status).toBe(200);

    run.stdin.end();
    expect(await run.exited).toBe(0);
  });

  it("an approval left pending at exit can be approved after a restart; the turn resumes into the console", async () => {
    fake = await startFakeOpenAI(({ body }) =>
      lastMessage(body).role === "user"
        ? { toolCalls: [{ name: "write_file", arguments: '{"path":"later.txt","content":"kept"}' }] }
        : { text: "Wrote later.txt." },
    );
    const project = makeProject();
    const first = runCoworker(project, fake.baseURL);
    first.stdin.write("write later.txt\n");
    await first.waitForStdout("[a]pprove");
    first.stdin.end();
    expect(await first.exited).toBe(0);
    expect(first.stdout()).toContain("stays pending");
    const pendingId = /reply "approve ([\w-]+)"/.exec(first.stdout())?.[1];
    expect(pendingId).toBeDefined();

    const second = runCoworker(project, fake.baseURL);
    second.stdin.write("/status\n");
    await second.waitForStdout("a turn is waiting to continue");
    second.stdin.write(`approve ${pendingId}\n`);
    await second.waitForStdout("Wrote later.txt.");
    second.stdin.end();
    expect(await second.exited).toBe(0);
    expect(readFileSync(join(project.workspace, "later.txt"), "utf8")).toBe("kept");
    expect(fake.requests).toHaveLength(2);
  });

  it("SIGTERM during a running tool call interrupts it cleanly; a restart resumes the intact session", async () => {
    fake = await startFakeOpenAI(({ body }) => {
      const last = lastMessage(body);
      if (last.role === "user" && String(last.content).startsWith("run the long job"))
        return { toolCalls: [{ id: "call_long", name: "run_command", arguments: '{"command":"sleep 30"}' }] };
      return { text: `Answer #${body.messages.filter((m: FakeBody) => m.role === "user").length}.` };
    });
    const project = makeProject('tools:\n  allowed_commands: ["sleep"]\n', 0.2);

    const first = runCoworker(project, fake.baseURL);
    first.stdin.write("run the long job\n");
    await first.waitForStdout("▸ Running");
    first.signals.emit("SIGTERM");
    expect(await first.exited).toBe(0);
    expect(first.stdout()).toContain("(turn ended: interrupted)");
    expect(fake.requests).toHaveLength(1);

    const second = runCoworker(project, fake.baseURL);
    second.stdin.end("and now?\n");
    expect(await second.exited).toBe(0);
    expect(second.stdout()).toContain("Answer #2.");
    // One new request for the new message: nothing was left to resume or repeat.
    expect(fake.requests).toHaveLength(2);
    const sent: FakeBody[] = fake.requests[1].messages;
    expect(sent.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "user"]);
    expect(sent[1].content).toMatch(/^run the long job/);
    expect(sent[2].tool_calls.map((call: FakeBody) => call.id)).toEqual(["call_long"]);
    expect(sent[3].tool_call_id).toBe("call_long");
    expect(sent[3].content).toMatch(/interrupt/i);
    expect(sent[4].content).toMatch(/^and now\?/);
  });
});
