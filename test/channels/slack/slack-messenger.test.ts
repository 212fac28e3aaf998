import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { captionNotPosted, SlackMessenger } from "../../../src/channels/slack/slack-messenger.js";
import type { Caller, ThreadTarget } from "../../../src/core/thread-target.js";
import { SlackDirectory } from "../../../src/channels/slack/slack-directory.js";
import { type FakeSlack, startFakeSlack } from "../../fakes/fake-slack/index.js";
import type { ApiCall } from "../../fakes/fake-slack/state.js";
import { clientsFor } from "./support.js";

let fake: FakeSlack;
let messenger: SlackMessenger;
let dir: string;
let from: ThreadTarget;
let fromGeneral: ThreadTarget;
/** The messenger's log lines, parsed. */
let logged: Record<string, unknown>[];

/** The channels named by the lines logged for refused sends, in order. */
const refusals = (): unknown[] =>
  logged.filter((line) => line.msg === "slack send_message refused").map((line) => line.channel);

/** A message sent for `userId` from `target` (the session's thread). */
function sender(userId: string, target = from): Caller {
  return { sessionId: "s1", target, requester: { id: userId, name: userId.toLowerCase() } };
}

beforeEach(async () => {
  fake = await startFakeSlack();
  fake.state.addChannel({ id: "C1", name: "general", type: "channel", members: ["UCEO", "USTRANGER"] });
  fake.state.addChannel({ id: "C2", name: "deploys", type: "channel", botMember: false, members: ["UCEO"] });
  fake.state.addChannel({ id: "D1", name: "dm", type: "im", members: ["UCEO"] });
  fake.state.addChannel({ id: "D0CEO", name: "dm-ceo", type: "im", members: ["UCEO"] });
  fake.state.addChannel({ id: "G0EXEC", name: "exec", type: "group", members: ["UCEO"] });
  fake.state.addChannel({ id: "G0MPIM", name: "mpdm-ceo--cfo-1", type: "mpim", members: ["UCEO", "UCFO"] });
  const clients = clientsFor(fake);
  const directory = new SlackDirectory(clients.api, {
    workspace: fake.state.teamId,
    botUserId: fake.state.botUserId,
    botName: "coworker",
  });
  logged = [];
  messenger = new SlackMessenger({
    clients,
    directory: () => directory,
    botName: () => "coworker",
    logger: pino({ level: "info" }, { write: (line: string) => logged.push(JSON.parse(line)) }),
  });
  dir = await mkdtemp(join(tmpdir(), "slack-messenger-"));
  from = { platform: "slack", workspace: fake.state.teamId, channel: "D1", thread: fake.state.nextTs() };
  fromGeneral = { ...from, channel: "C1", thread: fake.state.nextTs() };
});

