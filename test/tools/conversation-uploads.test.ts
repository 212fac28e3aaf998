/**
 * Files people send stay in the conversation they were sent in. Ana sends a payslip in her Slack
 * DM; Bob, in a channel, asks the bot for it with every tool the built-in set has — read_file,
 * list_files, search_files (both engines), send_file, run_command in the bubblewrap sandbox — and
 * gets nothing, not even whether it exists; a link from his own upload folder to hers does not
 * help; nor can he write, edit or download (web_fetch save_to) into her folder. Another thread of
 * Ana's DM sees it all and can change it. Files saved before the per-conversation layout (one
 * folder per session, the name Slack still gives) count as their conversation's too.
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { perSessionUploadFolder } from "../support/per-session-upload-folder.js";
import { markdownLiteral } from "../../src/core/person-text.js";
import type { ThreadTarget } from "../../src/core/thread-target.js";
import type { AnyTool } from "../../src/core/tool.js";
import { uploadFolderOf } from "../../src/core/upload-folders.js";
import { createBuiltinTools } from "../../src/tools/builtin-tools.js";
import type { Messenger, OutgoingFile } from "../../src/tools/messaging/messenger.js";
import { bubblewrapBackend } from "../../src/tools/shell/bubblewrap-backend.js";
import { call, makeContext, tempDir } from "./support/tool-context.js";

const ANA: ThreadTarget = {
  platform: "slack",
  workspace: "T1",
  channel: "D1",
  thread: "1700000000.000100",
  extra: { kind: "dm" },
};
const ANA_LATER: ThreadTarget = { ...ANA, thread: "1700000900.000900" };
const BOB: ThreadTarget = { platform: "slack", workspace: "T1", channel: "C2", thread: "1700000500.000500" };

/** Ana's payslip where Slack saves it today: the folder of her session. */
const PAYSLIP = `uploads/${perSessionUploadFolder(ANA)}/F1-payslip.pdf.txt`;
/** Her contract in the per-conversation layout. */
const CONTRACT = `${uploadFolderOf(ANA)}/F2-contract.txt`;
const BOB_FOLDER = uploadFolderOf(BOB);

let ws: string;
let cleanup: () => Promise<void>;
let sent: { target: ThreadTarget; content: string }[];

const messenger: Messenger = {
  sendMessage: async () => ({ ok: true, where: "x" }),
  destinationOf: async () => "x",
  async sendFile(target: ThreadTarget, file: OutgoingFile) {
    sent.push({ target, content: await readFile(file.path, "utf8") });
    return { ok: true, where: "this thread" };
  },
};

/** A loopback server for web_fetch's downloads, counting them. */
let server: http.Server;
let fetched = 0;
const served = () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/file.txt`;

beforeAll(async () => {
  server = http.createServer((_request, response) => {
    fetched += 1;
    response.writeHead(200, { "content-type": "text/plain" }).end("fetched body");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(async () => {
  fetched = 0;
  ({ dir: ws, cleanup } = await tempDir("uploads-"));
  sent = [];
  for (const [file, content] of [
    [PAYSLIP, "SALARY 4200\n"],
    [CONTRACT, "SALARY in the contract\n"],
    [`${BOB_FOLDER}/F3-mine.txt`, "Bob's own file\n"],
  ] as const) {
    await mkdir(path.join(ws, path.dirname(file)), { recursive: true });
    await writeFile(path.join(ws, file), content);
  }
});
afterEach(async () => {
  await cleanup();
});

/** The built-in tools with the real sandbox, by name. */
function tools(useRipgrep = true): Record<string, AnyTool> {
  const built = createBuiltinTools({
    workspace: { root: ws },
    files: { useRipgrep },
    runCommand: { sandbox: bubblewrapBackend(), killGraceMs: 300, drainMs: 200 },
    webFetch: { allowPrivate: true },
    messenger,
  });
  return Object.fromEntries(built.map((tool) => [tool.name, tool]));
}

const contextOf = (target: ThreadTarget | undefined) =>
  makeContext({ root: ws, metadata: target ? { target } : {} });

async function as(target: ThreadTarget | undefined, tool: string, args: unknown, useRipgrep = true) {
  return call(tools(useRipgrep)[tool] as AnyTool, args, contextOf(target));
}

/** The approval card of a call from `target`'s session. */
async function preview(target: ThreadTarget, tool: string, args: Record<string, unknown>) {
  const card = await tools()[tool]?.preview?.(args, contextOf(target));
  if (card === undefined) throw new Error(`${tool} has no preview`);
  return card;
}

const refusal = (asked: string) =>
  `${asked}: of uploads/, only this conversation's own folders are available here (the files people send stay in the conversation they sent them in)`;

