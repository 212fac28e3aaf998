/**
 * Slack intake screening: decides, before Bolt dereferences anything, whether an inbound body
 * (a Socket Mode envelope's payload or an HTTP Events API / interactivity body) may reach the
 * app. Only shapes the channel handles pass — event callbacks of the events it listens to, block
 * actions, the /coworker command, and HTTP's url_verification — each validated far enough that
 * Bolt's own routing cannot throw on it. Everything else is refused with a kind for the log, and
 * is acknowledged by the caller (a slash command also gets a short reply). Deliveries from
 * another team or enterprise (Slack Connect) are refused unless `allowExternal`. On an Enterprise
 * Grid installation the other workspaces of its enterprise count as its own, except in a channel
 * shared with other organisations: an event there names only the sender's team, which cannot be
 * told apart from another organisation's, so only the installation's own team passes — or the
 * installation's enterprise id, which Slack may put where a team id is expected on Grid payloads
 * and which a partner's delivery never carries. There a message or mention must also name its
 * sender's team (`team`, `user_team` or `source_team`): the envelope's team is always the
 * installation's, so a sender whose team is not stated could be anyone's — but for an edit or a
 * deletion (`message_changed` / `message_deleted`), which names none and only revises channel
 * subscriptions' copy of a message already let through. A button press carries
 * no shared-channel flag, and in a shared channel the rest of its body names the installation's
 * side, so its presser's own team (`user.team_id`, the organisation's id for a Grid user) must be
 * stated and be the installation's team or enterprise, as in a shared channel.
 */
import { z } from "zod";

/** The events the channel has listeners for; any other event type is acknowledged and dropped. */
export const HANDLED_EVENTS = [
  "message",
  "app_mention",
  "member_left_channel",
  "channel_left",
  "group_left",
] as const;

/** The slash command the channel answers. */
export const SLASH_COMMAND = "/coworker";

/** The installation a delivery must come from. */
export interface Installation {
  readonly teamId: string;
  readonly enterpriseId?: string | undefined;
}

/** What a passing body is. */
export type BodyKind = "event_callback" | "block_actions" | "command" | "url_verification";

export type Screening =
  | { readonly pass: true; readonly body: BodyKind }
  | {
      readonly pass: false;
      /** A short fixed name for the log ("malformed_body", "external_team", …). */
      readonly kind: string;
      /** Text for the acknowledgement, where Slack shows one (slash commands). */
      readonly reply?: string;
    };

const id = z.string().min(1).max(200);
const optionalId = id.nullish();

const eventSchema = z.looseObject({
  type: z.enum(HANDLED_EVENTS),
  channel: z.string().max(200).optional(),
  user: z.string().max(200).optional(),
  team: z.string().max(200).optional(),
  user_team: z.string().max(200).optional(),
  source_team: z.string().max(200).optional(),
  subtype: z.string().max(200).optional(),
  bot_id: z.string().max(200).optional(),
  ts: z.string().max(100).optional(),
  thread_ts: z.string().max(100).optional(),
  event_ts: z.string().max(100).optional(),
  text: z.string().optional(),
  item: z.looseObject({ channel: z.string().optional() }).optional(),
  message: z.looseObject({}).optional(),
});

const authorizationSchema = z.looseObject({
  team_id: optionalId,
  enterprise_id: optionalId,
  user_id: z.string().optional(),
  is_bot: z.boolean().optional(),
  is_enterprise_install: z.boolean().optional(),
});

const eventCallbackSchema = z.looseObject({
  type: z.literal("event_callback"),
  team_id: id,
  enterprise_id: optionalId,
  api_app_id: z.string().optional(),
  event_id: z.string().max(200).optional(),
  is_enterprise_install: z.boolean().optional(),
  /** The event happened in a channel shared with other organisations (Slack Connect). */
  is_ext_shared_channel: z.boolean().optional(),
  authorizations: z.array(authorizationSchema).optional(),
  event: eventSchema,
});

const blockActionsSchema = z.looseObject({
  type: z.literal("block_actions"),
  user: z.looseObject({
    id,
    team_id: optionalId,
    enterprise_id: optionalId,
    name: z.string().optional(),
    username: z.string().optional(),
  }),
  team: z.looseObject({ id, enterprise_id: optionalId }).nullish(),
  enterprise: z.looseObject({ id }).nullish(),
  is_enterprise_install: z.boolean().optional(),
  channel: z.looseObject({ id }).optional(),
  container: z
    .looseObject({ channel_id: z.string().optional(), message_ts: z.string().optional() })
    .optional(),
  message: z.looseObject({ ts: z.string(), thread_ts: z.string().optional() }).optional(),
  actions: z
    .array(
      z.looseObject({
        action_id: z.string().min(1).max(255),
        block_id: z.string().optional(),
        value: z.string().optional(),
        type: z.string().optional(),
      }),
    )
    .min(1),
  response_url: z.string().optional(),
  trigger_id: z.string().optional(),
});

