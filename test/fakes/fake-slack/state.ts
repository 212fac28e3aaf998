/**
 * The fake Slack's world: workspace, users, channels, messages (with native-stream state),
 * files, and a record of every Web API call, ephemeral message, reaction, assistant status,
 * response_url post and Socket Mode ack. Tests configure failures through it: rate limits with
 * Retry-After, injected error codes, and feature switches (native streaming, thread status).
 * Every change emits "change", which `waitFor` listens to instead of sleeping; every recorded Web
 * API call is also emitted as "call" (benchmarks follow replies that way).
 */
import { EventEmitter } from "node:events";
import { REQUIRED_BOT_SCOPES } from "../../../src/channels/slack/slack-requirements.js";

export interface FakeUser {
  readonly id: string;
  readonly name: string;
  readonly realName?: string;
  readonly displayName?: string;
  readonly botId?: string;
  /** IANA timezone (users.info `tz`). */
  readonly tz?: string;
  /** A guest of the workspace (users.info `is_restricted`). */
  readonly guest?: boolean;
  /** A deactivated account (users.info `deleted`). */
  readonly deactivated?: boolean;
  /** The person's home team (users.info `team_id`); the fake's own team when unset. */
  readonly team?: string;
  /** A person of another organisation in a shared channel (users.info `is_stranger`). */
  readonly stranger?: boolean;
}

export type ChannelType = "im" | "channel" | "group" | "mpim";

export interface FakeChannel {
  readonly id: string;
  readonly name: string;
  readonly type: ChannelType;
  readonly members: Set<string>;
}

export interface TaskCard {
  readonly id: string;
  readonly title: string;
  readonly status: string;
  readonly details?: string;
}

export interface FakeMessage {
  readonly channel: string;
  readonly ts: string;
  readonly threadTs?: string;
  readonly user?: string;
  readonly botId?: string;
  text: string;
  blocks: unknown[];
  /** Files shared with the message (files.completeUploadExternal). */
  files?: { id: string; title: string }[];
  /** Native streaming: the accumulated markdown text and task cards, and whether it is open. */
  streaming: boolean;
  streamed: boolean;
  markdown: string;
  readonly tasks: Map<string, TaskCard>;
  /** The person pressed Slack's stop on this stream. */
  stoppedByUser: boolean;
  deleted: boolean;
  updates: number;
}

export interface ApiCall {
  readonly method: string;
  readonly args: Readonly<Record<string, unknown>>;
  readonly at: number;
  readonly status: number;
  readonly error?: string;
  /** The `/c/<label>` prefix the caller used (one label per process under test). */
  readonly via?: string;
}

export interface FakeFile {
  readonly id: string;
  readonly name: string;
  readonly mimetype: string;
  readonly content: Buffer;
  /** Serve Slack's login page even with a valid token (a broken share). */
  readonly loginPageOnly?: boolean;
}

/** One Socket Mode delivery; its times are `performance.now()` ms, so ack latency is sub-millisecond. */
export interface AckRecord {
  readonly envelopeId: string;
  readonly type: string;
  readonly sentAt: number;
  /** The label of the Socket Mode connection it went to. */
  readonly connection?: string;
  /** Its `retry_attempt` (0 for the first delivery). */
  readonly attempt?: number;
  ackedAt?: number;
  ackPayload?: unknown;
}

export interface Ephemeral {
  readonly channel: string;
  readonly user: string;
  readonly text: string;
  readonly threadTs?: string;
}

export interface ResponseUrlPost {
  readonly id: string;
  readonly body: Readonly<Record<string, unknown>>;
}

export class FakeSlackState extends EventEmitter {
  readonly teamId = "T0FAKE";
  readonly appId = "A0FAKE";
  readonly botUserId = "U0BOT";
  readonly botId = "B0BOT";
  readonly botToken = "xoxb-fake-bot-token";
  readonly appToken = "xapp-fake-app-token";

  readonly users = new Map<string, FakeUser>();
  readonly channels = new Map<string, FakeChannel>();
  readonly messages: FakeMessage[] = [];
  /** `messages` by channel and ts: lookups stay cheap in long benchmark runs. */
  private readonly byTs = new Map<string, FakeMessage>();
  readonly calls: ApiCall[] = [];
  readonly ephemerals: Ephemeral[] = [];
  readonly reactions: { channel: string; ts: string; name: string; added: boolean }[] = [];
  readonly statuses: { channel: string; threadTs: string; status: string }[] = [];
  readonly responses: ResponseUrlPost[] = [];
  readonly files = new Map<string, FakeFile>();
  readonly acks = new Map<string, AckRecord>();
  readonly fileDownloads: { id: string; authorized: boolean }[] = [];
  /** Files uploaded through files.getUploadURLExternal + the upload URL, by file id. */
  readonly uploads = new Map<
    string,
    { filename: string; length: number; received: number; content: Buffer; completed: boolean }
  >();

