/**
 * A local fake Telegram Bot API server for tests and benchmarks (node:http on 127.0.0.1, port 0).
 * Serves `/bot<token>/<method>` and `/file/bot<token>/<path>`; getUpdates long-polls with
 * offsets and timeouts and keeps updates until a later offset confirms them. Two concurrent polls
 * conflict as on Telegram: by default the new poller takes over and the waiting one gets the 409;
 * with `concurrentPolls: "conflict"` the second concurrent poll is the one answered 409 (what
 * several processes polling one token see). Every call is recorded; tests inject user messages and
 * button presses, queue failures (429 with retry_after, 409, any error text, a dropped connection,
 * a call never answered) and `waitFor` a condition instead of sleeping.
 */
import { EventEmitter } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { UserFromGetMe } from "grammy/types";
import { apiMessage, METHODS } from "./bot-methods.js";
import { BotApiError, BotState, type FakeChat, type FakeUser, type StoredMessage } from "./bot-state.js";
import { type Params, readParams, respond } from "./http-body.js";
import { type UserMessageInput, userMessage } from "./user-messages.js";

export type { FakeChat, FakeUser, StoredMessage } from "./bot-state.js";
export type { UserMessageInput } from "./user-messages.js";

export interface RecordedCall {
  readonly method: string;
  readonly params: Params;
  /** ms since the fake started */
  readonly at: number;
  /** Telegram's error description when the call failed. */
  readonly error?: string;
}

export interface FakeTelegramOptions {
  readonly token?: string;
  readonly bot?: FakeUser;
  /** false answers sendMessageDraft with 404 (a Bot API server without drafts). */
  readonly draftsSupported?: boolean;
  /** Which of two concurrent getUpdates gets the 409: the waiting one (default) or the new one. */
  readonly concurrentPolls?: "take-over" | "conflict";
}

type Update = Params & { update_id: number };

/** Who a message from an anonymous group admin is `from`. */
export const GROUP_ANONYMOUS_BOT: FakeUser = {
  id: 1087968824,
  is_bot: true,
  first_name: "Group",
  username: "GroupAnonymousBot",
};

/** How a call's connection misbehaves: closed before any answer, or left open with none. */
type ConnectionFault = "drop" | "hold";

/** What dropNext and holdNext call the downloads of `/file/bot<token>/<path>`, as if a method. */
export const FILE_DOWNLOAD = "file download";

interface Waiter {
  readonly response: ServerResponse;
  readonly timer: NodeJS.Timeout;
  readonly limit: number;
  readonly allowed: readonly string[] | undefined;
}

const CONFLICT =
  "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running";

function updateKind(update: Update): string {
  return Object.keys(update).find((key) => key !== "update_id") ?? "";
}

/** The running fake; create with `startFakeTelegram`. */
export class FakeTelegram {
  readonly state = new BotState();
  readonly calls: RecordedCall[] = [];
  readonly bot: FakeUser;
  readonly token: string;
  private readonly changes = new EventEmitter();
  private readonly started = Date.now();
  private readonly failures = new Map<string, BotApiError[]>();
  /** Connection faults still to come, by method, in order (see dropNext, holdNext). */
  private readonly faults = new Map<string, ConnectionFault[]>();
  private updates: Update[] = [];
  private nextUpdateId = 100_000;
  private waiter: Waiter | undefined;
  /** getUpdates answered 409 because another poll was waiting. */
  pollConflicts = 0;
  private readonly server = createServer((request, response) => {
    this.route(request, response).catch((error: unknown) =>
      respond(response, 500, { ok: false, description: String(error) }),
    );
  });

  constructor(private readonly options: FakeTelegramOptions = {}) {
    this.token = options.token ?? "123456:TEST-token";
    this.bot = options.bot ?? { id: 123456, is_bot: true, first_name: "Coworker", username: "coworker_bot" };
    this.changes.setMaxListeners(0);
  }

  /** `http://127.0.0.1:<port>`, the grammY `client.apiRoot`. */
  apiRoot = "";

