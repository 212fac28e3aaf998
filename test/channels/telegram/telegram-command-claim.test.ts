/**
 * A command runs once per update and never fails in silence: its update claimed in the session
 * layer's record of deliveries, a /stop delivered again (a webhook's redelivery) stops nothing
 * more, nor is an access command (/start, /pair, /pairs, /unpair) answered again; a command whose claim cannot be made (the record unreachable) or that fails once
 * claimed is answered that it did not work; a /stop the record cannot place still stops.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { RecordedCommand } from "../../support/recording-service.js";
import {
  ALICE,
  ALICE_DM,
  type Harness,
  MALLORY,
  MALLORY_DM,
  ScriptedService,
  startHarness,
  TEST_WEBHOOK,
} from "./harness.js";
import { postToWebhook } from "./post-to-webhook.js";

/** A service whose record of deliveries cannot be reached. */
class RecordDown extends ScriptedService {
  override async firstDelivery(): Promise<boolean> {
    throw new Error("store unreachable");
  }
}

/** A service whose /status fails once its update is claimed. */
class StatusFails extends ScriptedService {
  protected override reply(command: RecordedCommand): string {
    if (command.name === "status") throw new Error("status failed");
    return super.reply(command);
  }
}

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** What a person is told when their command `name` could not run. */
const failed = (name: string) => `Sorry, /${name} did not work. Please try again.`;

/** What the bot has said to Alice. */
function toAlice(h: Harness): string[] {
  return h.tg.state.botMessages(ALICE.id).map((message) => message.text ?? "");
}

describe("telegram: a service command's run", () => {
  it("tells the person when its claim cannot be made, and runs nothing", async () => {
    const service = new RecordDown();
    harness = await startHarness({ service });
    const h = harness;
    h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/status" });
    await h.tg.waitFor(() => toAlice(h).includes(failed("status")));
    expect(service.commands).toEqual([]);
  });

  it("tells the person when the command fails once claimed", async () => {
    const service = new StatusFails();
    harness = await startHarness({ service });
    const h = harness;
    h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/status" });
    await h.tg.waitFor(() => toAlice(h).includes(failed("status")));
    expect(service.commands.map((command) => command.name)).toEqual(["status"]);
  });

  it("runs a /stop delivered twice (a webhook redelivery) once", async () => {
    const service = new ScriptedService();
    harness = await startHarness({ service, webhook: TEST_WEBHOOK });
    const { tg, channel } = harness;
    const update = tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/stop" }).update;
    expect(await postToWebhook(channel.webhookPort(), update)).toBe("status 200");
    expect(await postToWebhook(channel.webhookPort(), update)).toBe("status 200");
    // A later command's answer: both deliveries of the /stop were handled before it.
    const later = tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/status" }).update;
    expect(await postToWebhook(channel.webhookPort(), later)).toBe("status 200");
    await service.waitFor(() => service.commands.some((command) => command.name === "status"));
    expect(service.commands.map((command) => command.name)).toEqual(["stop", "status"]);
  });

  it("runs /start, /pair, /pairs and /unpair delivered twice (a webhook redelivery) once each", async () => {
    harness = await startHarness({ webhook: TEST_WEBHOOK });
    const h = harness;
    const post = async (update: unknown) => {
      expect(await postToWebhook(h.channel.webhookPort(), update)).toBe("status 200");
    };
    await post(h.tg.sendUserMessage({ chat: MALLORY_DM, from: MALLORY, text: "hello" }).update);
    const refusal = h.tg.state
      .botMessages(MALLORY.id)
      .map((message) => message.text ?? "")
      .join("\n");
    const code = /\/pair ([A-Z0-9]{6})/.exec(refusal)?.[1];
    expect(code).toBeDefined();
    const commands = ["/start", `/pair ${code}`, "/pairs", `/unpair ${MALLORY.id}`];
    for (const text of commands) {
      const update = h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text }).update;
      await post(update);
      await post(update);
    }
    // A later command's answer: every delivery before it was handled.
    await post(h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/status" }).update);
    await h.tg.waitFor(() => toAlice(h).includes("ran status"));
    expect(toAlice(h)).toHaveLength(commands.length + 1);
  });

  it("tells the person when the claim of /pairs cannot be made", async () => {
    harness = await startHarness({ service: new RecordDown() });
    const h = harness;
    h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/pairs" });
    await h.tg.waitFor(() => toAlice(h).includes(failed("pairs")));
    expect(toAlice(h)).toEqual([failed("pairs")]);
  });

  it("still stops when the record cannot place the /stop", async () => {
    const service = new RecordDown();
    harness = await startHarness({ service });
    const h = harness;
    h.tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/stop" });
    await h.tg.waitFor(() => toAlice(h).includes("ran stop"));
    expect(service.commands.map((command) => command.name)).toEqual(["stop"]);
  });
});
