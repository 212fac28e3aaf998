/**
 * A local fake Slack for tests and benchmarks: Web API + file downloads + response_url over
 * node:http and a Socket Mode websocket, all on one 127.0.0.1 port. A real Bolt app points at it
 * with `slackApiUrl` (the Socket Mode client follows, via apps.connections.open).
 *
 * Helpers drive it like a workspace would: `userPosts` (a person writes; a channel post that
 * mentions the bot also arrives as its app_mention twin), `sendEvent`, `pressButton`,
 * `slashCommand`, and `waitFor(predicate)`, which re-checks on every change instead of sleeping.
 */
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type EnvelopeType, FakeSocketMode, type PushTarget, type SocketModeOptions } from "./socket-mode.js";
import { type FakeMessage, FakeSlackState } from "./state.js";
import { webApiListener } from "./web-api.js";

export { FakeSlackState } from "./state.js";
export type { FakeMessage, FakeUser, FakeChannel, ApiCall } from "./state.js";
export { MAX_SOCKET_CONNECTIONS } from "./socket-mode.js";

/** One pushed envelope: its id and the ack latency once the app acknowledged it. */
export interface Delivery {
  readonly envelopeId: string;
  readonly acked: Promise<number>;
}

export interface UserPost {
  readonly user: string;
  readonly channel: string;
  readonly text: string;
  readonly threadTs?: string;
  /** Ids of files (added with `state.addFile`) attached to the message. */
  readonly files?: readonly string[];
  /** Leave out the client_msg_id (messages from some clients and integrations have none). */
  readonly noClientMsgId?: boolean;
  /** The client_msg_id the client sends (default: a fresh UUID). */
  readonly clientMsgId?: string;
  /**
   * The sender's team, when not the installation's (a sibling workspace of its Enterprise Grid, the
   * enterprise id in a team's place, a Slack Connect partner): as Slack sends such a person's
   * messages, it is also their `user_team` and `source_team`.
   */
  readonly team?: string;
  /** Deliver to the Socket Mode connection with this label (default: the next in turn). */
  readonly to?: string;
}

export interface FakeSlack {
  /** Web API base URL, with the trailing slash the SDK expects. */
  readonly apiUrl: string;
  /** The Web API base URL for one process under test: its calls and its Socket Mode connection carry `label`. */
  apiUrlFor(label: string): string;
  readonly baseUrl: string;
  readonly state: FakeSlackState;
  readonly socket: FakeSocketMode;
  userPosts(post: UserPost): { ts: string; deliveries: Delivery[] };
  sendEvent(
    event: Record<string, unknown>,
    options?: { eventId?: string; retryAttempt?: number } & PushTarget,
  ): Delivery;
  pressButton(
    press: { user: string; channel: string; messageTs: string; actionId: string } & PushTarget,
  ): Delivery;
  slashCommand(
    command: { user: string; channel: string; text: string; command?: string } & PushTarget,
  ): Delivery;
  /** Resolve with the predicate's first truthy value; re-checked on every change (and every 20 ms). */
  waitFor<T>(
    predicate: () => T | undefined | false | null,
    description?: string,
    timeoutMs?: number,
  ): Promise<T>;
  close(): Promise<void>;
}

export interface FakeSlackOptions extends SocketModeOptions {}

