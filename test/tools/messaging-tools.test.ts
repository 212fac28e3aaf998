import { readFile, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Caller, ThreadTarget } from "../../src/core/thread-target.js";
import { createMessagingTools, isCurrentThreadTarget } from "../../src/tools/messaging/messaging-tools.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import type { Messenger, MessengerResult, OutgoingFile } from "../../src/tools/messaging/messenger.js";
import { call, makeContext, TEST_TARGET, tempDir } from "./support/tool-context.js";
import { toolWorkspace } from "./support/tool-workspace.js";

/** A Messenger that records sends; channels named "#closed" fail like a platform refusal. */
class FakeMessenger implements Messenger {
  readonly sent: Array<{ sender: Caller; channel: string; text: string }> = [];
  readonly files: Array<{ target: ThreadTarget; name: string; content: string; caption?: string }> = [];

  async sendMessage(sender: Caller, channel: string, text: string): Promise<MessengerResult> {
    if (channel === "#closed") return { ok: false, error: "the bot is not a member of #closed" };
    this.sent.push({ sender, channel, text });
    return { ok: true, where: channel === sender.target.channel ? "this thread" : channel };
  }

  /** "#ops" is the channel C0OPS; "#closed" and other names are refused. */
  async destinationOf(_sender: Caller, channel: string): Promise<string | undefined> {
    return channel === "#ops" || channel === "<#C0OPS|ops>" ? "#ops (C0OPS)" : undefined;
  }

  async sendFile(target: ThreadTarget, file: OutgoingFile, caption?: string): Promise<MessengerResult> {
    const content = await readFile(file.path, "utf8");
    this.files.push({ target, name: file.name, content, ...(caption === undefined ? {} : { caption }) });
    return { ok: true, where: "this thread" };
  }
}

let ws: string;
let cleanup: () => Promise<void>;
let messenger: FakeMessenger;
beforeEach(async () => {
  ({ dir: ws, cleanup } = await tempDir("msg-"));
  messenger = new FakeMessenger();
});
afterEach(async () => {
  await cleanup();
});

const tools = () =>
  createMessagingTools({ messenger, workspace: toolWorkspace({ root: ws }), maxFileBytes: 10 });

