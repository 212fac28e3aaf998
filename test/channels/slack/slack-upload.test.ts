/**
 * uploadFile once the file is up: a caption Slack refuses is reported, never thrown — send_file
 * would say the file was not sent (and a retry would post it twice), a cut card would say its
 * file is missing. The file stays in the thread either way.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { attachedFile } from "../../../src/channels/shared/card-attachment.js";
import { DEFAULT_RENDER_SETTINGS } from "../../../src/channels/slack/slack-renderer.js";
import { CapabilityLatch } from "../../../src/channels/slack/slack-capabilities.js";
import { SlackThreadOutput } from "../../../src/channels/slack/slack-thread-output.js";
import { uploadFile } from "../../../src/channels/slack/slack-upload.js";
import type { Card } from "../../../src/core/card.js";
import type { ThreadTarget } from "../../../src/core/thread-target.js";
import { type FakeSlack, startFakeSlack } from "../../fakes/fake-slack/index.js";
import { blockTexts, clientsFor, silentLogger, threadRegistry } from "./support.js";

let fake: FakeSlack;
let target: ThreadTarget;

beforeEach(async () => {
  fake = await startFakeSlack();
  fake.state.addChannel({ id: "C1", name: "general", type: "channel", members: [] });
  target = { platform: "slack", workspace: fake.state.teamId, channel: "C1", thread: fake.state.nextTs() };
});

afterEach(async () => fake.close());

const withFiles = () => fake.state.botMessages("C1", target.thread).filter((m) => m.files?.length);

describe("uploadFile", () => {
  it("says why the caption is missing when Slack takes the file but refuses the caption", async () => {
    const api = clientsFor(fake).api;
    fake.state.fail("chat.postMessage", "msg_too_long");
    const file = { data: Buffer.from("x"), name: "x.txt", comment: "see" };
    expect(await uploadFile(api, target, file, silentLogger)).toEqual({ captionError: "msg_too_long" });
    expect(withFiles()).toHaveLength(1);
    expect(await uploadFile(api, target, file, silentLogger)).toEqual({});
  });

  it("leaves a cut card pointing to its file when only the file's caption was refused", async () => {
    const clients = clientsFor(fake);
    const post = clients.api.chat.postMessage.bind(clients.api.chat);
    let posts = 0;
    // The card's own post goes through; the caption after its file is refused.
    clients.api.chat.postMessage = ((args: Parameters<typeof post>[0]) => {
      posts += 1;
      if (posts === 2) fake.state.fail("chat.postMessage", "restricted_action");
      return post(args);
    }) as typeof post;
    const output = new SlackThreadOutput(
      {
        clients,
        capabilities: new CapabilityLatch(),
        threads: threadRegistry(),
        logger: silentLogger,
        settings: DEFAULT_RENDER_SETTINGS,
        stopTurn: () => {},
      },
      target,
    );
    const card: Card = {
      pendingId: "p1",
      kind: "approval",
      title: "Run a command?",
      blocks: [{ kind: "code", text: `echo hello${" ".repeat(5_000)}; curl https://x.example` }],
      buttons: [{ action: "once", label: "Approve", style: "primary" }],
    };
    const ref = await output.postCard(card);
    expect(posts).toBe(2);
    expect(withFiles()).toHaveLength(1);
    const name = attachedFile(card, ref);
    expect(name).toMatch(/\.txt$/);
    const shown = fake.state.botMessages("C1", target.thread).find((m) => m.ts === ref.messageId);
    expect(blockTexts(shown?.blocks ?? []).join("\n")).toContain(name!);
  });
});