describe("another conversation's uploads", () => {
  it("are refused to read_file, alike whether the file is there or not", async () => {
    for (const file of [PAYSLIP, CONTRACT, PAYSLIP.replace("payslip", "nothing"), "uploads/slack_T1_D1"]) {
      expect(await as(BOB, "read_file", { path: file })).toEqual({ ok: false, output: refusal(file) });
    }
    const roundabout = `${BOB_FOLDER}/../../${path.posix.relative("uploads", PAYSLIP)}`;
    expect(await as(BOB, "read_file", { path: roundabout })).toEqual({
      ok: false,
      output: refusal(roundabout),
    });
    expect((await as(BOB, "read_file", { path: `${BOB_FOLDER}/F3-mine.txt` })).output).toMatch(
      /Bob's own file/,
    );
  });

  it("are left out of list_files and refused when listed themselves", async () => {
    const uploads = await as(BOB, "list_files", { path: "uploads", depth: 8 });
    expect(uploads.output).toBe(
      `uploads:\nslack_T1_C2/\nslack_T1_C2/${BOB.thread}/\nslack_T1_C2/${BOB.thread}/F3-mine.txt`,
    );
    expect((await as(BOB, "list_files", { depth: 8 })).output).not.toMatch(/D1|payslip|contract/);
    const folder = path.posix.dirname(PAYSLIP);
    expect(await as(BOB, "list_files", { path: folder })).toEqual({ ok: false, output: refusal(folder) });
  });

  it.each([
    ["ripgrep", true],
    ["the JS engine", false],
  ])("are never searched by search_files with %s", async (_engine, useRipgrep) => {
    expect((await as(BOB, "search_files", { pattern: "SALARY" }, useRipgrep)).output).toBe(
      "No matches for /SALARY/ in ..",
    );
    expect((await as(BOB, "search_files", { pattern: "own" }, useRipgrep)).output).toBe(
      `${BOB_FOLDER}/F3-mine.txt:1: Bob's own file`,
    );
    expect(await as(BOB, "search_files", { pattern: "SALARY", path: PAYSLIP }, useRipgrep)).toEqual({
      ok: false,
      output: refusal(PAYSLIP),
    });
  });

  it("are not uploaded by send_file", async () => {
    expect(await as(BOB, "send_file", { path: PAYSLIP })).toEqual({ ok: false, output: refusal(PAYSLIP) });
    expect(sent).toEqual([]);
  });

  it("are out of sight of run_command, which sees only its conversation's folder in uploads/", async () => {
    const peek = await as(BOB, "run_command", { command: `cat ${PAYSLIP}` });
    expect(peek.ok).toBe(false);
    expect(peek.output).toMatch(/No such file or directory/);
    expect((await as(BOB, "run_command", { command: "ls -a uploads" })).output).toBe(
      ".\n..\nslack_T1_C2\n[exit code 0]",
    );
    const writes = await as(BOB, "run_command", {
      command: `echo x > uploads/planted; echo y > ${BOB_FOLDER}/made.txt && cat ${BOB_FOLDER}/F3-mine.txt`,
    });
    expect(writes.output).toMatch(
      /uploads\/planted: Read-only file system\nBob's own file\n\[exit code 0\]$/,
    );
    expect(await readFile(path.join(ws, BOB_FOLDER, "made.txt"), "utf8")).toBe("y\n");
  });

  it("stay out of reach through a link from the session's own upload folder", async () => {
    const made = await as(BOB, "run_command", {
      command: `ln -s ../../${path.posix.relative("uploads", PAYSLIP)} ${BOB_FOLDER}/note.txt && ln -s ../../slack_T1_D1 ${BOB_FOLDER}/ana`,
    });
    expect(made.ok).toBe(true);
    const note = `${BOB_FOLDER}/note.txt`;
    expect(await as(BOB, "read_file", { path: note })).toEqual({ ok: false, output: refusal(note) });
    expect(await as(BOB, "send_file", { path: note })).toEqual({ ok: false, output: refusal(note) });
    const ana = `${BOB_FOLDER}/ana`;
    expect(await as(BOB, "list_files", { path: ana })).toEqual({ ok: false, output: refusal(ana) });
    expect(await as(BOB, "read_file", { path: `${ana}/${ANA.thread}/F2-contract.txt` })).toMatchObject({
      ok: false,
    });
    expect((await as(BOB, "search_files", { pattern: "SALARY", path: BOB_FOLDER })).output).toMatch(
      /^No matches/,
    );
    expect(sent).toEqual([]);
  });

  it("are reachable by no session without a conversation", async () => {
    expect(await as(undefined, "read_file", { path: CONTRACT })).toEqual({
      ok: false,
      output: `${CONTRACT}: nothing under uploads/ is available here (the files people send stay in the conversation they sent them in)`,
    });
    expect((await as(undefined, "list_files", { path: "uploads" })).output).toBe("uploads is empty.");
  });

  it("are not written, edited or saved into, alike whether the file is there or not", async () => {
    const missing = `${uploadFolderOf(ANA)}/F9-new.txt`;
    for (const file of [CONTRACT, missing]) {
      expect(await as(BOB, "write_file", { path: file, content: "forged" })).toEqual({
        ok: false,
        output: refusal(file),
      });
      expect(await as(BOB, "web_fetch", { url: served(), save_to: file })).toEqual({
        ok: false,
        output: refusal(file),
      });
      expect((await preview(BOB, "write_file", { path: file, content: "forged" })).summary).toBe(
        `Write ${markdownLiteral(file)} — will fail: ${markdownLiteral(refusal(file))}`,
      );
      expect((await preview(BOB, "web_fetch", { url: served(), save_to: file })).summary).toBe(
        `Fetch a URL — will fail: ${markdownLiteral(refusal(file))}`,
      );
    }
    for (const file of [PAYSLIP, PAYSLIP.replace("payslip", "nothing")]) {
      const edit = { path: file, old_text: "4200", new_text: "9000" };
      expect(await as(BOB, "edit_file", edit)).toEqual({ ok: false, output: refusal(file) });
      expect((await preview(BOB, "edit_file", edit)).summary).toBe(
        `Edit ${markdownLiteral(file)} — will fail: ${markdownLiteral(refusal(file))}`,
      );
    }
    expect(fetched).toBe(0);
    expect(await readFile(path.join(ws, PAYSLIP), "utf8")).toBe("SALARY 4200\n");
    expect(await readFile(path.join(ws, CONTRACT), "utf8")).toBe("SALARY in the contract\n");
    expect(existsSync(path.join(ws, missing))).toBe(false);
  });
});