  /** grammY's `botInfo` for this bot (skips getMe). */
  get botInfo(): UserFromGetMe {
    return {
      ...this.bot,
      is_bot: true as const,
      username: this.bot.username ?? "coworker_bot",
      can_join_groups: true,
      can_read_all_group_messages: false,
      supports_inline_queries: false,
      can_connect_to_business: false,
      has_main_web_app: false,
      has_topics_enabled: false,
      allows_users_to_create_topics: false,
      can_manage_bots: false,
      supports_join_request_queries: false,
    };
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.apiRoot = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    if (this.waiter) this.finishPoll([]);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Calls of one method, in order. */
  callsOf(method: string): RecordedCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  /** The next `times` calls of `method` fail with this error. */
  failNext(
    method: string,
    code: number,
    description: string,
    times = 1,
    parameters?: { retry_after?: number },
  ): void {
    const queue = this.failures.get(method) ?? [];
    for (let i = 0; i < times; i++) queue.push(new BotApiError(code, description, parameters));
    this.failures.set(method, queue);
  }

  /**
   * The next `times` calls of `method` lose their connection before any answer (as a reset
   * keep-alive socket does): the client sees a network failure, and the call is not carried out.
   */
  dropNext(method: string, times = 1): void {
    this.queueFault(method, "drop", times);
  }

  /**
   * The next `times` calls of `method` are taken and never answered (as a server that hangs): the
   * connection stays open until the client gives up or the fake closes, and the call is not
   * carried out. FILE_DOWNLOAD holds the next file downloads.
   */
  holdNext(method: string, times = 1): void {
    this.queueFault(method, "hold", times);
  }

  private queueFault(method: string, fault: ConnectionFault, times: number): void {
    const queue = this.faults.get(method) ?? [];
    for (let i = 0; i < times; i++) queue.push(fault);
    this.faults.set(method, queue);
  }

  /** The next `times` calls of `method` get Telegram's 429 with `retry_after` seconds. */
  rateLimitNext(method: string, retryAfter: number, times = 1): void {
    this.failNext(method, 429, `Too Many Requests: retry after ${retryAfter}`, times, {
      retry_after: retryAfter,
    });
  }

  /** The next `times` getUpdates calls get the 409 another poller would cause. */
  conflictNext(times = 1): void {
    this.failNext("getUpdates", 409, CONFLICT, times);
  }

  /** Queue a raw update (the id is assigned here). */
  injectUpdate(body: Record<string, unknown>): Update {
    const update: Update = { update_id: this.nextUpdateId++, ...body };
    this.updates.push(update);
    setImmediate(() => this.wakePoller());
    this.changed();
    return update;
  }

  /** Updates queued and not yet confirmed by a later getUpdates offset. */
  get pendingUpdates(): number {
    return this.updates.length;
  }

  /** Deliver an already delivered update again, as Telegram does when its offset was never confirmed. */
  redeliver(update: Update): void {
    this.updates.push(update);
    setImmediate(() => this.wakePoller());
    this.changed();
  }

  /** A user writes in a chat: the message is stored and delivered as an update. */
  sendUserMessage(input: UserMessageInput): { update: Update; message: Record<string, unknown> } {
    const message = userMessage(this.state, input);
    return { update: this.injectUpdate({ message }), message };
  }

  /**
   * A group admin with "Remain anonymous" on writes: `from` is Telegram's GroupAnonymousBot and
   * `sender_chat` the group itself.
   */
  sendAnonymousAdminMessage(input: Omit<UserMessageInput, "from">): {
    update: Update;
    message: Record<string, unknown>;
  } {
    const message = userMessage(this.state, { ...input, from: GROUP_ANONYMOUS_BOT });
    message.sender_chat = { id: input.chat.id, type: input.chat.type, title: input.chat.title };
    return { update: this.injectUpdate({ message }), message };
  }

  /** Someone removes the bot from a chat: its status there becomes "left" and a my_chat_member update arrives. */
  removeBot(chat: FakeChat, by: FakeUser): Update {
    this.state.setMember(chat.id, this.bot.id, "left");
    return this.injectUpdate({
      my_chat_member: {
        chat,
        from: by,
        date: Math.floor(Date.now() / 1000),
        old_chat_member: { status: "administrator", user: { ...this.bot, is_bot: true } },
        new_chat_member: { status: "left", user: { ...this.bot, is_bot: true } },
      },
    });
  }

  /**
   * Someone upgrades a group to a supergroup: the supergroup gets a new id (`-100…`), the old id
   * answers every call with Telegram's 400 and `parameters.migrate_to_chat_id`, and — unless
   * `announce` is false — the service messages arrive: `migrate_to_chat_id` in the old chat, then
   * `migrate_from_chat_id` in the new one. Returns the supergroup.
   */
  migrateGroup(group: FakeChat, by: FakeUser, options: { readonly announce?: boolean } = {}): FakeChat {
    const old = this.state.chat(group);
    if (old.type !== "group") throw new Error(`fake Telegram: chat ${old.id} is no basic group`);
    const supergroup: FakeChat = {
      id: Number(`-100${Math.abs(old.id)}`),
      type: "supergroup",
      ...(old.title !== undefined ? { title: old.title } : {}),
    };
    this.state.chat(supergroup);
    const members = this.state.members.get(old.id);
    if (members) this.state.members.set(supergroup.id, new Map(members));
    const date = Math.floor(Date.now() / 1000);
    const service = (chat: FakeChat, field: Record<string, number>) => {
      const stored = this.state.addMessage({ chat_id: chat.id, from: by, text: "", source: "" });
      return { message_id: stored.message_id, date, chat, from: by, ...field };
    };
    const told = service(old, { migrate_to_chat_id: supergroup.id });
    this.state.migrated.set(old.id, supergroup.id);
    const welcomed = service(supergroup, { migrate_from_chat_id: old.id });
    if (options.announce !== false) {
      this.injectUpdate({ message: told });
      this.injectUpdate({ message: welcomed });
    }
    return supergroup;
  }

  /** A user presses an inline button (by its callback data) under a message. */
  pressButton(input: { chat: FakeChat; from: FakeUser; messageId: number; data: string }): Update {
    const chat = this.state.requireChat(input.chat.id);
    const stored = this.state.message(chat.id, input.messageId);
    const query = this.state.openQuery(chat.id, input.messageId, input.from);
    return this.injectUpdate({
      callback_query: {
        id: query.id,
        from: input.from,
        chat_instance: `ci${chat.id}`,
        data: input.data,
        ...(stored ? { message: apiMessage(this.state, stored) } : {}),
      },
    });
  }

  /** The callback data of the button labelled `label` (substring) on a stored message. */
  buttonData(message: StoredMessage, label: string): string {
    const button = message.reply_markup?.inline_keyboard
      .flat()
      .find((candidate) => candidate.text.includes(label));
    if (!button?.callback_data) throw new Error(`no button "${label}" on message ${message.message_id}`);
    return button.callback_data;
  }

  /**
   * Resolve with the predicate's first truthy value, re-checked after every change here and every
   * 10 ms (for conditions on state outside the fake, such as a service double).
   */
  waitFor<T>(predicate: () => T | undefined | null | false, timeoutMs = 8000): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const value = predicate();
        if (value) {
          cleanup();
          resolve(value);
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        const recent = this.calls
          .slice(-8)
          .map((call) => `${call.method}${call.error ? ` (${call.error})` : ""}`);
        reject(
          new Error(`fake Telegram: condition not met in ${timeoutMs} ms; last calls: ${recent.join(", ")}`),
        );
      }, timeoutMs);
      const ticker = setInterval(check, 10);
      const cleanup = () => {
        clearTimeout(timer);
        clearInterval(ticker);
        this.changes.off("change", check);
      };
      this.changes.on("change", check);
      check();
    });
  }

  /** Call `listener` with every recorded call from now on; returns the unsubscribe function. */
  onCall(listener: (call: RecordedCall) => void): () => void {
    const relay = (call?: RecordedCall) => call && listener(call);
    this.changes.on("change", relay);
    return () => this.changes.off("change", relay);
  }

  private changed(call?: RecordedCall): void {
    this.changes.emit("change", call);
  }

  private async route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (file) {
      if (this.faults.get(FILE_DOWNLOAD)?.shift() === "hold") return;
      return this.download(file[1]!, decodeURIComponent(file[2]!), response);
    }
    const call = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (!call) return respond(response, 404, { ok: false, error_code: 404, description: "Not Found" });
    if (call[1] !== this.token)
      return respond(response, 401, { ok: false, error_code: 401, description: "Unauthorized" });
    const method = call[2]!;
    const params = await readParams(request, url);
    const fault = this.faults.get(method)?.shift();
    if (fault === "drop") {
      this.record(method, params, "connection dropped");
      request.socket.destroy();
      return;
    }
    if (fault === "hold") return this.record(method, params, "held without an answer");
    const failure = this.failures.get(method)?.shift();
    if (failure) return this.answerError(method, params, response, failure);
    if (method === "getUpdates") return this.getUpdates(params, response);
    if (method === "sendMessageDraft" && this.options.draftsSupported === false) {
      return this.answerError(method, params, response, new BotApiError(404, "Not Found"));
    }
    const handler = METHODS[method];
    if (!handler) return this.answerError(method, params, response, new BotApiError(404, "Not Found"));
    try {
      const result = handler(this.state, params, this.bot);
      this.record(method, params);
      respond(response, 200, { ok: true, result });
    } catch (error) {
      if (!(error instanceof BotApiError)) throw error;
      this.answerError(method, params, response, error);
    }
  }

  private answerError(method: string, params: Params, response: ServerResponse, error: BotApiError): void {
    this.record(method, params, error.description);
    respond(response, error.code, {
      ok: false,
      error_code: error.code,
      description: error.description,
      ...(error.parameters ? { parameters: error.parameters } : {}),
    });
  }

  private record(method: string, params: Params, error?: string): void {
    const call: RecordedCall = { method, params, at: Date.now() - this.started, ...(error ? { error } : {}) };
    this.calls.push(call);
    this.changed(call);
  }

  private download(token: string, path: string, response: ServerResponse): void {
    const stored = [...this.state.files.values()].find((file) => file.file_path === path);
    if (token !== this.token || !stored) {
      respond(response, 404, { ok: false, error_code: 404, description: "Not Found" });
      return;
    }
    response.writeHead(200, {
      "content-type": "application/octet-stream",
      "content-length": stored.content.length,
    });
    response.end(stored.content);
  }

  private getUpdates(params: Params, response: ServerResponse): void {
    // The poll that is waiting keeps its place; this one neither confirms nor receives anything.
    if (this.waiter && this.options.concurrentPolls === "conflict") {
      this.pollConflicts += 1;
      this.record("getUpdates", params, CONFLICT);
      respond(response, 409, { ok: false, error_code: 409, description: CONFLICT });
      return;
    }
    const offset = Number(params.offset ?? 0);
    if (offset > 0) this.updates = this.updates.filter((update) => update.update_id >= offset);
    const allowed = Array.isArray(params.allowed_updates) ? (params.allowed_updates as string[]) : undefined;
    if (allowed && allowed.length > 0)
      this.updates = this.updates.filter((update) => allowed.includes(updateKind(update)));
    const limit = Math.min(Math.max(Number(params.limit ?? 100), 1), 100);
    const timeout = Number(params.timeout ?? 0);
    this.record("getUpdates", params);
    if (this.waiter) {
      this.pollConflicts += 1;
      const previous = this.waiter;
      this.waiter = undefined;
      clearTimeout(previous.timer);
      respond(previous.response, 409, { ok: false, error_code: 409, description: CONFLICT });
    }
    const ready = this.updates.slice(0, limit);
    if (ready.length > 0 || timeout <= 0) {
      respond(response, 200, { ok: true, result: ready });
      return;
    }
    const timer = setTimeout(() => this.finishPoll([]), timeout * 1000);
    this.waiter = { response, timer, limit, allowed };
    response.once("close", () => {
      if (this.waiter?.response === response) {
        clearTimeout(timer);
        this.waiter = undefined;
      }
    });
  }

  private wakePoller(): void {
    const waiter = this.waiter;
    if (!waiter) return;
    const ready = this.updates
      .filter(
        (update) =>
          !waiter.allowed || waiter.allowed.length === 0 || waiter.allowed.includes(updateKind(update)),
      )
      .slice(0, waiter.limit);
    if (ready.length > 0) this.finishPoll(ready);
  }

  private finishPoll(result: Update[]): void {
    const waiter = this.waiter;
    if (!waiter) return;
    this.waiter = undefined;
    clearTimeout(waiter.timer);
    respond(waiter.response, 200, { ok: true, result });
  }
}

/** Start a fake Bot API server on 127.0.0.1 with a random port. */
export function startFakeTelegram(options: FakeTelegramOptions = {}): Promise<FakeTelegram> {
  return new FakeTelegram(options).listen();
}
