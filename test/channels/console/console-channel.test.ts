import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { CONSOLE_TARGET, ConsoleChannel } from "../../../src/channels/console/console-channel.js";
import { markdownLiteral, personInMarkdown } from "../../../src/core/person-text.js";
import { FakeService } from "./fake-service.js";
import { approvalCard, deploy, runTests } from "./scripts.js";
import { withOutputs } from "../../support/adapter-outputs.js";

function harness(lines: string, interactive = false) {
  const service = new FakeService({ "run the tests": runTests, deploy });
  const input = new PassThrough();
  const output = new PassThrough();
  let text = "";
  output.on("data", (chunk: Buffer) => {
    text += chunk.toString("utf8");
  });
  const channel = withOutputs(
    new ConsoleChannel({
      service,
      input,
      output,
      interactive,
      user: { id: "u1", name: "ana" },
    }),
    service,
  );
  channel.start();
  if (lines !== "") input.end(lines);
  return { service, channel, input, output: () => text };
}

describe("console channel with piped streams", () => {
  it("runs a turn whose approval is answered at the prompt", async () => {
    const h = harness("run the tests\na\n");
    await h.channel.finished;
    expect(h.service.received.map((m) => m.text)).toEqual(["run the tests"]);
    expect(h.service.presses).toEqual([
      {
        kind: "card",
        platform: "console",
        pendingId: "ap1",
        action: "once",
        user: { id: "u1", name: "ana" },
        pressedIn: CONSOLE_TARGET,
      },
    ]);
    const out = h.output();
    expect(out).toContain("[~] Run the tests");
    expect(out).toContain("▸ Running `npm test`…");
    expect(out).toContain("[a]pprove / [A]lways (Always allow `npm`) / [d]eny, or 1-3");
    expect(out).toContain("✓ `npm test` · 3.2 s");
    expect(out).toContain("All 12 tests pass.\n");
    // The decision is printed once, by the card's update — not again as the press's reply; the
    // console names who decided by name alone (one local person, no ids).
    expect(out.split("→ Answered by ana: once")).toHaveLength(2);
    expect(out).not.toContain("(id u1)");
    expect(out).not.toContain("Recorded once.");
    expect(out.indexOf("[d]eny")).toBeLessThan(out.indexOf("✓ `npm test`"));
    expect(h.service.turnsDone).toEqual(["t1"]);
  });

  it("maps A to the always option and d to deny, re-prompting on an unknown answer", async () => {
    const always = harness("run the tests\nA\n");
    await always.channel.finished;
    expect(always.service.presses.map((p) => (p.kind === "card" ? p.action : p.control))).toEqual([
      "always_command",
    ]);

    const denied = harness("run the tests\nmaybe\nd\n");
    await denied.channel.finished;
    expect(denied.service.presses.map((p) => (p.kind === "card" ? p.action : p.control))).toEqual(["deny"]);
    expect(denied.service.received).toHaveLength(1);
    expect(denied.output()).toMatch(/\[a\]pprove .*\n(.|\n)*\[a\]pprove/);
    expect(denied.output()).toContain("✗ `npm test` · denied · 0.0 s — denied by the user");
  });

  it("answers a question by option number", async () => {
    const h = harness("deploy\n2\n");
    await h.channel.finished;
    expect(h.service.presses).toMatchObject([{ kind: "card", pendingId: "q1", action: "q0:o1" }]);
    const out = h.output();
    expect(out).toContain("1) staging");
    expect(out).toContain("2) production");
    expect(out).toContain("type 1-2 or a free-text answer");
    expect(out).toContain("Deploying: q0:o1");
  });

  it("answers a question with free text sent as the reply", async () => {
    const h = harness("deploy\nthe canary cluster\n");
    await h.channel.finished;
    expect(h.service.presses).toEqual([]);
    expect(h.service.received.map((m) => m.text)).toEqual(["deploy", "the canary cluster"]);
    expect(h.output()).toContain("Deploying: the canary cluster");
  });

  it("sends slash commands as commands and sends messages with unique dedupe keys", async () => {
    const h = harness("/mode auto\nhello\nhello\n");
    await h.channel.finished;
    expect(h.service.commands.map(({ name, args }) => [name, ...args])).toEqual([["mode", "auto"]]);
    expect(h.output()).toContain("mode for ana: ok");
    expect(h.output()).toContain('(ignored: no script for "hello")');
    const keys = h.service.received.map((m) => m.dedupeKeys[0]);
    expect(new Set(keys).size).toBe(2);
    expect(h.service.received[0]?.target).toEqual(CONSOLE_TARGET);
  });

  it("finishes when input ends while a card still waits, saying it stays pending", async () => {
    const h = harness("run the tests\n");
    await h.channel.finished;
    expect(h.output()).toContain('(input ended; "Approve: run_command" stays pending)');
    expect(h.service.presses).toEqual([]);
  });

  it("says a card stays pending once, however much is printed after input ended", async () => {
    const h = harness("run the tests\n");
    await h.channel.finished;
    await h.channel.postText("a later note");
    await h.channel.postText("and another");
    expect(h.output()).toContain("a later note");
    expect(h.output().split('(input ended; "Approve: run_command" stays pending)')).toHaveLength(2);
  });
});

