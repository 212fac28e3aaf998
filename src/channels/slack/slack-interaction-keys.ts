/**
 * The dedupe keys of a Slack interaction (a slash command, a button press): the ids that make one
 * person's action unique, so a redelivery (Socket Mode re-sends an envelope it saw no ack for) or
 * a replay (a captured signed HTTP request posted again inside Slack's 5-minute signature window)
 * is recognised and dropped. Every interaction carries its own `trigger_id`; a press without one
 * is known by who pressed, its action's ids and `action_ts` (two people's presses of one button in
 * the same instant are two presses). Ids are hashed, so any length fits the store's
 * key limit. No key means the interaction cannot be told apart from another and is not deduplicated.
 */
import { createHash } from "node:crypto";

/** The parts of a slash command that identify it. */
export interface CommandIds {
  readonly trigger_id?: string | undefined;
}

/** The parts of a block_actions payload that identify the press. */
export interface PressIds {
  readonly trigger_id?: string | undefined;
  /** The Slack user id of who pressed. */
  readonly user: string;
  readonly channel: string;
  readonly messageTs: string;
  readonly action: {
    readonly action_id: string;
    readonly block_id?: string | undefined;
    readonly action_ts?: string | undefined;
  };
}

/** The keys of a slash command: its trigger id, when it has one. */
export function commandKeys(command: CommandIds): readonly string[] {
  return command.trigger_id ? [triggerKey(command.trigger_id)] : [];
}

/** The keys of a button press: its trigger id, else who pressed and its action's ids with their `action_ts`. */
export function pressKeys(press: PressIds): readonly string[] {
  if (press.trigger_id) return [triggerKey(press.trigger_id)];
  const { action } = press;
  if (!action.action_ts) return [];
  const parts = [
    press.user,
    press.channel,
    press.messageTs,
    action.block_id ?? "",
    action.action_id,
    action.action_ts,
  ];
  return [`slack:action:${digest(JSON.stringify(parts))}`];
}

function triggerKey(triggerId: string): string {
  return `slack:trigger:${digest(triggerId)}`;
}

function digest(text: string): string {
  return createHash("sha256").update(text).digest("base64url");
}
