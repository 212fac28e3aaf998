/**
 * send_file's approval card names the file it will really upload (its workspace path after links
 * are resolved, the uploaded name, its size) and is bound to it: an approved upload runs only while
 * the resolved file and its bytes are what the card showed — through the real engine, a person
 * approving the card while the file is swapped or rewritten behind it.
 */
import { mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ThreadTarget } from "../../src/core/thread-target.js";
import type { ToolPreview } from "../../src/core/tool.js";
import { TOOL_RESULT } from "../../src/engine/tool-results.js";
import {
  createMessagingTools,
  UPLOAD_CHANGED_SINCE_APPROVAL,
} from "../../src/tools/messaging/messaging-tools.js";
import type { Messenger, MessengerResult, OutgoingFile } from "../../src/tools/messaging/messenger.js";
import { textStep, toolStep } from "../support/scripted-provider.js";
import { collect, makeHarness, makeRequest, resultOf } from "../engine/helpers/harness.js";
import { call, makeContext, TEST_TARGET, tempDir } from "./support/tool-context.js";
import { toolWorkspace } from "./support/tool-workspace.js";

/** A Messenger that records what it uploads. */
class RecordingMessenger implements Messenger {
  readonly files: Array<{ name: string; content: string }> = [];
  async sendMessage(): Promise<MessengerResult> {
    return { ok: true, where: "this thread" };
  }
  async destinationOf(): Promise<string> {
    return "this thread";
  }
  async sendFile(_target: ThreadTarget, file: OutgoingFile): Promise<MessengerResult> {
    this.files.push({ name: file.name, content: await readFile(file.path, "utf8") });
    return { ok: true, where: "this thread" };
  }
}

let ws: string;
let cleanup: () => Promise<void>;
let messenger: RecordingMessenger;
beforeEach(async () => {
  ({ dir: ws, cleanup } = await tempDir("send-file-binding-"));
  messenger = new RecordingMessenger();
  await writeFile(path.join(ws, "a.txt"), "quarterly numbers\n");
  await mkdir(path.join(ws, "hr"));
  await writeFile(path.join(ws, "hr/salaries.txt"), "everyone's pay\n");
});
afterEach(async () => {
  await cleanup();
});

const sendFileTool = () =>
  createMessagingTools({ messenger, workspace: toolWorkspace({ root: ws }), maxFileBytes: 1000 })[1];

/**
 * One approved send_file call through the engine: `behindTheCard` runs while the card waits.
 * Returns the card's preview and the call's result.
 */
async function approvedUpload(file: string, behindTheCard: () => Promise<void> = async () => {}) {
  const h = makeHarness({
    steps: [toolStep(["f1", "send_file", { path: file }]), textStep("done")],
    extraTools: [sendFileTool()],
  });
  const turn = collect(
    h.engine.run(makeRequest({ workspace: { root: ws, context: "" }, metadata: { target: TEST_TARGET } })),
  );
  const asked = await h.broker.next("f1");
  const card = asked.kind === "approval" ? asked.request.preview : undefined;
  await behindTheCard();
  h.broker.approve("f1", "once");
  await turn;
  return { card, result: resultOf(h.persistence.appended, "f1") };
}

describe("an approved send_file", () => {
  it("uploads the file when it is still the one the card showed", async () => {
    const { card, result } = await approvedUpload("a.txt");
    expect(card?.summary).toBe('Upload a\\.txt as "a\\.txt" (18 B) into this conversation');
    expect(result).toBe("Uploaded a.txt to this thread.");
    expect(messenger.files).toEqual([{ name: "a.txt", content: "quarterly numbers\n" }]);
  });

  it("is not run when the path became a link to another file while the card waited", async () => {
    const { card, result } = await approvedUpload("a.txt", async () => {
      await rm(path.join(ws, "a.txt"));
      await symlink(path.join(ws, "hr/salaries.txt"), path.join(ws, "a.txt"));
    });
    expect(card?.summary).toContain("Upload a\\.txt");
    expect(result).toBe(TOOL_RESULT.changedSinceApproval);
    expect(messenger.files).toEqual([]);
  });

  it("is not run when the file's content changed while the card waited", async () => {
    const { result } = await approvedUpload("a.txt", async () => {
      await writeFile(path.join(ws, "a.txt"), "quarterly numbers, and everyone's pay\n");
    });
    expect(result).toBe(TOOL_RESULT.changedSinceApproval);
    expect(messenger.files).toEqual([]);
  });

  it("is not run when the same-sized content changed while the card waited", async () => {
    const { result } = await approvedUpload("a.txt", async () => {
      await writeFile(path.join(ws, "a.txt"), "QUARTERLY NUMBERS\n");
    });
    expect(result).toBe(TOOL_RESULT.changedSinceApproval);
    expect(messenger.files).toEqual([]);
  });

  it("whose path is a link at preview time names the real target on its card", async () => {
    await symlink(path.join(ws, "hr/salaries.txt"), path.join(ws, "report.txt"));
    const { card, result } = await approvedUpload("report.txt");
    expect(card?.summary).toBe(
      'Upload hr\\/salaries\\.txt (report\\.txt leads there) as "salaries\\.txt" (15 B) into this conversation',
    );
    expect(result).toBe("Uploaded hr/salaries.txt to this thread.");
    expect(messenger.files).toEqual([{ name: "salaries.txt", content: "everyone's pay\n" }]);
  });
});

describe("send_file's bound preview", () => {
  it("binds the preview and carries a fingerprint of the resolved file and its bytes", async () => {
    const tool = sendFileTool();
    expect(tool.bindsPreview).toBe(true);
    const context = makeContext({ root: ws });
    const before = await tool.preview?.({ path: "a.txt" }, context);
    expect(before?.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect((await tool.preview?.({ path: "a.txt" }, context))?.fingerprint).toBe(before?.fingerprint);
    await writeFile(path.join(ws, "a.txt"), "QUARTERLY NUMBERS\n");
    expect((await tool.preview?.({ path: "a.txt" }, context))?.fingerprint).not.toBe(before?.fingerprint);
  });

  it("refuses at run time bytes other than those of the checked preview it was handed", async () => {
    const tool = sendFileTool();
    const checkedPreview = (await tool.preview?.(
      { path: "a.txt" },
      makeContext({ root: ws }),
    )) as ToolPreview;
    // Between the engine's check and the upload, the file is rewritten.
    await writeFile(path.join(ws, "a.txt"), "QUARTERLY NUMBERS\n");
    expect(await call(tool, { path: "a.txt" }, { ...makeContext({ root: ws }), checkedPreview })).toEqual({
      ok: false,
      output: UPLOAD_CHANGED_SINCE_APPROVAL,
    });
    expect(messenger.files).toEqual([]);
  });

  it("says on its card when the upload would fail", async () => {
    await writeFile(path.join(ws, "big.txt"), "x".repeat(1001));
    const tool = sendFileTool();
    const context = makeContext({ root: ws });
    expect((await tool.preview?.({ path: "big.txt" }, context))?.summary).toBe(
      'Upload big\\.txt as "big\\.txt" (1001 B) — will fail: big\\.txt is 1001 bytes\\, over the 1000\\-byte upload limit',
    );
    expect((await tool.preview?.({ path: "nope.txt" }, context))?.summary).toBe(
      "Upload nope\\.txt — will fail: nope\\.txt\\: no such file or directory",
    );
  });
});
