/**
 * What the Slack app must be granted for this adapter, in one place: the bot scopes and the
 * event subscriptions of config/slack-app-manifest.yaml (a test keeps the two in step). At start
 * the channel compares the granted scopes (Slack reports them with every call) and warns about
 * missing ones, instead of failing later with `missing_scope` on a user's message.
 */

/** Bot token scopes the adapter uses (see the manifest for why each one). */
export const REQUIRED_BOT_SCOPES: readonly string[] = Object.freeze([
  "app_mentions:read",
  "assistant:write",
  "channels:history",
  "channels:join",
  "channels:read",
  "chat:write",
  "commands",
  "files:read",
  "files:write",
  "groups:history",
  "groups:read",
  "im:history",
  "mpim:history",
  "reactions:write",
  "users:read",
]);

/** Bot events the adapter handles. */
export const BOT_EVENTS: readonly string[] = Object.freeze([
  "app_mention",
  "channel_left",
  "group_left",
  "member_left_channel",
  "message.channels",
  "message.groups",
  "message.im",
  "message.mpim",
]);

/** The required scopes missing from `granted`. */
export function missingScopes(granted: readonly string[]): string[] {
  const have = new Set(granted);
  return REQUIRED_BOT_SCOPES.filter((scope) => !have.has(scope));
}
