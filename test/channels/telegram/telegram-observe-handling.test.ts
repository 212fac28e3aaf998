/**
 * A group message reaches the observer (channel subscriptions) beside its handling: a message
 * addressed to the bot still starts its turn, the chat's next message is handled only once the
 * report settled, a private chat's message is not reported, and an observer that fails is logged
 * without stopping the chat.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ObservedMessage } from "../../../src/subscriptions/observed-message.js";
import { BOB, BOB_DM, type Harness, OPEN_GROUP, startHarness } from "./harness.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe("Telegram channel: observed group messages", () => {
  it("reports each group message, starts the turn of one addressed to the bot, and holds the chat until the report settles", async () => {
    const observed: ObservedMessage[] = [];
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    harness = await startHarness({
      observe: (message) => {
        observed.push(message);
        return observed.length === 1 ? held : undefined;
      },
    });
    const { tg, service } = harness;
    tg.sendUserMessage({ chat: OPEN_GROUP, from: BOB, text: "@coworker_bot deploy" });
    tg.sendUserMessage({ chat: OPEN_GROUP, from: BOB, text: "just chatting" });
    await tg.waitFor(() => service.received.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The first message's report is still held: the chat's next message waits for it.
    expect(observed.map((message) => message.text)).toEqual(["@coworker_bot deploy"]);
    release();
    await tg.waitFor(() => observed.length === 2);
    expect(observed.map((message) => [message.text, message.mentionsBot])).toEqual([
      ["@coworker_bot deploy", true],
      ["just chatting", false],
    ]);
    expect(service.received).toHaveLength(1);
    // A person's chat with the bot is never observed; the message still starts its turn.
    tg.sendUserMessage({ chat: BOB_DM, from: BOB, text: "hello" });
    await tg.waitFor(() => service.received.length === 2);
    expect(observed).toHaveLength(2);
  });

  it("logs an observer's failure and goes on handling the chat", async () => {
    harness = await startHarness({ observe: () => Promise.reject(new Error("observer down")) });
    const { tg, service } = harness;
    tg.sendUserMessage({ chat: OPEN_GROUP, from: BOB, text: "@coworker_bot first" });
    tg.sendUserMessage({ chat: OPEN_GROUP, from: BOB, text: "@coworker_bot second" });
    await tg.waitFor(() => service.received.length === 2);
    const failures = harness.logs().filter((line) => line.msg === "telegram: observing failed");
    expect(failures).toHaveLength(2);
  });
});
