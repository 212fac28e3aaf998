/**
 * The fake Slack's Web API methods. Each takes the parsed arguments and returns the response
 * body, or throws a `SlackFailure` with Slack's error code. Only what Coworker and its tests use.
 */
import { checkBlocks, checkChunks, FAKE_LIMITS } from "./limits.js";
import type { FakeMessage, FakeSlackState } from "./state.js";

/** A method failure: `{ ok: false, error: code }`. */
export class SlackFailure extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

type Args = Record<string, unknown>;
export interface MethodContext {
  readonly socketUrl: () => string;
  readonly baseUrl: () => string;
}
type Method = (state: FakeSlackState, args: Args, context: MethodContext) => Args;

function need(args: Args, key: string): string {
  const value = args[key];
  if (typeof value !== "string" || value.length === 0) throw new SlackFailure("invalid_arguments");
  return value;
}

function channelOf(state: FakeSlackState, args: Args, key = "channel") {
  const channel = state.channels.get(need(args, key));
  if (!channel) throw new SlackFailure("channel_not_found");
  return channel;
}

function botMessage(state: FakeSlackState, args: Args): FakeMessage {
  const message = state.message(channelOf(state, args).id, need(args, "ts"));
  if (!message || message.deleted) throw new SlackFailure("message_not_found");
  if (message.botId !== state.botId) throw new SlackFailure("cant_update_message");
  return message;
}

function assertCanPost(state: FakeSlackState, args: Args) {
  const channel = channelOf(state, args);
  if (channel.type !== "im" && !channel.members.has(state.botUserId))
    throw new SlackFailure("not_in_channel");
  return channel;
}

function checkedBlocks(args: Args): unknown[] | undefined {
  if (args.blocks === undefined) return undefined;
  const problem = checkBlocks(args.blocks);
  if (problem) throw new SlackFailure(problem);
  return args.blocks as unknown[];
}

function threadOf(args: Args): string | undefined {
  return typeof args.thread_ts === "string" && args.thread_ts.length > 0 ? args.thread_ts : undefined;
}

function applyChunks(message: FakeMessage, args: Args): void {
  if (args.markdown_text !== undefined && args.chunks !== undefined) {
    throw new SlackFailure("cannot_provide_both_markdown_text_and_chunks");
  }
  if (typeof args.markdown_text === "string") {
    if (args.markdown_text.length > FAKE_LIMITS.streamMarkdown) throw new SlackFailure("msg_too_long");
    message.markdown += args.markdown_text;
    return;
  }
  if (args.chunks === undefined) return;
  const problem = checkChunks(args.chunks);
  if (problem) throw new SlackFailure(problem);
  for (const chunk of args.chunks as Args[]) {
    if (chunk.type === "markdown_text") message.markdown += chunk.text as string;
    if (chunk.type === "task_update") {
      const card = { id: chunk.id as string, title: chunk.title as string, status: String(chunk.status) };
      message.tasks.set(
        card.id,
        typeof chunk.details === "string" ? { ...card, details: chunk.details } : card,
      );
    }
    if (chunk.type === "blocks") message.blocks.push(...(chunk.blocks as unknown[]));
  }
}

function streamingMessage(state: FakeSlackState, args: Args): FakeMessage {
  const message = botMessage(state, args);
  if (message.stoppedByUser) throw new SlackFailure("stopped_by_user");
  if (!message.streaming) throw new SlackFailure("message_not_in_streaming_state");
  return message;
}

/** A new message from the bot in `channel`, inside the thread `threadTs` when there is one. */
function addBotMessage(
  state: FakeSlackState,
  channel: string,
  threadTs: string | undefined,
  text: string,
  blocks: unknown[] = [],
  streaming = false,
): FakeMessage {
  return state.addMessage(
    {
      channel,
      ts: state.nextTs(),
      ...(threadTs ? { threadTs } : {}),
      user: state.botUserId,
      botId: state.botId,
      text,
      blocks,
    },
    streaming,
  );
}

