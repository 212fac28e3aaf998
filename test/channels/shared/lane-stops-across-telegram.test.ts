/**
 * A person's /stop reaches the voice note they sent before it in another process: two Telegram
 * channels in webhook mode (two processes behind one webhook URL, each update posted to the one
 * the balancer picked), each with its own coordination on one real redis-server. Alice's voice
 * note is still being transcribed in A when her /stop goes to B: B answers the stop (with nothing
 * dropped there), A never hands the voice note over (before, it did, after the stop, starting a
 * turn) and tells her in her chat that one message was dropped; her next message to A is handed
 * over as usual. A message she sent before her /stop (its message_id before the stop's) that
 * reaches A only after B announced the stop (a lagging delivery) is dropped there too, she is told
 * so, and what she sends after the stop goes through. She is told only of a message never handed
 * over: Telegram's redelivery of an update A handed over before her /stop (its answer lost),
 * reaching B after the stop, is dropped there without a word (each drop is claimed in the session
 * layer's record of deliveries, which both processes share), and so is one of a /skill A ran —
 * which, delivered again before the stop, runs nothing either (a command's run is claimed there).
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import pino from "pino";
import type { Update } from "grammy/types";
import { describe, expect, it } from "vitest";
import type { AttachmentIntake } from "../../../src/attachments/inbound-attachments.js";
import { droppedNote } from "../../../src/channels/shared/hand-over-lanes.js";
import { laneStopChannel } from "../../../src/channels/shared/lane-stop-broadcast.js";
import { TelegramChannel } from "../../../src/channels/telegram/telegram-channel.js";
import type { Coordination } from "../../../src/store/coordination/coordination.js";
import { storeSlotBudget } from "../../../src/store/slot-budget.js";
import { type FakeTelegram, startFakeTelegram } from "../../fakes/fake-telegram/fake-telegram.js";
import { withOutputs } from "../../support/adapter-outputs.js";
import {
  ALICE,
  ALICE_DM,
  fakeTelegramChannelOptions,
  ScriptedService,
  TEST_WEBHOOK,
} from "../telegram/harness.js";
import { postToWebhook } from "../telegram/post-to-webhook.js";
import { VOICE } from "../telegram/slow-recording.js";
import { processesOnOneRedis } from "./support-lane-stops.js";

describe("telegram: a /stop taken by another process", () => {
  const processes = processesOnOneRedis();
  const { cleanup } = processes;

  /**
   * Post Alice's /stop through `taker`; resolves with its answer once `listener` (the other
   * process's connection) has heard the announcement, so that process's lanes had it.
   */
  const stopHeardBy = async (
    tg: FakeTelegram,
    taker: { post(update: Update): Promise<string> },
    listener: Coordination,
  ): Promise<string> => {
    let heard!: () => void;
    const announced = new Promise<void>((resolve) => {
      heard = resolve;
    });
    cleanup.push(await listener.subscribe(laneStopChannel("telegram"), () => heard()));
    const stop = await taker.post(tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/stop" }).update);
    await announced;
    return stop;
  };

  /**
   * One process's Telegram channel on `tg`, its webhook on a port of its own, sharing the
   * redis-server; a session layer of its own unless `service` (one record of deliveries) is given.
   */
  const processOn = async (
    tg: FakeTelegram,
    root: string,
    setup: { attachments?: AttachmentIntake; laneStops?: Coordination; service?: ScriptedService } = {},
  ) => {
    const { attachments } = setup;
    const coordination = setup.laneStops ?? (await processes.coordination());
    const store = processes.store();
    const service = setup.service ?? new ScriptedService();
    const channel = withOutputs(
      new TelegramChannel(
        fakeTelegramChannelOptions(tg, {
          allowedUsers: [String(ALICE.id)],
          allowedChats: [],
          workspaceRoot: root,
          service,
          logger: pino({ level: "silent" }),
          accessStore: store.space("grants"),
          budget: storeSlotBudget(store.space("budgets")),
          webhook: TEST_WEBHOOK,
          laneStops: coordination,
          ...(attachments ? { attachments } : {}),
        }),
      ),
      service,
    );
    await channel.start();
    cleanup.push(() => channel.stop());
    return { service, post: (update: Update) => postToWebhook(channel.webhookPort(), update) };
  };

  it("drops the voice note A is still reading when B takes her /stop, and A tells her so in her chat", async () => {
    const tg = await startFakeTelegram();
    cleanup.push(() => tg.close());
    const { root, attachments, transcribing, release } = await processes.gatedWorkspace("tg-lane-stops-");
    const a = await processOn(tg, root, { attachments });
    cleanup.push(async () => release());
    const b = await processOn(tg, root);

    const voice = a.post(tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, voice: VOICE }).update);
    await transcribing;
    const stop = await b.post(tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/stop" }).update);
    const texts = () => tg.state.botMessages(ALICE.id).map((message) => message.text);
    await tg.waitFor(() => texts().includes(droppedNote(1)));
    release();
    // Her next message to A waits in her lane behind the voice note's job: once it is in, that job is over.
    const next = await a.post(tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "start over" }).update);
    await a.service.waitFor(() => a.service.received.length === 1);

    expect([await voice, stop, next]).toEqual(["status 200", "status 200", "status 200"]);
    expect(b.service.commands.map((command) => command.name)).toEqual(["stop"]);
    expect(a.service.commands).toEqual([]);
    expect(a.service.received.map((message) => message.text)).toEqual(["start over"]);
    expect(b.service.received).toEqual([]);
    // B answered the stop with what it dropped itself (nothing); A told her what it dropped.
    expect(texts().sort()).toEqual([droppedNote(1), "ran stop"].sort());
  });

  it("drops in A a message she sent before her /stop that reaches A after B announced it, and tells her so", async () => {
    const tg = await startFakeTelegram();
    cleanup.push(() => tg.close());
    const root = await mkdtemp(join(os.tmpdir(), "tg-lane-stops-late-"));
    cleanup.push(() => rm(root, { recursive: true, force: true }));
    const onA = await processes.coordination();
    const a = await processOn(tg, root, { laneStops: onA });
    const b = await processOn(tg, root);
    // Her message is sent (its message_id taken) before her /stop, but reaches A only after the announcement.
    const late = tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "sent before the stop" }).update;
    const stop = await stopHeardBy(tg, b, onA);
    const dropped = await a.post(late);
    const texts = () => tg.state.botMessages(ALICE.id).map((message) => message.text);
    await tg.waitFor(() => texts().includes(droppedNote(1)));
    const after = await a.post(
      tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "after the stop" }).update,
    );
    await a.service.waitFor(() => a.service.received.length === 1);

    expect([stop, dropped, after]).toEqual(["status 200", "status 200", "status 200"]);
    expect(a.service.received.map((message) => message.text)).toEqual(["after the stop"]);
    expect(b.service.commands.map((command) => command.name)).toEqual(["stop"]);
    expect(texts().sort()).toEqual([droppedNote(1), "ran stop"].sort());
  });

  it("drops in B without a word Telegram's redelivery of a message A handed over before her /stop", async () => {
    const tg = await startFakeTelegram();
    cleanup.push(() => tg.close());
    const root = await mkdtemp(join(os.tmpdir(), "tg-lane-stops-redelivered-"));
    cleanup.push(() => rm(root, { recursive: true, force: true }));
    const service = new ScriptedService();
    const onB = await processes.coordination();
    const a = await processOn(tg, root, { service });
    const b = await processOn(tg, root, { laneStops: onB, service });
    const question = tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "what is 2+2" }).update;
    // A answers the webhook once the question is handed over.
    const handedOver = await a.post(question);
    const stop = await stopHeardBy(tg, a, onB);

    // Telegram delivers the question's update again (A's answer was lost), to B: B answers once it
    // has dropped it, and would have told her by then.
    const redelivered = await b.post(question);
    const after = await b.post(
      tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "after the stop" }).update,
    );
    await service.waitFor(() => service.received.length === 2);

    expect([handedOver, stop, redelivered, after]).toEqual([
      "status 200",
      "status 200",
      "status 200",
      "status 200",
    ]);
    expect(service.received.map((message) => message.text)).toEqual(["what is 2+2", "after the stop"]);
    expect(service.commands.map((command) => command.name)).toEqual(["stop"]);
    expect(tg.state.botMessages(ALICE.id).map((message) => message.text)).toEqual(["ran stop"]);
  });

  it("runs a /skill once however often Telegram delivers it, and drops its redelivery after her /stop without a word", async () => {
    const tg = await startFakeTelegram();
    cleanup.push(() => tg.close());
    const root = await mkdtemp(join(os.tmpdir(), "tg-lane-stops-redelivered-command-"));
    cleanup.push(() => rm(root, { recursive: true, force: true }));
    const service = new ScriptedService();
    const onB = await processes.coordination();
    const a = await processOn(tg, root, { service });
    const b = await processOn(tg, root, { laneStops: onB, service });
    const skill = tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "/skill summarise" }).update;
    const ran = await a.post(skill);
    // Delivered again (A's answer was lost) to B before her /stop: already run, so nothing runs.
    const again = await b.post(skill);
    const stop = await stopHeardBy(tg, a, onB);

    // Telegram delivers the /skill's update again (A's answer was lost), to B: a stop's drop, untold.
    const redelivered = await b.post(skill);
    const after = await b.post(
      tg.sendUserMessage({ chat: ALICE_DM, from: ALICE, text: "after the stop" }).update,
    );
    await service.waitFor(() => service.received.length === 1);

    expect([ran, again, stop, redelivered, after]).toEqual(Array(5).fill("status 200"));
    expect(service.commands.map((command) => command.name)).toEqual(["skill", "stop"]);
    expect(tg.state.botMessages(ALICE.id).map((message) => message.text)).toEqual([
      "ran skill summarise",
      "ran stop",
    ]);
  });
});
