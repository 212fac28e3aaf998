/**
 * Files people send on Slack, saved into the workspace the agent's shell can change: the
 * session's uploads folder made a link to a folder outside is never written into.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, symlink } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { downloadFiles } from "../../../src/channels/slack/slack-files.js";
import { createWorkspacePaths } from "../../../src/tools/files/workspace-paths.js";

let server: http.Server;
let apiUrl: string;
let root: string;
let outside: string;

beforeEach(async () => {
  server = http.createServer((req, res) => {
    if (req.url?.endsWith("/held")) return; // never answered: the download deadline ends it
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("file body");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
  root = await mkdtemp(join(tmpdir(), "slack-files-"));
  outside = await mkdtemp(join(tmpdir(), "outside-"));
});
afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

const download = (
  name = "notes.txt",
  { path = "files/F1", timeoutMs }: { path?: string; timeoutMs?: number } = {},
) =>
  downloadFiles(
    [{ id: "F1", name, mimetype: "text/plain", url_private: `${apiUrl}${path}` }],
    "uploads/slack_T1_C1/1700.1",
    {
      botToken: "xoxb-test",
      apiUrl,
      maxBytes: 1_048_576,
      workspace: createWorkspacePaths({ root }),
      logger: pino({ level: "silent" }),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    },
  );

describe("downloadFiles", () => {
  it("saves a file under the session's uploads folder", async () => {
    const saved = await download();
    expect(saved.notes).toEqual([]);
    expect(saved.files).toEqual([
      {
        path: "uploads/slack_T1_C1/1700.1/F1-notes.txt",
        name: "notes.txt",
        bytes: 9,
        mediaType: "text/plain",
      },
    ]);
    expect(await readFile(join(root, "uploads/slack_T1_C1/1700.1/F1-notes.txt"), "utf8")).toBe("file body");
  });

  it("gives up on a download Slack never answers, with a note, at the download deadline", async () => {
    const saved = await download("notes.txt", { path: "files/F1/held", timeoutMs: 200 });
    expect(saved).toEqual({
      files: [],
      notes: ['The attached file "notes.txt" was not saved: the download took longer than 0.2 s.'],
    });
  });

  it("refuses a file named like a credential, as the file tools do, with a note", async () => {
    const saved = await download("deploy.pem");
    expect(saved).toEqual({
      files: [],
      notes: [
        'The attached file "deploy.pem" was not saved: it is named like a credential file (a private key, .env, …), and credentials stay out of the workspace.',
      ],
    });
  });

  it("never writes into a folder outside the workspace that the uploads folder was made a link to", async () => {
    await mkdir(join(root, "uploads/slack_T1_C1"), { recursive: true });
    await symlink(outside, join(root, "uploads/slack_T1_C1/1700.1"));
    const saved = await download();
    expect(saved.files).toEqual([]);
    expect(saved.notes).toEqual([
      expect.stringMatching(
        /^The attached file "notes\.txt" was not saved: its place in the workspace is not safe to write \(.*outside the workspace/,
      ),
    ]);
    expect(await readdir(outside)).toEqual([]);
  });
});