/** reactions.add (`added`) or reactions.remove: records the change, or fails with `unchanged` as Slack does. */
function reaction(added: boolean, unchanged: string): Method {
  return (state, args) => {
    const channel = channelOf(state, args);
    const ts = need(args, "timestamp");
    const name = need(args, "name");
    const current = state.reactions
      .filter((r) => r.channel === channel.id && r.ts === ts && r.name === name)
      .at(-1);
    if ((current?.added ?? false) === added) throw new SlackFailure(unchanged);
    state.reactions.push({ channel: channel.id, ts, name, added });
    state.changed();
    return {};
  };
}

const methods: Record<string, Method> = {
  "auth.test": (state) => ({
    url: "https://fake.slack.com/",
    team: "Fake",
    user: "coworker",
    team_id: state.teamId,
    user_id: state.botUserId,
    bot_id: state.botId,
  }),
  "apps.connections.open": (_state, _args, context) => ({ url: context.socketUrl() }),
  "chat.postMessage": (state, args) => {
    const channel = assertCanPost(state, args);
    const blocks = checkedBlocks(args) ?? [];
    const text = typeof args.text === "string" ? args.text.slice(0, FAKE_LIMITS.postText) : "";
    if (text.length === 0 && blocks.length === 0) throw new SlackFailure("no_text");
    const message = addBotMessage(state, channel.id, threadOf(args), text, blocks);
    return { channel: channel.id, ts: message.ts, message: { text, ts: message.ts, bot_id: state.botId } };
  },
  "chat.update": (state, args) => {
    const message = botMessage(state, args);
    const text = typeof args.text === "string" ? args.text : undefined;
    if (text !== undefined && text.length > FAKE_LIMITS.updateText) throw new SlackFailure("msg_too_long");
    const blocks = checkedBlocks(args);
    if (text !== undefined) message.text = text;
    if (blocks !== undefined) message.blocks = blocks;
    message.streaming = false;
    message.updates += 1;
    state.changed();
    return { channel: message.channel, ts: message.ts, text: message.text };
  },
  "chat.delete": (state, args) => {
    const message = botMessage(state, args);
    message.deleted = true;
    state.changed();
    return { channel: message.channel, ts: message.ts };
  },
  "chat.postEphemeral": (state, args) => {
    const channel = channelOf(state, args);
    const user = need(args, "user");
    const threadTs = threadOf(args);
    state.ephemerals.push({
      channel: channel.id,
      user,
      text: typeof args.text === "string" ? args.text : "",
      ...(threadTs ? { threadTs } : {}),
    });
    state.changed();
    return { message_ts: state.nextTs() };
  },
  "chat.startStream": (state, args) => {
    if (state.streaming !== true) throw new SlackFailure(state.streaming);
    const channel = assertCanPost(state, args);
    const threadTs = need(args, "thread_ts");
    if (channel.type !== "im") {
      if (typeof args.recipient_user_id !== "string") throw new SlackFailure("missing_recipient_user_id");
      if (typeof args.recipient_team_id !== "string") throw new SlackFailure("missing_recipient_team_id");
    }
    const message = addBotMessage(state, channel.id, threadTs, "", [], true);
    try {
      applyChunks(message, args);
    } catch (error) {
      state.removeMessage(message);
      throw error;
    }
    state.changed();
    return { channel: channel.id, ts: message.ts };
  },
  "chat.appendStream": (state, args) => {
    const message = streamingMessage(state, args);
    if (args.markdown_text === undefined && args.chunks === undefined) {
      throw new SlackFailure("markdown_text_or_chunks_required");
    }
    applyChunks(message, args);
    state.changed();
    return { channel: message.channel, ts: message.ts };
  },
  "chat.stopStream": (state, args) => {
    const message = streamingMessage(state, args);
    applyChunks(message, args);
    const blocks = checkedBlocks(args);
    if (blocks) message.blocks.push(...blocks);
    message.streaming = false;
    state.changed();
    return { channel: message.channel, ts: message.ts };
  },
  "assistant.threads.setStatus": (state, args) => {
    if (state.assistantStatus !== true) throw new SlackFailure(state.assistantStatus);
    const channel = channelOf(state, args, "channel_id");
    const status = typeof args.status === "string" ? args.status : "";
    state.statuses.push({ channel: channel.id, threadTs: need(args, "thread_ts"), status });
    state.changed();
    return {};
  },
  "reactions.add": reaction(true, "already_reacted"),
  "reactions.remove": reaction(false, "no_reaction"),
  "conversations.info": (state, args) => {
    const channel = channelOf(state, args);
    return {
      channel: {
        id: channel.id,
        name: channel.name,
        is_im: channel.type === "im",
        is_channel: channel.type === "channel",
        is_group: channel.type === "group",
        is_mpim: channel.type === "mpim",
        is_private: channel.type !== "channel",
        is_member: channel.members.has(state.botUserId),
      },
    };
  },
  "conversations.list": (state) => ({
    channels: [...state.channels.values()]
      .filter((c) => c.type === "channel" || c.type === "group")
      .map((c) => ({
        id: c.id,
        name: c.name,
        is_private: c.type !== "channel",
        is_member: c.members.has(state.botUserId),
      })),
    response_metadata: { next_cursor: "" },
  }),
  "conversations.members": (state, args) => ({ members: [...channelOf(state, args).members] }),
  "conversations.join": (state, args) => {
    const channel = channelOf(state, args);
    if (channel.type !== "channel") throw new SlackFailure("method_not_supported_for_channel_type");
    channel.members.add(state.botUserId);
    state.changed();
    return { channel: { id: channel.id, name: channel.name } };
  },
  "conversations.replies": (state, args) => {
    const channel = channelOf(state, args);
    const ts = need(args, "ts");
    const thread = state.messages.filter(
      (m) => m.channel === channel.id && (m.ts === ts || m.threadTs === ts),
    );
    return { messages: thread.map((m) => ({ ts: m.ts, thread_ts: m.threadTs, user: m.user, text: m.text })) };
  },
  "files.getUploadURLExternal": (state, args, context) => {
    const filename = need(args, "filename");
    const length = Number(args.length);
    if (!Number.isInteger(length) || length <= 0) throw new SlackFailure("invalid_arguments");
    const id = `F${state.nextTs().replace(".", "")}`;
    state.uploads.set(id, { filename, length, received: 0, content: Buffer.alloc(0), completed: false });
    return { upload_url: `${context.baseUrl()}/upload/${id}`, file_id: id };
  },
  "files.completeUploadExternal": (state, args) => {
    const files = (typeof args.files === "string" ? JSON.parse(args.files) : args.files) as {
      id: string;
      title?: string;
    }[];
    if (!Array.isArray(files) || files.length === 0) throw new SlackFailure("invalid_arguments");
    for (const file of files) {
      const upload = state.uploads.get(file.id);
      if (!upload || upload.received === 0) throw new SlackFailure("file_not_found");
      upload.completed = true;
    }
    const shared = files.map((f) => ({
      id: f.id,
      title: f.title ?? state.uploads.get(f.id)?.filename ?? f.id,
    }));
    if (typeof args.channel_id === "string") {
      const channel = assertCanPost(state, { channel: args.channel_id });
      const comment = typeof args.initial_comment === "string" ? args.initial_comment : "";
      addBotMessage(state, channel.id, threadOf(args), comment).files = shared;
    }
    state.changed();
    return { files: shared };
  },
  "bots.info": (state, args) => {
    const botId = need(args, "bot");
    const user = [...state.users.values()].find((u) => u.botId === botId);
    if (!user) throw new SlackFailure("bot_not_found");
    return { bot: { id: botId, name: user.name, deleted: false, user_id: user.id } };
  },
  "users.info": (state, args) => {
    const user = state.users.get(need(args, "user"));
    if (!user) throw new SlackFailure("user_not_found");
    return {
      user: {
        id: user.id,
        name: user.name,
        real_name: user.realName ?? user.name,
        is_bot: user.botId !== undefined,
        is_restricted: user.guest === true,
        deleted: user.deactivated === true,
        team_id: user.team ?? state.teamId,
        ...(user.stranger === true ? { is_stranger: true } : {}),
        ...(user.tz === undefined ? {} : { tz: user.tz }),
        profile: { display_name: user.displayName ?? "", real_name: user.realName ?? user.name },
      },
    };
  },
};

/** Run a method; unknown methods answer `unknown_method` like Slack. */
export function runMethod(state: FakeSlackState, name: string, args: Args, context: MethodContext): Args {
  const method = methods[name];
  if (!method) throw new SlackFailure("unknown_method");
  return method(state, args, context);
}