  /** Native streaming: true, or the error code chat.startStream answers with. */
  streaming: true | string = true;
  /** assistant.threads.setStatus: true, or the error code it answers with. */
  assistantStatus: true | string = true;
  /** Calls of a method answer 429 with Retry-After while `remaining` > 0. */
  readonly rateLimits = new Map<string, { remaining: number; retryAfterS: number }>();
  /** Error codes a method answers with, one per call, before it works again. */
  readonly failures = new Map<string, string[]>();
  /** Calls still to drop, by method (see dropNext). */
  readonly drops = new Map<string, number>();
  /** The bot token's scopes, reported in the x-oauth-scopes header like Slack does. */
  scopes: string[] = [...REQUIRED_BOT_SCOPES];
  /** Milliseconds every API answer is delayed by (latency simulation). */
  latencyMs = 0;

  /** The last ts handed out, in microseconds since the epoch. */
  private clock = 0;

  constructor() {
    super();
    this.setMaxListeners(0);
    this.users.set(this.botUserId, { id: this.botUserId, name: "coworker", botId: this.botId });
  }

  /** A fresh, increasing message ts from the real time, as Slack's are ("1767225600.123456"). */
  nextTs(): string {
    this.clock = Math.max(this.clock + 1, Date.now() * 1_000);
    const micros = String(this.clock);
    return `${micros.slice(0, 10)}.${micros.slice(10)}`;
  }

  /** Tell waiters something changed. */
  changed(): void {
    this.emit("change");
  }

  addUser(user: FakeUser): FakeUser {
    this.users.set(user.id, user);
    this.changed();
    return user;
  }

  /** Add a channel; the bot is a member unless `botMember` is false. */
  addChannel(channel: {
    id: string;
    name: string;
    type: ChannelType;
    members?: string[];
    botMember?: boolean;
  }): FakeChannel {
    const members = new Set(channel.members ?? []);
    if (channel.botMember !== false) members.add(this.botUserId);
    const created: FakeChannel = { id: channel.id, name: channel.name, type: channel.type, members };
    this.channels.set(channel.id, created);
    this.changed();
    return created;
  }

  /** Record a message; `streaming` starts a native stream (the caller applies its chunks, then reports the change). */
  addMessage(
    message: Omit<
      FakeMessage,
      "streaming" | "streamed" | "markdown" | "tasks" | "stoppedByUser" | "deleted" | "updates"
    >,
    streaming = false,
  ): FakeMessage {
    const created: FakeMessage = {
      ...message,
      streaming,
      streamed: streaming,
      markdown: "",
      tasks: new Map(),
      stoppedByUser: false,
      deleted: false,
      updates: 0,
    };
    this.messages.push(created);
    this.byTs.set(messageKey(created.channel, created.ts), created);
    if (!streaming) this.changed();
    return created;
  }

  /** Forget a message that was never shown (a stream whose first chunks were refused). */
  removeMessage(message: FakeMessage): void {
    const index = this.messages.indexOf(message);
    if (index >= 0) this.messages.splice(index, 1);
    this.byTs.delete(messageKey(message.channel, message.ts));
  }

  message(channel: string, ts: string): FakeMessage | undefined {
    return this.byTs.get(messageKey(channel, ts));
  }

  /** The bot's visible messages in a thread (or top-level when `threadTs` is undefined), oldest first. */
  botMessages(channel: string, threadTs?: string): FakeMessage[] {
    return this.messages.filter(
      (m) => m.channel === channel && m.botId === this.botId && !m.deleted && m.threadTs === threadTs,
    );
  }

  /** Forget recorded calls, messages and acks (long benchmark runs). */
  clearHistory(): void {
    this.calls.length = 0;
    this.messages.length = 0;
    this.byTs.clear();
    this.acks.clear();
    this.statuses.length = 0;
    this.reactions.length = 0;
  }

  /** Calls of one method. */
  callsOf(method: string): ApiCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  /** Make the next `times` calls of `method` answer 429 with Retry-After. */
  rateLimit(method: string, times: number, retryAfterS = 1): void {
    this.rateLimits.set(method, { remaining: times, retryAfterS });
  }

  /**
   * The next `times` calls of `method` lose their connection before any answer (as a reset
   * keep-alive socket does): the client sees a network failure, and the call is not carried out.
   */
  dropNext(method: string, times = 1): void {
    this.drops.set(method, (this.drops.get(method) ?? 0) + times);
  }

  /** Make the next calls of `method` fail with these error codes, one per call. */
  fail(method: string, ...codes: string[]): void {
    this.failures.set(method, [...(this.failures.get(method) ?? []), ...codes]);
  }

  addFile(file: FakeFile): FakeFile {
    this.files.set(file.id, file);
    return file;
  }
}

function messageKey(channel: string, ts: string): string {
  return `${channel}\u0000${ts}`;
}
