/**
 * fast-check generators for the intake fuzz: inbound payloads as Slack and Telegram send them,
 * mutated field by field (kept, replaced by arbitrary JSON, or dropped, recursively), mixed with
 * plain garbage (any JSON, non-JSON text). Authors are people the app does not serve, so payloads
 * that happen to be well formed go deep into the channels without starting model turns.
 */
import fc from "fast-check";

/** `value` with each field kept, mutated recursively, replaced by any JSON, or dropped. */
export function mutated(value: unknown, depth = 3): fc.Arbitrary<unknown> {
  const replaced = fc.jsonValue({ maxDepth: 2 });
  if (depth === 0) return fc.oneof(fc.constant(value), replaced);
  if (Array.isArray(value))
    return fc.oneof(
      { weight: 3, arbitrary: fc.tuple(...value.map((item) => mutated(item, depth - 1))) },
      { weight: 1, arbitrary: fc.array(mutated(value[0], depth - 1), { maxLength: 3 }) },
      { weight: 1, arbitrary: replaced },
    );
  if (typeof value === "object" && value !== null) {
    const fields = Object.fromEntries(
      Object.entries(value).map(([key, child]) => [
        key,
        fc.oneof(
          { weight: 6, arbitrary: mutated(child, depth - 1) },
          { weight: 1, arbitrary: replaced },
          { weight: 1, arbitrary: fc.constant(undefined) },
        ),
      ]),
    );
    return fc.oneof({ weight: 8, arbitrary: fc.record(fields) }, { weight: 1, arbitrary: replaced });
  }
  if (typeof value === "string")
    return fc.oneof({ weight: 4, arbitrary: fc.constant(value) }, { weight: 1, arbitrary: fc.string() });
  return fc.oneof({ weight: 4, arbitrary: fc.constant(value) }, { weight: 1, arbitrary: replaced });
}

/** Someone the app under test does not serve (not on its allowed lists). */
export const STRANGER = "U7FUZZ";

/** Templates of the Slack bodies the app handles (Bolt's `body`). */
export function slackTemplates(teamId: string, channel: string) {
  const event = {
    type: "message",
    channel,
    channel_type: "im",
    user: STRANGER,
    text: "hello <@U0BOT>",
    ts: "1700000000.000100",
    team: teamId,
    client_msg_id: "c0ffee",
  };
  return {
    event: {
      token: "t",
      team_id: teamId,
      api_app_id: "A1",
      type: "event_callback",
      event_id: "Ev1",
      event_time: 1700000000,
      authorizations: [{ team_id: teamId, user_id: "U0BOT", is_bot: true }],
      event,
    },
    mention: {
      type: "event_callback",
      team_id: teamId,
      event_id: "Ev2",
      event: { ...event, type: "app_mention", channel_type: undefined, thread_ts: "1700000000.000001" },
    },
    left: {
      type: "event_callback",
      team_id: teamId,
      event: { type: "member_left_channel", user: "U0BOT", channel },
    },
    actions: {
      type: "block_actions",
      user: { id: STRANGER, username: "fuzz", name: "fuzz", team_id: teamId },
      team: { id: teamId, domain: "fake" },
      channel: { id: channel, name: "x" },
      container: { type: "message", message_ts: "1700000000.000100", channel_id: channel },
      message: { type: "message", ts: "1700000000.000100", text: "card", blocks: [] },
      actions: [{ action_id: "coworker_card_0", block_id: "b", value: "p1|once", type: "button" }],
      response_url: "http://127.0.0.1:9/respond",
      trigger_id: "tr",
    },
    command: {
      team_id: teamId,
      channel_id: channel,
      user_id: STRANGER,
      user_name: "fuzz",
      command: "/coworker",
      text: "status",
      response_url: "http://127.0.0.1:9/respond",
    },
  };
}

/** A Slack body: a mutated template or any JSON. */
export function slackBody(teamId: string, channel: string): fc.Arbitrary<unknown> {
  const t = slackTemplates(teamId, channel);
  return fc.oneof(
    mutated(t.event),
    mutated(t.mention),
    mutated(t.left),
    mutated(t.actions),
    mutated(t.command),
    fc.jsonValue({ maxDepth: 3 }),
  );
}

/** A block_actions body: the button-press payload, mutated. */
export function slackPress(teamId: string, channel: string): fc.Arbitrary<unknown> {
  return mutated(slackTemplates(teamId, channel).actions, 4);
}

/** One Socket Mode frame as text, with the envelope id an ack should name (when it has one). */
export interface RawFrame {
  readonly text: string;
  readonly envelopeId?: string;
}

const ENVELOPE_TYPES = ["events_api", "interactive", "slash_commands"];