/** Start the fake on 127.0.0.1 with an OS-assigned port. */
export async function startFakeSlack(options: FakeSlackOptions = {}): Promise<FakeSlack> {
  const state = new FakeSlackState();
  const socket = new FakeSocketMode(state, options);
  let baseUrl = "";
  const server: Server = createServer(
    webApiListener(state, {
      socketUrl: () => `${baseUrl.replace("http", "ws")}/socket`,
      baseUrl: () => baseUrl,
    }),
  );
  server.on("upgrade", (req, duplex, head) => {
    if (req.url?.startsWith("/socket")) socket.upgrade(req, duplex, head);
    else duplex.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const push = (
    type: EnvelopeType,
    payload: unknown,
    retryAttempt = 0,
    target: PushTarget = {},
  ): Delivery => {
    const pushed = socket.push(type, payload, retryAttempt, target);
    return { envelopeId: pushed.envelopeId, acked: pushed.acked };
  };

  const sendEvent: FakeSlack["sendEvent"] = (event, eventOptions = {}) =>
    push(
      "events_api",
      {
        token: "fake-verification-token",
        team_id: state.teamId,
        api_app_id: state.appId,
        event,
        type: "event_callback",
        event_id: eventOptions.eventId ?? `Ev${randomUUID().replace(/-/g, "").slice(0, 12).toUpperCase()}`,
        event_time: Math.floor(Date.now() / 1000),
        authorizations: [{ team_id: state.teamId, user_id: state.botUserId, is_bot: true }],
      },
      eventOptions.retryAttempt ?? 0,
      eventOptions.to !== undefined ? { to: eventOptions.to } : {},
    );

  const fileObject = (id: string) => {
    const file = state.files.get(id);
    if (!file) throw new Error(`fake slack: no file ${id}`);
    return {
      id: file.id,
      name: file.name,
      title: file.name,
      mimetype: file.mimetype,
      filetype: file.name.split(".").pop() ?? "binary",
      size: file.content.length,
      url_private: `${baseUrl}/files/${file.id}/${encodeURIComponent(file.name)}`,
      url_private_download: `${baseUrl}/files/${file.id}/download/${encodeURIComponent(file.name)}`,
    };
  };

  const userPosts: FakeSlack["userPosts"] = (post) => {
    const channel = state.channels.get(post.channel);
    if (!channel) throw new Error(`fake slack: no channel ${post.channel}`);
    const ts = state.nextTs();
    state.addMessage({
      channel: post.channel,
      ts,
      ...(post.threadTs ? { threadTs: post.threadTs } : {}),
      user: post.user,
      text: post.text,
      blocks: [],
    });
    const files = post.files?.map(fileObject);
    const base = {
      user: post.user,
      text: post.text,
      ts,
      team: post.team ?? state.teamId,
      ...(post.team ? { user_team: post.team, source_team: post.team } : {}),
      channel: post.channel,
      event_ts: ts,
      ...(post.noClientMsgId ? {} : { client_msg_id: post.clientMsgId ?? randomUUID() }),
      ...(post.threadTs ? { thread_ts: post.threadTs } : {}),
      ...(files && files.length > 0 ? { files, subtype: "file_share" } : {}),
    };
    const channelType = channel.type === "group" ? "group" : channel.type;
    const target = post.to !== undefined ? { to: post.to } : {};
    const deliveries = [sendEvent({ type: "message", channel_type: channelType, ...base }, target)];
    if (channel.type !== "im" && post.text.includes(`<@${state.botUserId}>`)) {
      const { subtype: _subtype, ...mention } = base as typeof base & { subtype?: string };
      deliveries.push(sendEvent({ type: "app_mention", ...mention }, target));
    }
    return { ts, deliveries };
  };

  const pressButton: FakeSlack["pressButton"] = (press) => {
    const message = state.message(press.channel, press.messageTs);
    if (!message) throw new Error(`fake slack: no message ${press.messageTs}`);
    const found = findButton(message, press.actionId);
    if (!found) throw new Error(`fake slack: no button ${press.actionId} on ${press.messageTs}`);
    const user = state.users.get(press.user);
    const target = press.to !== undefined ? { to: press.to } : {};
    return push(
      "interactive",
      {
        type: "block_actions",
        user: {
          id: press.user,
          username: user?.name ?? press.user,
          name: user?.name ?? press.user,
          team_id: state.teamId,
        },
        api_app_id: state.appId,
        token: "fake-verification-token",
        container: {
          type: "message",
          message_ts: message.ts,
          channel_id: message.channel,
          is_ephemeral: false,
          ...(message.threadTs ? { thread_ts: message.threadTs } : {}),
        },
        trigger_id: randomUUID(),
        team: { id: state.teamId, domain: "fake" },
        channel: { id: message.channel, name: state.channels.get(message.channel)?.name ?? message.channel },
        message: {
          type: "message",
          user: message.user,
          bot_id: message.botId,
          ts: message.ts,
          ...(message.threadTs ? { thread_ts: message.threadTs } : {}),
          text: message.text,
          blocks: message.blocks,
        },
        response_url: `${baseUrl}/respond/${randomUUID()}`,
        actions: [{ ...found, action_ts: String(Date.now() / 1000) }],
      },
      0,
      target,
    );
  };

  const slashCommand: FakeSlack["slashCommand"] = (command) => {
    const user = state.users.get(command.user);
    const target = command.to !== undefined ? { to: command.to } : {};
    return push(
      "slash_commands",
      {
        token: "fake-verification-token",
        team_id: state.teamId,
        team_domain: "fake",
        channel_id: command.channel,
        channel_name: state.channels.get(command.channel)?.name ?? command.channel,
        user_id: command.user,
        user_name: user?.name ?? command.user,
        command: command.command ?? "/coworker",
        text: command.text,
        api_app_id: state.appId,
        response_url: `${baseUrl}/respond/${randomUUID()}`,
        trigger_id: randomUUID(),
      },
      0,
      target,
    );
  };

  const waitFor: FakeSlack["waitFor"] = (predicate, description = "condition", timeoutMs = 10_000) =>
    new Promise((resolve, reject) => {
      const check = () => {
        const value = predicate();
        if (value !== undefined && value !== false && value !== null) {
          cleanup();
          resolve(value);
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`fake slack: timed out waiting for ${description}`));
      }, timeoutMs);
      // Conditions may also depend on the app under test (e.g. its readiness): re-check on a tick too.
      const tick = setInterval(check, 20);
      const cleanup = () => {
        clearTimeout(timer);
        clearInterval(tick);
        state.off("change", check);
      };
      state.on("change", check);
      check();
    });

  return {
    apiUrl: `${baseUrl}/api/`,
    apiUrlFor: (label) => `${baseUrl}/c/${encodeURIComponent(label)}/api/`,
    baseUrl,
    state,
    socket,
    userPosts,
    sendEvent,
    pressButton,
    slashCommand,
    waitFor,
    close: async () => {
      await socket.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function findButton(message: FakeMessage, actionId: string): Record<string, unknown> | undefined {
  for (const block of message.blocks as Record<string, unknown>[]) {
    if (block.type !== "actions" || !Array.isArray(block.elements)) continue;
    for (const element of block.elements as Record<string, unknown>[]) {
      if (element.action_id === actionId) return { ...element, block_id: block.block_id ?? "b" };
    }
  }
  return undefined;
}
