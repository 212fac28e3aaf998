/**
 * Button presses: an inline button (a card's approve/deny, a turn's stop/retry) and the private
 * chat draft's stop button. Each checks the presser may use the bot in that chat, then hands the
 * press to `service.press()` with the chat (and topic) of the message it was pressed on: a card is
 * decided only from its own chat (approvals/press-place.ts), since its buttons can reach another (a
 * forwarded copy of the card). A press on no message (an inline-mode message, which the bot never
 * sends) is answered as an inactive button: nothing says where it was pressed. An inline press is
 * answered within Telegram's few seconds ("Working on it…" when the service is slower), so the
 * spinner never hangs; a retry that started loses its button. Kept apart from the message handlers
 * (telegram-handlers.ts): a press never goes through a sender's hand-over lane, so an approval is
 * never stuck behind the turn waiting for it.
 */
import type { Context } from "grammy";
import type { ButtonPress, PressResult } from "../../core/button-press.js";
import { clip } from "../../core/surrogate-pairs.js";
import { INACTIVE_BUTTON } from "../intake-log.js";
import type { TelegramAccess } from "./telegram-access.js";
import { parseCallbackData } from "./telegram-card.js";
import { errorText } from "./telegram-errors.js";
import type { HandOverDeps } from "./telegram-hand-over.js";
import { chatTarget, type TelegramMessage, topicOf, userOf } from "./telegram-inbound.js";
import { accessChatOf } from "./telegram-migrated-chats.js";
import type { ChatMigrations } from "./telegram-migrations.js";

const PRESS_ANSWER_WITHIN_MS = 5000;

/** What the press handlers use of the handlers' dependencies. */
export interface PressDeps extends Pick<HandOverDeps, "service" | "logger"> {
  readonly access: TelegramAccess;
  readonly migrations: ChatMigrations;
}

function alertFor(result: PressResult): { text: string; show_alert: boolean } {
  const text = clip(result.message, 200);
  return { text, show_alert: result.status !== "accepted" };
}

/** An inline button's press. */
export async function onCallback(ctx: Context, deps: PressDeps): Promise<void> {
  const query = ctx.callbackQuery!;
  const action = parseCallbackData(query.data);
  const message = query.message;
  const answer = (text: string, show_alert = false) => ctx.answerCallbackQuery({ text, show_alert });
  if (!action || !message) {
    await answer(INACTIVE_BUTTON);
    return;
  }
  const chat = await accessChatOf(message.chat, deps.migrations);
  const user = { id: query.from.id, name: userOf(query.from).name };
  if (!(await deps.access.allows(chat, user))) {
    await answer(`You are not allowed to use this bot (your user id is ${query.from.id}).`, true);
    return;
  }
  // The chat as its session knows it (a migrated group's first id), with the topic pressed in.
  const topic = "message_thread_id" in message ? topicOf(message as TelegramMessage) : undefined;
  const target = chatTarget(chat.id, topic, chat.alsoKnownAs);
  const press: ButtonPress =
    action.kind === "card"
      ? {
          kind: "card",
          platform: "telegram",
          pendingId: action.pendingId,
          action: action.action,
          user: userOf(query.from),
          pressedIn: target,
        }
      : { kind: "control", control: action.control, target, user: userOf(query.from) };
  const pressed = deps.service.press(press);
  let timer: NodeJS.Timeout | undefined;
  const slow = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, PRESS_ANSWER_WITHIN_MS, undefined);
  });
  try {
    const result = await Promise.race([pressed, slow]);
    if (result) {
      await answer(alertFor(result).text, alertFor(result).show_alert);
      // A retry started: take the button away so it is not pressed twice.
      if (result.status === "accepted" && action.kind === "control" && action.control === "retry") {
        await ctx.editMessageReplyMarkup().catch((error: unknown) => {
          deps.logger.debug({ err: errorText(error) }, "telegram: could not remove the retry button");
        });
      }
    } else {
      await answer("Working on it…");
      pressed.catch((error: unknown) =>
        deps.logger.error({ err: errorText(error) }, "telegram: press failed"),
      );
    }
  } catch (error) {
    deps.logger.error({ err: errorText(error) }, "telegram: press failed");
    await answer("Sorry, that did not work. Please try again.", true);
  } finally {
    clearTimeout(timer);
  }
}

/** The stop button of a private chat's streamed draft: stops that chat's turn. */
export async function onStopGeneration(ctx: Context, deps: PressDeps): Promise<void> {
  const stopped = ctx.update.stopped_message_generation!;
  const user = {
    id: stopped.chat.id,
    name: stopped.chat.username ? `@${stopped.chat.username}` : (stopped.chat.first_name ?? ""),
  };
  if (!(await deps.access.allows(stopped.chat, user))) return;
  // Topic 1 is a forum's General topic, the chat itself (as topicOf reads it).
  const topic = stopped.message_thread_id !== 1 ? stopped.message_thread_id : undefined;
  const target = chatTarget(stopped.chat.id, topic);
  await deps.service.press({
    kind: "control",
    control: "stop",
    target,
    user: { id: String(user.id), name: user.name },
  });
}