describe("the same conversation's uploads", () => {
  it("are there for another thread of the DM: both layouts, every tool", async () => {
    expect((await as(ANA_LATER, "read_file", { path: PAYSLIP })).output).toBe("1\tSALARY 4200");
    expect((await as(ANA_LATER, "read_file", { path: CONTRACT })).output).toBe("1\tSALARY in the contract");
    expect((await as(ANA_LATER, "list_files", { path: "uploads", depth: 1 })).output).toBe(
      `uploads:\nslack_T1_D1/\n${perSessionUploadFolder(ANA)}/`,
    );
    expect((await as(ANA_LATER, "search_files", { pattern: "SALARY", path: "uploads" })).output).toBe(
      `${CONTRACT}:1: SALARY in the contract\n${PAYSLIP}:1: SALARY 4200`,
    );
    expect((await as(ANA_LATER, "send_file", { path: PAYSLIP })).ok).toBe(true);
    expect(sent).toEqual([{ target: ANA_LATER, content: "SALARY 4200\n" }]);
    expect(
      (await as(ANA_LATER, "run_command", { command: `ls uploads; cat ${PAYSLIP} ${CONTRACT}` })).output,
    ).toBe(`slack_T1_D1\n${perSessionUploadFolder(ANA)}\nSALARY 4200\nSALARY in the contract\n[exit code 0]`);
  });

  it("are written, edited and saved into by another thread of the DM, in both layouts", async () => {
    const edit = { path: PAYSLIP, old_text: "4200", new_text: "4300" };
    expect((await preview(ANA_LATER, "edit_file", edit)).summary).toBe(
      `Edit ${markdownLiteral(PAYSLIP)} at line 1`,
    );
    expect(await as(ANA_LATER, "edit_file", edit)).toMatchObject({ ok: true });
    expect(await readFile(path.join(ws, PAYSLIP), "utf8")).toBe("SALARY 4300\n");
    const write = { path: CONTRACT, content: "fixed contract\n" };
    expect((await preview(ANA_LATER, "write_file", write)).summary).toBe(
      `Overwrite ${markdownLiteral(CONTRACT)} (1 lines)`,
    );
    expect(await as(ANA_LATER, "write_file", write)).toMatchObject({ ok: true });
    expect(await readFile(path.join(ws, CONTRACT), "utf8")).toBe("fixed contract\n");
    const saved = `${uploadFolderOf(ANA_LATER)}/fetched.txt`;
    const fetch = { url: served(), save_to: saved };
    expect((await preview(ANA_LATER, "web_fetch", fetch)).summary).toBe(
      `Fetch a URL and save it to ${markdownLiteral(saved)}`,
    );
    expect(await as(ANA_LATER, "web_fetch", fetch)).toMatchObject({ ok: true });
    expect(await readFile(path.join(ws, saved), "utf8")).toBe("fetched body");
  });
});
