/**
 * The fake Bot API's method handlers (everything except getUpdates, which waits and lives with
 * the server). Each validates like Telegram and throws `BotApiError` with Telegram's own texts.
 */
import { BotApiError, type BotState, type FakeChat, type FakeUser, type StoredMessage } from "./bot-state.js";
import type { Params, UploadedFile } from "./http-body.js";
import { parseTelegramHtml } from "./html-parser.js";

export type MethodHandler = (state: BotState, params: Params, bot: FakeUser) => unknown;

const TEXT_LIMIT = 4096;
const CAPTION_LIMIT = 1024;
const NOT_MODIFIED =
  "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message";
const CHAT_ACTIONS = new Set([
  "typing",
  "upload_photo",
  "record_video",
  "upload_video",
  "record_voice",
  "upload_voice",
  "upload_document",
  "choose_sticker",
  "find_location",
  "record_video_note",
  "upload_video_note",
]);

function visibleText(source: unknown, parseMode: unknown, what: "text" | "caption"): string {
  if (typeof source !== "string") throw new BotApiError(400, `Bad Request: message ${what} is empty`);
  let text = source;
  if (parseMode === "HTML") {
    const parsed = parseTelegramHtml(source);
    if (!parsed.ok) throw new BotApiError(400, parsed.description);
    text = parsed.text;
  } else if (parseMode !== undefined) {
    throw new BotApiError(400, `Bad Request: unsupported parse_mode "${String(parseMode)}"`);
  }
  if (what === "text" && text.trim() === "") throw new BotApiError(400, "Bad Request: message text is empty");
  if (what === "text" && text.length > TEXT_LIMIT)
    throw new BotApiError(400, "Bad Request: message is too long");
  if (what === "caption" && text.length > CAPTION_LIMIT) {
    throw new BotApiError(400, "Bad Request: message caption is too long");
  }
  return text;
}

function threadOf(chat: FakeChat, params: Params): number | undefined {
  if (params.message_thread_id === undefined) return undefined;
  const thread = Number(params.message_thread_id);
  if (!chat.is_forum || !Number.isInteger(thread) || thread === 1) {
    throw new BotApiError(400, "Bad Request: message thread not found");
  }
  return thread;
}

function keyboardOf(markup: unknown): StoredMessage["reply_markup"] {
  if (markup === undefined) return undefined;
  const rows = (markup as { inline_keyboard?: unknown }).inline_keyboard;
  if (!Array.isArray(rows)) throw new BotApiError(400, "Bad Request: can't parse inline keyboard button");
  for (const row of rows) {
    if (!Array.isArray(row)) throw new BotApiError(400, "Bad Request: can't parse inline keyboard button");
    for (const button of row) {
      if (typeof button?.text !== "string" || button.text === "") {
        throw new BotApiError(400, "Bad Request: BUTTON_TEXT_INVALID");
      }
      if (button.url === undefined) {
        const data = button.callback_data;
        const bytes = typeof data === "string" ? Buffer.byteLength(data, "utf8") : 0;
        if (bytes < 1 || bytes > 64) throw new BotApiError(400, "Bad Request: BUTTON_DATA_INVALID");
      }
    }
  }
  return { inline_keyboard: rows };
}

function replyTarget(state: BotState, chatId: number, params: Params): number | undefined {
  const reply =
    params.reply_parameters ??
    (params.reply_to_message_id ? { message_id: params.reply_to_message_id } : undefined);
  if (reply === undefined) return undefined;
  if (state.message(chatId, Number(reply.message_id))) return Number(reply.message_id);
  if (reply.allow_sending_without_reply) return undefined;
  throw new BotApiError(400, "Bad Request: message to be replied not found");
}

/** The Bot API shape of a stored message. */
export function apiMessage(state: BotState, message: StoredMessage): Record<string, unknown> {
  const chat = state.requireChat(message.chat_id);
  return {
    message_id: message.message_id,
    date: message.date,
    chat,
    from: message.from,
    // A thread in a forum is a topic; in another supergroup it is a reply thread, no topic.
    ...(message.message_thread_id !== undefined
      ? {
          message_thread_id: message.message_thread_id,
          ...(chat.is_forum === true ? { is_topic_message: true } : {}),
        }
      : {}),
    ...(message.document
      ? {
          document: { file_id: `sent-${message.message_id}`, file_name: message.document.filename },
          caption: message.text,
        }
      : { text: message.text }),
    ...(message.reply_markup ? { reply_markup: message.reply_markup } : {}),
  };
}

function editable(state: BotState, params: Params): StoredMessage {
  const chat = state.requireChat(params.chat_id);
  const message = state.message(chat.id, Number(params.message_id));
  if (!message) throw new BotApiError(400, "Bad Request: message to edit not found");
  if (!message.from.is_bot) throw new BotApiError(400, "Bad Request: message can't be edited");
  return message;
}

const sendMessage: MethodHandler = (state, params, bot) => {
  const chat = state.requireChat(params.chat_id);
  const message_thread_id = threadOf(chat, params);
  const text = visibleText(params.text, params.parse_mode, "text");
  // A force_reply (sendMessage only) asks the client to reply; the message keeps no keyboard.
  const force = (params.reply_markup as { force_reply?: unknown; selective?: unknown } | undefined) ?? {};
  const force_reply = force.force_reply === true ? { selective: force.selective === true } : undefined;
  const reply_markup = force_reply ? undefined : keyboardOf(params.reply_markup);
  const reply_to_message_id = replyTarget(state, chat.id, params);
  const stored = state.addMessage({
    ...(force_reply ? { force_reply } : {}),
    chat_id: chat.id,
    from: bot,
    text,
    source: params.text,
    parse_mode: params.parse_mode,
    reply_markup,
    message_thread_id: message_thread_id ?? state.replyThreadOf(chat, reply_to_message_id),
    reply_to_message_id,
  });
  return apiMessage(state, stored);
};

