/**
 * The dedupe keys of a Slack interaction (a slash command, a button press): the ids that make one
 * person's action unique, so a redelivery (Socket Mode re-sends an envelope it saw no ack for) or
 * a replay (a captured signed HTTP request posted again inside Slack's 5-minute signature window)
 * is recognised and dropped. Every interaction Slack sends carries its own `trigger_id`. A press
 * without one is known by who pressed, its action's ids and `action_ts` (two people's presses of
 * one button in the same instant are two presses); one without `action_ts` either by who pressed
 * which button (ids and value) on which message, so it counts once — a button belongs to one
 * message, and nothing Slack sends lacks both. A command has no such anchor (a person may type the
 * same one again), so one without a trigger id has no key and is refused by the caller. Ids are
 * hashed, so any length fits the store's key limit.
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
    readonly value?: string | undefined;
  };
}

/** The key of a slash command: its trigger id; none when it has none (see the module comment). */
export function commandKey(command: CommandIds): string | undefined {
  return command.trigger_id ? triggerKey(command.trigger_id) : undefined;
}

/**
 * The key of a button press: its trigger id, else who pressed and its action's ids with their
 * `action_ts`, else who pressed which button on which message (see the module comment).
 */
export function pressKey(press: PressIds): string {
  if (press.trigger_id) return triggerKey(press.trigger_id);
  const { action } = press;
  const button = [press.user, press.channel, press.messageTs, action.block_id ?? "", action.action_id];
  if (action.action_ts) return `slack:action:${digest(JSON.stringify([...button, action.action_ts]))}`;
  return `slack:button:${digest(JSON.stringify([...button, action.value ?? ""]))}`;
}

function triggerKey(triggerId: string): string {
  return `slack:trigger:${digest(triggerId)}`;
}

function digest(text: string): string {
  return createHash("sha256").update(text).digest("base64url");
}