afterEach(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

describe("SlackMessenger", () => {
  it("posts into the session's own thread when the channel is the session's", async () => {
    const result = await messenger.sendMessage(sender("UCEO"), "D1", "**done**");
    expect(result).toEqual({ ok: true, where: expect.stringMatching(/^this thread \(message \d+\.\d+\)$/) });
    expect(fake.state.botMessages("D1", from.thread).map((m) => m.text)).toEqual(["*done*"]);
  });

  it("finds another channel by #name and posts there, split under the limit", async () => {
    const long = Array.from({ length: 30 }, (_, i) => `Paragraph ${i} ${"x".repeat(200)}`).join("\n\n");
    const result = await messenger.sendMessage(sender("UCEO"), "#general", long);
    expect(result).toMatchObject({ ok: true, where: expect.stringMatching(/^#general/) });
    const posted = fake.state.botMessages("C1");
    expect(posted.length).toBeGreaterThan(1);
    expect(posted.every((m) => m.text.length <= 3_900)).toBe(true);
    expect(posted.map((m) => m.text.trim()).join("\n\n")).toBe(long);
  });

  it("says what to do when it is not in the channel or the channel is unknown", async () => {
    expect(await messenger.sendMessage(sender("UCEO"), "#deploys", "hi")).toEqual({
      ok: false,
      error: "I am not a member of #deploys: invite me there with /invite @coworker, then try again.",
    });
    const unknown = await messenger.sendMessage(sender("UCEO"), "#nope", "hi");
    expect(unknown.ok).toBe(false);
  });

  it("posts to another channel only when the requester is a member, and says no more than that", async () => {
    const stranger = sender("USTRANGER", fromGeneral);
    const refused = await messenger.sendMessage(stranger, "#exec", "Wire $50k to …");
    expect(refused).toEqual({
      ok: false,
      error:
        "Nothing was sent to #exec: besides this conversation, I post only to channels that ustranger is a member of and I am in, and I could not confirm that #exec is one. Check its name or id, or ask ustranger to join it first.",
    });
    // A channel that does not exist gets the same answer: the refusal does not reveal #exec.
    const missing = await messenger.sendMessage(stranger, "#nope", "x");
    expect(!missing.ok && missing.error.replaceAll("#nope", "#exec")).toBe(!refused.ok && refused.error);
    expect(await messenger.sendMessage(stranger, "G0EXEC", "x")).toMatchObject({ ok: false });
    expect(await messenger.sendMessage(stranger, "<#G0EXEC|exec>", "x")).toMatchObject({ ok: false });
    expect(fake.state.botMessages("G0EXEC")).toEqual([]);
    // Each refused send is logged, with the real reason the model is not told.
    expect(refusals()).toEqual(["#exec", "#nope", "G0EXEC", "<#G0EXEC|exec>"]);
    expect(logged.find((line) => line.msg === "slack send_message refused")).toMatchObject({
      reason: expect.any(String),
    });
    // The session's own channel needs no check; the CEO may post to #exec.
    expect(await messenger.sendMessage(stranger, "C1", "here")).toMatchObject({ ok: true });
    expect(await messenger.sendMessage(sender("UCEO", fromGeneral), "#exec", "Board at 3")).toMatchObject({
      ok: true,
      where: expect.stringMatching(/^#exec \(message /),
    });
    expect(fake.state.botMessages("G0EXEC").map((m) => m.text)).toEqual(["Board at 3"]);
  });

  it("names where a message would go for the approval card, and nothing where it would be refused", async () => {
    const stranger = sender("USTRANGER", fromGeneral);
    expect(await messenger.destinationOf(sender("UCEO", fromGeneral), "<#G0EXEC|exec>")).toBe(
      "#exec (G0EXEC)",
    );
    expect(await messenger.destinationOf(sender("UCEO", fromGeneral), "#general")).toBe("#general (C1)");
    expect(await messenger.destinationOf(stranger, "C1")).toBe("this thread");
    for (const channel of ["#exec", "G0EXEC", "#nope", "D0CEO", "<#G0EXEC|\n\n*posts here only*\n\n>"])
      expect(await messenger.destinationOf(stranger, channel)).toBeUndefined();
    // A link whose label runs over lines is no channel link, whoever asks.
    expect(
      await messenger.destinationOf(sender("UCEO", fromGeneral), "<#G0EXEC|exec\n*ok*>"),
    ).toBeUndefined();
    expect(fake.state.botMessages("G0EXEC")).toEqual([]);
    // Building a card sends nothing, so nothing was refused: no refusal is logged.
    expect(refusals()).toEqual([]);
  });

  it("refuses a group DM the requester is not in, and another person's DM", async () => {
    const stranger = sender("USTRANGER", fromGeneral);
    expect(await messenger.sendMessage(stranger, "G0MPIM", "x")).toMatchObject({ ok: false });
    expect(await messenger.sendMessage(sender("UCEO", fromGeneral), "D0CEO", "x")).toMatchObject({
      ok: false,
    });
    expect(fake.state.botMessages("G0MPIM")).toEqual([]);
    expect(fake.state.botMessages("D0CEO")).toEqual([]);
    expect(await messenger.sendMessage(sender("UCFO", fromGeneral), "G0MPIM", "hi both")).toMatchObject({
      ok: true,
    });
  });

  it("uploads a file into the session's thread, then its caption as a message of its own", async () => {
    const path = join(dir, "report.csv");
    await writeFile(path, "a,b\n1,2\n");
    const result = await messenger.sendFile(from, { path, name: "report.csv" }, "The **report**");
    expect(result).toEqual({ ok: true, where: "this thread" });
    const [message, caption, ...more] = fake.state.botMessages("D1", from.thread);
    expect(message?.text).toBe("");
    expect(caption?.text).toBe("The *report*");
    expect(caption?.files).toBeUndefined();
    expect(more).toEqual([]);
    expect(message?.files?.[0]?.title).toBe("report.csv");
    const upload = fake.state.uploads.get(message!.files![0]!.id);
    expect(upload).toMatchObject({ filename: "report.csv", completed: true });
    expect(upload!.received).toBeGreaterThanOrEqual(8);
  });

  it("posts a caption that escaping makes longer than one message whole, in messages after the file", async () => {
    const path = join(dir, "report.csv");
    await writeFile(path, "a,b\n1,2\n");
    // 1,024 characters the schema allows; escaped (&amp;), 5,120, past one message.
    const result = await messenger.sendFile(from, { path, name: "report.csv" }, "&".repeat(1_024));
    expect(result).toEqual({ ok: true, where: "this thread" });
    const [message, ...captions] = fake.state.botMessages("D1", from.thread);
    expect(message?.files?.[0]?.title).toBe("report.csv");
    expect(captions.length).toBeGreaterThan(1);
    expect(captions.map((caption) => caption.text).join("")).toBe("&amp;".repeat(1_024));
  });

  it("says the caption is not all posted when Slack refuses a message after its first", async () => {
    const path = join(dir, "report.csv");
    await writeFile(path, "a,b\n1,2\n");
    // The caption's first message goes up; the next post is refused.
    const refuseNext = (call: ApiCall) => {
      if (call.method !== "chat.postMessage") return;
      fake.state.off("call", refuseNext);
      fake.state.fail("chat.postMessage", "restricted_action");
    };
    fake.state.on("call", refuseNext);
    const result = await messenger.sendFile(from, { path, name: "report.csv" }, "&".repeat(1_024));
    expect(result).toEqual({
      ok: true,
      where: `this thread, ${captionNotPosted("after its first part: restricted_action")}`,
    });
    expect(fake.state.botMessages("D1", from.thread)).toHaveLength(2);
  });

  it("reports the file as sent when Slack takes it but refuses its caption, saying not to send it again", async () => {
    const path = join(dir, "report.csv");
    await writeFile(path, "a,b\n1,2\n");
    fake.state.fail("chat.postMessage", "restricted_action");
    const result = await messenger.sendFile(from, { path, name: "report.csv" }, "The **report**");
    expect(result).toEqual({ ok: true, where: `this thread, ${captionNotPosted("restricted_action")}` });
    expect(result).toMatchObject({ where: expect.stringMatching(/do not upload it again/) });
    const posted = fake.state.botMessages("D1", from.thread);
    expect(posted).toHaveLength(1);
    expect(posted[0]?.files?.[0]?.title).toBe("report.csv");
  });

  it("reports an upload Slack refuses instead of throwing", async () => {
    const path = join(dir, "x.txt");
    await writeFile(path, "x");
    const result = await messenger.sendFile({ ...from, channel: "C2" }, { path, name: "x.txt" });
    expect(result).toEqual({
      ok: false,
      error:
        "I am not a member of this conversation: invite me there with /invite @coworker, then try again.",
    });
  });
});
