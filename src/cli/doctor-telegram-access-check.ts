/**
 * The doctor's check of who may use the Telegram bot: with no allowed users the bot refuses
 * everyone in private chats, nobody can approve a pairing code (only allowed users may), and
 * without allowed chats either it answers nobody at all. That starts without an error, so the
 * check warns; `start` shows it as a warning line too.
 */
import type { CoworkerConfig } from "../config/schema.js";
import type { DoctorCheck } from "./doctor.js";

const ADD_YOURSELF =
  "send /start to the bot (it replies with your user id) and put the id in TELEGRAM_ALLOWED_USERS";

/** Warns when a configured Telegram bot has no allowed users. */
export function telegramAccessCheck(telegram: CoworkerConfig["telegram"]): DoctorCheck {
  return {
    name: "Telegram access",
    async run() {
      if (telegram.bot_token === undefined) return { status: "skip", summary: "Telegram is not configured" };
      const users = telegram.allowed_users.length;
      const chats = telegram.allowed_chats.length;
      if (users > 0)
        return {
          status: "pass",
          summary: `${users} allowed user(s)${chats > 0 ? `, ${chats} allowed chat(s)` : ""}`,
        };
      return {
        status: "warn",
        summary:
          chats === 0
            ? "no allowed users or chats: the bot refuses everyone, and nobody can approve a pairing code"
            : `no allowed users: only members of the ${chats} allowed chat(s) may use the bot there, nobody in a private chat, and nobody can approve a pairing code`,
        fix: ADD_YOURSELF,
      };
    },
  };
}