describe("console channel cards from earlier runs", () => {
  it("prompts for a still-open card it did not post (a pending approval after a restart)", async () => {
    const service = new FakeService({});
    const input = new PassThrough();
    const output = new PassThrough();
    let text = "";
    output.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
    });
    const channel = withOutputs(new ConsoleChannel({ service, input, output, interactive: false }), service);
    channel.start();
    await channel.updateCard({ messageId: "card-earlier-1" }, approvalCard);
    input.end("d\n");
    await channel.finished;
    expect(text).toContain("┌ Approve: run_command");
    expect(service.presses).toMatchObject([{ kind: "card", pendingId: "ap1", action: "deny" }]);
    expect(text).toContain("That was already decided.");
  });
});

describe("console channel in a terminal", () => {
  it("stops the running turn on Ctrl-C", async () => {
    const h = harness("", true);
    h.input.write("run the tests\r");
    await expect.poll(() => h.output()).toContain("[d]eny");
    h.input.write("\u0003");
    await expect.poll(() => h.service.presses.length).toBe(1);
    expect(h.service.presses[0]).toMatchObject({ kind: "control", control: "stop", target: CONSOLE_TARGET });
    h.input.write("a\r");
    await expect.poll(() => h.service.turnsDone).toEqual(["t1"]);
    h.input.write("/quit\r");
    await h.channel.finished;
  });
});

describe("console channel and markdown written as plain text", () => {
  /** A service whose command replies are markdown with written text escaped, as status is. */
  class EscapingService extends FakeService {
    protected override reply(): string {
      return `- ${markdownLiteral('#deploys (instructions: "*fail* [x](https://e.example) a_b")')} — by ${personInMarkdown({ platform: "console", id: "u1", name: "[Boss]" })}`;
    }
  }

  it("shows a command reply, a posted text and a card's text without markdown's escapes", async () => {
    const service = new EscapingService({});
    const input = new PassThrough();
    const output = new PassThrough();
    let text = "";
    output.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
    });
    const channel = withOutputs(new ConsoleChannel({ service, input, output, interactive: false }), service);
    channel.start();
    const thread = channel.outputFor(CONSOLE_TARGET);
    await thread.postText(`I was removed from ${markdownLiteral("[Ops] *team*")}.`);
    await thread.postCard({
      pendingId: "sub_1",
      kind: "item",
      title: "Subscription sub_1",
      blocks: [{ kind: "text", text: markdownLiteral('"a_b" \\ <c>') }],
      buttons: [{ action: "cancel", label: "Cancel", style: "danger" }],
    });
    input.end("/status\n");
    await channel.finished;
    expect(text).toContain('• #deploys (instructions: "*fail* [x](https://e.example) a_b") — by [Boss]');
    expect(text).toContain("I was removed from [Ops] *team*.");
    expect(text).toContain('"a_b" \\ <c>');
    expect(text).not.toMatch(/\\[#*_["<]/);
  });
});