const slashSchema = z.looseObject({
  command: z.string().max(200),
  team_id: id,
  enterprise_id: optionalId,
  user_id: id,
  user_name: z.string().optional(),
  channel_id: id,
  text: z.string(),
  response_url: z.string().optional(),
  trigger_id: z.string().optional(),
});

const urlVerificationSchema = z.looseObject({ type: z.literal("url_verification"), challenge: z.string() });

const refuse = (kind: string, reply?: string): Screening =>
  reply === undefined ? { pass: false, kind } : { pass: false, kind, reply };
const pass = (body: BodyKind): Screening => ({ pass: true, body });

/**
 * Whether the teams and enterprises named by a delivery are all the installation's own. A team
 * equal to the installation's team or enterprise id is; in a channel shared with other
 * organisations (`externallyShared`) no other team is, whatever enterprise the delivery names
 * (module comment).
 */
export function isOwnInstallation(
  installation: Installation,
  teams: readonly (string | null | undefined)[],
  enterprises: readonly (string | null | undefined)[],
  externallyShared = false,
): boolean {
  const named = enterprises.filter((e): e is string => typeof e === "string" && e.length > 0);
  if (named.some((e) => e !== installation.enterpriseId)) return false;
  // Within the installation's own Enterprise Grid, workspaces of the same enterprise belong.
  if (installation.enterpriseId !== undefined && named.length > 0 && !externallyShared) return true;
  const own = (team: string) => team === installation.teamId || team === installation.enterpriseId;
  return teams.every((t) => t === undefined || t === null || t === "" || own(t));
}

/**
 * Screen one inbound body. `http` also admits HTTP-only housekeeping (url_verification).
 * Pure and total: any value in, a verdict out.
 */
export function screenSlackBody(
  body: unknown,
  installation: Installation,
  options: { readonly allowExternal: boolean; readonly http?: boolean },
): Screening {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return refuse("malformed_body");
  const own = (
    teams: (string | null | undefined)[],
    enterprises: (string | null | undefined)[],
    externallyShared?: boolean,
  ) => options.allowExternal || isOwnInstallation(installation, teams, enterprises, externallyShared);
  const type = (body as { type?: unknown }).type;
  if (type === "event_callback") {
    const parsed = eventCallbackSchema.safeParse(body);
    if (!parsed.success) return refuse(eventKind(body));
    const { event } = parsed.data;
    const senderTeams = [event.team, event.user_team, event.source_team];
    const shared = parsed.data.is_ext_shared_channel === true;
    // In a shared channel a sender whose team goes unstated is no proof of being ours (module comment).
    // An edit or deletion names no sender at its top and is no one speaking: it never reaches a
    // turn, and only revises a buffered copy of a message that passed this check when posted.
    const changed = event.subtype === "message_changed" || event.subtype === "message_deleted";
    const spoken = (event.type === "message" && !changed) || event.type === "app_mention";
    if (shared && spoken && !options.allowExternal && !senderTeams.some((t) => t !== undefined && t !== ""))
      return refuse("external_team");
    return own([parsed.data.team_id, ...senderTeams], [parsed.data.enterprise_id], shared)
      ? pass("event_callback")
      : refuse("external_team");
  }
  if (type === "block_actions") {
    const parsed = blockActionsSchema.safeParse(body);
    if (!parsed.success) return refuse("malformed_block_actions");
    const b = parsed.data;
    const enterprises = [b.enterprise?.id, b.team?.enterprise_id, b.user.enterprise_id];
    // A press says nothing of whether its channel is shared: its presser is held to the rule of
    // a shared channel, where no team but the installation's own passes (module comment).
    const mayBeSharedChannel = true;
    const presserTeamStated = options.allowExternal || (b.user.team_id ?? "") !== "";
    return presserTeamStated &&
      own([b.team?.id], enterprises) &&
      own([b.user.team_id], enterprises, mayBeSharedChannel)
      ? pass("block_actions")
      : refuse("external_team");
  }
  if (type === "url_verification" && options.http)
    return urlVerificationSchema.safeParse(body).success
      ? pass("url_verification")
      : refuse("malformed_body");
  if (type === undefined && "command" in body) {
    const parsed = slashSchema.safeParse(body);
    if (!parsed.success) return refuse("malformed_command");
    if (!own([parsed.data.team_id], [parsed.data.enterprise_id]))
      return refuse("external_team", "This Coworker serves its own workspace only.");
    if (parsed.data.command !== SLASH_COMMAND)
      return refuse("unknown_command", `This app answers ${SLASH_COMMAND} only.`);
    return pass("command");
  }
  return refuse(typeof type === "string" ? "unhandled_type" : "malformed_body");
}

/** An event callback that failed validation: an event type nobody listens to, or a bad shape. */
function eventKind(body: object): string {
  const event = (body as { event?: unknown }).event;
  const eventType =
    typeof event === "object" && event !== null ? (event as { type?: unknown }).type : undefined;
  const handled = (HANDLED_EVENTS as readonly unknown[]).includes(eventType);
  return typeof eventType === "string" && !handled ? "unhandled_event" : "malformed_event";
}
