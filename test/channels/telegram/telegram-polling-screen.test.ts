/**
 * The polling receiver screens each getUpdates answer as it watches it: entries that are not
 * updates never reach the runner (which takes its next offset from them), each is logged once,
 * and a failed answer still marks polling unhealthy and comes back as it was.
 */
import { Bot, type Transformer } from "grammy";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { IntakeLog } from "../../../src/channels/intake-log.js";
import { screenPolled } from "../../../src/channels/telegram/telegram-intake.js";
import { PollingReceiver } from "../../../src/channels/telegram/telegram-polling.js";

/** A bot whose getUpdates answers `answer`, under a polling receiver screening into a recorded log. */
function polledBot(answer: unknown) {
  const bot = new Bot("1:token");
  const answered: Transformer = async (prev, method, payload, signal) =>
    method === "getUpdates" ? (answer as never) : prev(method, payload, signal);
  bot.api.config.use(answered);
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: "debug" }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const intake = new IntakeLog(logger);
  new PollingReceiver(bot, {
    allowedUpdates: [],
    logger,
    backoff: { initialMs: 1000, maxMs: 1000 },
    screen: (polled) => screenPolled(polled, intake),
  });
  const refused = () =>
    lines.filter((line) => line.msg === "inbound payload refused").map((line) => line.kind);
  return { bot, refused };
}

describe("the polling receiver's screen of getUpdates answers", () => {
  it("drops entries that are not updates, logging each, and keeps the updates", async () => {
    const update = { update_id: 7, message: { message_id: 1 } };
    const { bot, refused } = polledBot({ ok: true, result: [update, 42, { update_id: "8" }, null] });
    expect(await bot.api.getUpdates()).toEqual([update]);
    expect(refused()).toEqual(["malformed_update", "malformed_update", "malformed_update"]);
  });

  it("reads a result that is not a list as no updates", async () => {
    const { bot, refused } = polledBot({ ok: true, result: { update_id: 7 } });
    expect(await bot.api.getUpdates()).toEqual([]);
    expect(refused()).toEqual(["malformed_updates"]);
  });

  it("leaves Telegram's refusal as it came", async () => {
    const { bot, refused } = polledBot({ ok: false, error_code: 409, description: "Conflict" });
    await expect(bot.api.getUpdates()).rejects.toMatchObject({ error_code: 409 });
    expect(refused()).toEqual([]);
  });
});