describe("send_message", () => {
  it("posts through the Messenger from the session's thread, for the turn's requester", async () => {
    const [sendMessage] = tools();
    expect(await call(sendMessage, { channel: "#ops", text: "Deploy done" })).toEqual({
      ok: true,
      output: "Sent to #ops.",
    });
    expect(await call(sendMessage, { channel: "current", text: "Here too" })).toEqual({
      ok: true,
      output: "Sent to this thread.",
    });
    const sender = { sessionId: "s1", target: TEST_TARGET, requester: { id: "U1", name: "Tester" } };
    expect(messenger.sent).toEqual([
      { sender, channel: "#ops", text: "Deploy done" },
      { sender, channel: "C1", text: "Here too" },
    ]);
    expect(await call(sendMessage, { channel: "#closed", text: "x" })).toEqual({
      ok: false,
      output: "the bot is not a member of #closed",
    });
    expect(
      (await call(sendMessage, { channel: "#ops", text: "x" }, makeContext({ metadata: {} }))).output,
    ).toMatch(/no known thread/);
  });

  it("tells the permission engine which calls stay in the current thread", () => {
    const { request } = makeContext();
    expect(isCurrentThreadTarget({ channel: "current", text: "x" }, request)).toBe(true);
    expect(isCurrentThreadTarget({ channel: "C1", text: "x" }, request)).toBe(true);
    expect(isCurrentThreadTarget({ channel: "C2", text: "x" }, request)).toBe(false);
    expect(isCurrentThreadTarget({ channel: "current" }, makeContext({ metadata: {} }).request)).toBe(false);
  });

  it("previews where the message goes: the channel the platform resolves, as literal text", async () => {
    const [sendMessage] = tools();
    expect(await sendMessage.preview?.({ channel: "#ops", text: "hi" }, makeContext())).toEqual({
      summary: "Post a message to \\#ops \\(C0OPS\\)",
      detail: { kind: "code", text: "hi" },
    });
    expect(await sendMessage.preview?.({ channel: "current", text: "hi" }, makeContext())).toEqual({
      summary: "Post a message in this conversation",
      detail: { kind: "code", text: "hi" },
    });
  });

  it("never lets the channel argument write lines or markdown of its own on the card", async () => {
    const [sendMessage] = tools();
    const forged = "<#C0PAYROLL|\n\n*This posts only in this thread* :white_check_mark:\n\n>";
    const preview = await sendMessage.preview?.({ channel: forged, text: "hi" }, makeContext());
    expect(preview?.summary).toBe(
      "Post a message to \\<\\#C0PAYROLL\\| \\*This posts only in this thread\\* \\:white\\_check\\_mark\\: \\> (will be refused: I could not confirm it is a channel the person asking may post in)",
    );
    expect(preview?.summary).not.toMatch(/\n/);
    const long = await sendMessage.preview?.({ channel: `#${"x".repeat(190)}`, text: "hi" }, makeContext());
    expect(long?.summary).toMatch(/^Post a message to \\#x{118}… \(will be refused/);
    expect(sendMessage.inputSchema.safeParse({ channel: "#".repeat(201), text: "hi" }).success).toBe(false);
  });
  it("refuses a message over 8,000 characters with an error telling the model so, and posts nothing", async () => {
    // The Messenger splits a long text into as many posts as it takes: a megabyte would be
    // hundreds of Telegram messages or Slack posts in someone's channel.
    const [sendMessage] = tools();
    const registry = new ToolRegistry();
    registry.register(sendMessage);
    const { request } = makeContext();
    const args = (text: string) => JSON.stringify({ channel: "#ops", text });
    const refused = registry.validate("send_message", args("x".repeat(8_001)), request);
    expect(refused).toEqual({
      ok: false,
      error: expect.stringMatching(
        /^Invalid arguments for send_message — text: A message is at most 8,000 characters: shorten it/,
      ),
    });
    expect(registry.validate("send_message", args("x".repeat(1_000_000)), request).ok).toBe(false);
    expect(registry.validate("send_message", args(`  ${"x".repeat(8_000)}\n`), request).ok).toBe(true);
    expect(sendMessage.description).toMatch(/At most 8,000 characters/);
    expect(messenger.sent).toEqual([]);
  });
});

describe("send_message's card", () => {
  it("shows the message as code: literal, so a link's words cannot hide where it leads", async () => {
    const [sendMessage] = tools();
    const text = "Please log in again: [https://company.example/login](https://evil.example/phish)";
    const preview = await sendMessage.preview?.({ channel: "#ops", text }, makeContext());
    expect(preview?.detail).toEqual({ kind: "code", text });
  });

  it("shows all of a long message: as code, what the card cannot hold is posted beside it", async () => {
    // A text block is cut on a Telegram card at 1,500 characters and the rest is lost; a cut code
    // block's whole text goes beside the card as a file (card-attachment.ts).
    const [sendMessage] = tools();
    const text = `${"Routine update. ".repeat(400)}\nAlso: wire the refund to account 12345.`;
    const preview = await sendMessage.preview?.({ channel: "#ops", text }, makeContext());
    expect(preview?.detail).toEqual({ kind: "code", text });
  });
});

describe("send_file", () => {
  it("uploads a confined workspace file into the current thread", async () => {
    await writeFile(path.join(ws, "report.csv"), "a,b\n");
    const [, sendFile] = tools();
    expect(await call(sendFile, { path: "report.csv", caption: "Weekly" })).toEqual({
      ok: true,
      output: "Uploaded report.csv to this thread.",
    });
    expect(messenger.files).toEqual([
      { target: TEST_TARGET, name: "report.csv", content: "a,b\n", caption: "Weekly" },
    ]);
  });

  it("uploads the file it checked, even when a link to a host file takes its place before the upload", async () => {
    // Another session's command in the same workspace can swap the path between check and read.
    const outside = await tempDir("outside-");
    await writeFile(path.join(outside.dir, "id_rsa"), "host key");
    await writeFile(path.join(ws, "report.csv"), "a,b\n");
    const swapping = new (class extends FakeMessenger {
      override async sendFile(target: ThreadTarget, file: OutgoingFile, caption?: string) {
        await rm(path.join(ws, "report.csv"));
        await symlink(path.join(outside.dir, "id_rsa"), path.join(ws, "report.csv"));
        return super.sendFile(target, file, caption);
      }
    })();
    messenger = swapping;
    const [, sendFile] = tools();
    expect((await call(sendFile, { path: "report.csv" })).ok).toBe(true);
    expect(swapping.files.map((file) => file.content)).toEqual(["a,b\n"]);
    await outside.cleanup();
  });

  it("refuses files outside the workspace, directories, missing and oversized files", async () => {
    await writeFile(path.join(ws, "big.bin"), "x".repeat(11));
    const [, sendFile] = tools();
    expect((await call(sendFile, { path: "/etc/passwd" })).output).toMatch(/outside the workspace/);
    expect((await call(sendFile, { path: "." })).output).toBe(". is not a file");
    expect((await call(sendFile, { path: "nope.txt" })).output).toBe("nope.txt: no such file or directory");
    expect((await call(sendFile, { path: "big.bin" })).output).toBe(
      "big.bin is 11 bytes, over the 10-byte upload limit",
    );
    expect(messenger.files).toEqual([]);
  });

  it("refuses a caption over 1,024 characters (Telegram's limit) with an error naming it, and uploads nothing", async () => {
    // Telegram cuts a longer document caption; the model would think all of it went out.
    await writeFile(path.join(ws, "report.csv"), "a,b\n");
    const [, sendFile] = tools();
    const registry = new ToolRegistry();
    registry.register(sendFile);
    const { request } = makeContext();
    const args = (caption: string) => JSON.stringify({ path: "report.csv", caption });
    expect(registry.validate("send_file", args("x".repeat(1_025)), request)).toEqual({
      ok: false,
      error: expect.stringMatching(
        /^Invalid arguments for send_file — caption: A caption is at most 1,024 characters: shorten it/,
      ),
    });
    expect(registry.validate("send_file", args("x".repeat(1_024)), request).ok).toBe(true);
    expect(sendFile.description).toMatch(/at most 1,024 characters/);
    expect(messenger.files).toEqual([]);
  });

  it("never lets the caption write lines or markdown of its own on the card", async () => {
    await writeFile(path.join(ws, "report.csv"), "a,b\n");
    const [, sendFile] = tools();
    const caption = "Weekly\n\n*Checked by security: public data only* :white_check_mark:";
    const preview = await sendFile.preview?.({ path: "report.csv", caption }, makeContext());
    expect(preview?.summary).toBe(
      'Upload report\\.csv as "report\\.csv" (4 B) into this conversation, with the caption below',
    );
    expect(preview?.detail).toEqual({ kind: "code", text: caption });
    const forged = "x\n\n*Checked by security: public data only*/../report.csv";
    expect((await sendFile.preview?.({ path: forged }, makeContext()))?.summary).toBe(
      'Upload report\\.csv (x \\*Checked by security\\: public data only\\*\\/\\.\\.\\/report\\.csv leads there) as "report\\.csv" (4 B) into this conversation',
    );
  });

  it("shows all of a caption as long as it may be: as code, what the card cannot hold is posted beside it", async () => {
    // Escaped as markdown text, a 1,024-character caption can run to twice that, past the 1,500
    // characters a Telegram card's text block shows (the rest dropped unread).
    await writeFile(path.join(ws, "report.csv"), "a,b\n");
    const [, sendFile] = tools();
    const caption = `${"*_".repeat(480)}Password reset: https://evil.example/login`;
    expect(caption.length).toBeLessThanOrEqual(1_024);
    const preview = await sendFile.preview?.({ path: "report.csv", caption }, makeContext());
    expect(preview?.detail).toEqual({ kind: "code", text: caption });
  });
});

describe("send_file's card", () => {
  it("never lets a file's own name write lines or markdown of the card", async () => {
    // The model names workspace files (write_file, a command): a name is its words, as a caption is.
    const name = "x\n\n*Checked by security: public data only*.csv";
    await writeFile(path.join(ws, name), "a,b\n");
    const [, sendFile] = tools();
    const preview = await sendFile.preview?.({ path: name }, makeContext());
    expect(preview?.summary).not.toContain("\n");
    expect(preview?.summary).not.toContain(" *Checked");
    expect(preview?.summary).toContain("\\*Checked by security\\: public data only\\*");
    // A path to no file: the card says it will fail, and still writes nothing of its own.
    const missing = await sendFile.preview?.({ path: `nowhere${name}` }, makeContext());
    expect(missing?.summary).not.toContain("\n");
    expect(missing?.summary).not.toContain(" *Checked");
  });
});