const editMessageText: MethodHandler = (state, params) => {
  const message = editable(state, params);
  const text = visibleText(params.text, params.parse_mode, "text");
  const reply_markup = keyboardOf(params.reply_markup);
  const same =
    message.source === params.text &&
    message.parse_mode === params.parse_mode &&
    JSON.stringify(message.reply_markup ?? null) === JSON.stringify(reply_markup ?? null);
  if (same) throw new BotApiError(400, NOT_MODIFIED);
  Object.assign(message, { text, source: params.text, parse_mode: params.parse_mode, reply_markup });
  message.edits++;
  return apiMessage(state, message);
};

const editMessageReplyMarkup: MethodHandler = (state, params) => {
  const message = editable(state, params);
  const reply_markup = keyboardOf(params.reply_markup);
  if (JSON.stringify(message.reply_markup ?? null) === JSON.stringify(reply_markup ?? null)) {
    throw new BotApiError(400, NOT_MODIFIED);
  }
  message.reply_markup = reply_markup;
  message.edits++;
  return apiMessage(state, message);
};

const sendMessageDraft: MethodHandler = (state, params) => {
  const chat = state.requireChat(params.chat_id);
  if (chat.type !== "private") throw new BotApiError(400, "Bad Request: TEXTDRAFT_PEER_INVALID");
  const draft_id = Number(params.draft_id);
  if (!Number.isInteger(draft_id) || draft_id === 0)
    throw new BotApiError(400, "Bad Request: DRAFT_ID_INVALID");
  const text =
    params.text === undefined || params.text === ""
      ? ""
      : visibleText(params.text, params.parse_mode, "text");
  const thread = params.message_thread_id === undefined ? undefined : Number(params.message_thread_id);
  state.drafts.push({
    chat_id: chat.id,
    draft_id,
    text,
    ...(thread === undefined ? {} : { message_thread_id: thread }),
  });
  return true;
};

const sendChatAction: MethodHandler = (state, params) => {
  const chat = state.requireChat(params.chat_id);
  threadOf(chat, params);
  if (!CHAT_ACTIONS.has(String(params.action)))
    throw new BotApiError(400, "Bad Request: wrong parameter action in request");
  return true;
};

const answerCallbackQuery: MethodHandler = (state, params) => {
  const query = state.queries.get(String(params.callback_query_id));
  if (!query || query.answer) {
    throw new BotApiError(
      400,
      "Bad Request: query is too old and response timeout expired or query ID is invalid",
    );
  }
  if (typeof params.text === "string" && params.text.length > 200) {
    throw new BotApiError(400, "Bad Request: MESSAGE_TOO_LONG");
  }
  query.answer = { text: params.text, show_alert: params.show_alert };
  return true;
};

const getFile: MethodHandler = (state, params) => {
  const file = state.files.get(String(params.file_id));
  if (!file) throw new BotApiError(400, "Bad Request: invalid file_id");
  return {
    file_id: file.file_id,
    file_unique_id: file.file_unique_id,
    file_size: file.content.length,
    file_path: file.file_path,
  };
};

const sendDocument: MethodHandler = (state, params, bot) => {
  const chat = state.requireChat(params.chat_id);
  const message_thread_id = threadOf(chat, params);
  const document = params.document as UploadedFile | string | undefined;
  if (document === undefined || typeof document === "string") {
    throw new BotApiError(400, "Bad Request: there is no document in the request");
  }
  const caption =
    params.caption === undefined ? "" : visibleText(params.caption, params.parse_mode, "caption");
  const reply_to_message_id = replyTarget(state, chat.id, params);
  const stored = state.addMessage({
    chat_id: chat.id,
    from: bot,
    text: caption,
    source: params.caption ?? "",
    parse_mode: params.parse_mode,
    message_thread_id: message_thread_id ?? state.replyThreadOf(chat, reply_to_message_id),
    reply_to_message_id,
    document,
  });
  return apiMessage(state, stored);
};

const getChatMember: MethodHandler = (state, params, bot) => {
  const chat = state.requireChat(params.chat_id);
  const userId = Number(params.user_id);
  const members = state.members.get(chat.id);
  const status = members ? (members.get(userId) ?? "left") : "member";
  const user =
    userId === bot.id ? { ...bot, is_bot: true } : { id: userId, is_bot: false, first_name: "User" };
  return { status, user };
};

const getChat: MethodHandler = (state, params) => {
  const chat = state.requireChat(params.chat_id);
  return { ...chat };
};

/** Every method the fake answers besides getUpdates. */
export const METHODS: Readonly<Record<string, MethodHandler>> = {
  getMe: (_state, _params, bot) => ({ ...bot, can_join_groups: true, can_read_all_group_messages: false }),
  sendMessage,
  editMessageText,
  editMessageReplyMarkup,
  sendMessageDraft,
  sendChatAction,
  answerCallbackQuery,
  getFile,
  sendDocument,
  getChatMember,
  getChat,
  setMyCommands: (state, params) => {
    state.commands = Array.isArray(params.commands) ? params.commands : [];
    return true;
  },
  deleteWebhook: (state) => {
    state.webhook = undefined;
    return true;
  },
  setWebhook: (state, params) => {
    if (typeof params.url !== "string" || !params.url.startsWith("https://")) {
      throw new BotApiError(400, "Bad Request: bad webhook: An HTTPS URL must be provided for webhook");
    }
    state.webhook = { url: params.url, secret_token: params.secret_token };
    return true;
  },
};