/** Socket Mode frames: envelopes around `payload`, broken envelopes, and non-JSON text. */
export function socketFrame(payload: fc.Arbitrary<unknown>): fc.Arbitrary<RawFrame> {
  const envelope = fc
    .record({
      envelope_id: fc.oneof({ weight: 5, arbitrary: fc.uuid() }, { weight: 1, arbitrary: fc.jsonValue() }),
      type: fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom(...ENVELOPE_TYPES) },
        { weight: 1, arbitrary: fc.constantFrom("hello", "ws_message", "error", "connected", "") },
        { weight: 1, arbitrary: fc.jsonValue() },
      ),
      payload,
      retry_attempt: fc.oneof(fc.constant(0), fc.jsonValue()),
      accepts_response_payload: fc.oneof(fc.boolean(), fc.jsonValue()),
    })
    .map((frame) => {
      const expectsAck =
        typeof frame.envelope_id === "string" &&
        frame.envelope_id.length > 0 &&
        ENVELOPE_TYPES.includes(frame.type as string);
      return {
        text: JSON.stringify(frame),
        ...(expectsAck ? { envelopeId: frame.envelope_id as string } : {}),
      };
    });
  return fc.oneof(
    { weight: 8, arbitrary: envelope },
    { weight: 1, arbitrary: fc.jsonValue().map((value) => ({ text: JSON.stringify(value) })) },
    { weight: 1, arbitrary: fc.string().map((text) => ({ text })) },
  );
}

/** One HTTP delivery: a JSON body, a form body with `payload=`, or a slash-command form. */
export interface HttpBody {
  readonly contentType: "application/json" | "application/x-www-form-urlencoded";
  readonly body: string;
}

/** HTTP Events API / interactivity bodies. */
export function httpBody(teamId: string, channel: string): fc.Arbitrary<HttpBody> {
  const t = slackTemplates(teamId, channel);
  const json = (value: unknown): HttpBody => ({
    contentType: "application/json",
    body: JSON.stringify(value) ?? "null",
  });
  const form = (fields: Record<string, string>): HttpBody => ({
    contentType: "application/x-www-form-urlencoded",
    body: new URLSearchParams(fields).toString(),
  });
  const stringFields = (value: unknown): Record<string, string> =>
    typeof value === "object" && value !== null && !Array.isArray(value)
      ? Object.fromEntries(
          Object.entries(value)
            .filter(([, v]) => v !== undefined)
            .map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
        )
      : { text: JSON.stringify(value) ?? "" };
  return fc.oneof(
    { weight: 4, arbitrary: slackBody(teamId, channel).map(json) },
    {
      weight: 1,
      arbitrary: fc.record({ type: fc.constant("url_verification"), challenge: fc.jsonValue() }).map(json),
    },
    {
      weight: 3,
      arbitrary: fc
        .oneof(mutated(t.actions, 4), fc.jsonValue())
        .map((value) => form({ payload: JSON.stringify(value) ?? "" })),
    },
    { weight: 1, arbitrary: fc.string().map((payload) => form({ payload })) },
    { weight: 1, arbitrary: mutated(t.command).map((value) => form(stringFields(value))) },
    {
      weight: 1,
      arbitrary: fc.string().map((body): HttpBody => ({ contentType: "application/json", body })),
    },
  );
}

/** Templates of the Telegram updates the bot handles (without update_id; the fake assigns it). */
export function telegramTemplates(strangerId: number, chatId: number) {
  const from = { id: strangerId, is_bot: false, first_name: "Fuzz", username: "fuzz" };
  const chat = { id: chatId, type: "private", first_name: "Fuzz" };
  const message = {
    message_id: 7,
    date: 1700000000,
    chat,
    from,
    text: "/status hello @coworker_bot",
    entities: [{ type: "bot_command", offset: 0, length: 7 }],
    message_thread_id: 3,
    is_topic_message: true,
    reply_to_message: { message_id: 5, from },
  };
  return {
    message: { message },
    channelPost: { channel_post: { ...message, chat: { id: -1009, type: "channel", title: "News" } } },
    callback: {
      callback_query: { id: "q1", from, chat_instance: "ci", data: "k:p1:once", message },
    },
    member: {
      my_chat_member: {
        chat: { id: -1009, type: "supergroup", title: "G" },
        from,
        date: 1700000000,
        old_chat_member: { user: from, status: "member" },
        new_chat_member: { user: { id: 1, is_bot: true, first_name: "bot" }, status: "left" },
      },
    },
    stopped: { stopped_message_generation: { chat, message_thread_id: 1 } },
  };
}

/** A Telegram update body (an object; `update_id` is left to the fake). */
export function telegramUpdate(strangerId: number, chatId: number): fc.Arbitrary<Record<string, unknown>> {
  const t = telegramTemplates(strangerId, chatId);
  const keyed = (key: string) =>
    fc.jsonValue({ maxDepth: 3 }).map((value): Record<string, unknown> => ({ [key]: value }));
  return fc
    .oneof(
      mutated(t.message, 4),
      mutated(t.channelPost, 4),
      mutated(t.callback, 4),
      mutated(t.member, 4),
      mutated(t.stopped, 4),
      keyed("message"),
      keyed("callback_query"),
    )
    .map((value): Record<string, unknown> => {
      const body =
        typeof value === "object" && value !== null && !Array.isArray(value) ? value : { message: value };
      const { update_id: _, ...rest } = body as Record<string, unknown>;
      return rest;
    });
}

/** A callback_query update: the Telegram button-press payload, mutated. */
export function telegramPress(strangerId: number, chatId: number): fc.Arbitrary<Record<string, unknown>> {
  return mutated(telegramTemplates(strangerId, chatId).callback, 5).map((value) =>
    typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : { callback_query: value },
  );
}
