/**
 * How an admitted sender's message goes through their hand-over lane (hand-over-lanes.ts route): a
 * service command (one the session layer answers: `service.command()`) or a message, handed over
 * with its files. A command is answered at once, unless their lane is busy and it may change what
 * their earlier message meets (/new, /mode, …): then it waits there. Their /stop is answered at
 * once, never behind what they sent before it, and cancels their lane (its commands spared), then
 * stops the turn without waiting for the drops' claims; they are told what it dropped, with the
 * stop's answer, never a message handed over elsewhere that Telegram delivered again:
 * each drop is claimed first in the session layer's record of deliveries, where a message's
 * hand-over and a command's run claim their update too (telegram-hand-over.ts claimDelivery). A
 * command claims its update where it runs (telegram-command-runs.ts runOnce): a /stop before it
 * cancels the lane, so one delivered again cancels nothing; any other once the lane hands it over.
 * When the channel stops before a message (a command waiting behind one) is handed over, it is
 * dropped, and its sender is told to send it again (hand-over-lanes.ts drain) when Telegram will
 * not deliver it again: polling confirmed its update as it fetched it, and a webhook update may
 * have been answered at the webhook's deadline. A webhook update the stop left unanswered (the
 * receiver's `redelivers`) comes again, to the next process behind the URL: its sender is not
 * told, or their resend would be a second turn. Each update's hand-over is noted
 * (telegram-hand-over-waits.ts), so webhook mode answers once it is recorded.
 */
import type { Update } from "grammy/types";
import { COMMAND_NAMES } from "../../core/text-commands.js";
import { droppedNote, LANE_FULL, type LaneEntry, type Routed } from "../shared/hand-over-lanes.js";
import type { Admitted } from "./telegram-admission.js";
import { replyOf, runOnce } from "./telegram-command-runs.js";
import {
  claimDelivery,
  type Delivered,
  type HandOverDeps,
  handOver,
  laneOf,
  positionOf,
} from "./telegram-hand-over.js";
import type { HandOverWaits } from "./telegram-hand-over-waits.js";
import { userOf } from "./telegram-inbound.js";

/** What routing needs besides a hand-over's parts. */
export interface RoutingDeps extends HandOverDeps {
  /** Where each update's hand-over is noted, for webhook mode to answer after it. */
  readonly waits: HandOverWaits;
  /** Whether Telegram delivers update `updateId` again after the channel stopped (see module comment). */
  readonly redelivers: (updateId: number) => boolean;
}

/** Commands passed to `service.command()`; the access commands are the channel's own. */
const SERVICE_COMMANDS: ReadonlySet<string> = new Set([
  ...COMMAND_NAMES,
  // Contributed by other modules (subscriptions, schedules, skills).
  "subscriptions",
  "unsubscribe",
  "schedules",
  "cancel_task",
  "skills",
  "skill",
]);

/** A message (no service command) as its sender's lane routes it: handed over with its files. */
function messageEntry(delivered: Delivered, admitted: Admitted, deps: RoutingDeps): LaneEntry {
  return {
    kind: "message",
    handOver: (signal) => handOver([delivered], admitted.target, deps, admitted.tell, signal),
    tell: admitted.tell,
    redelivered: () => deps.redelivers(delivered.updateId),
    claimDrop: () => claimDelivery([delivered], deps),
    position: positionOf(delivered),
  };
}

/**
 * Route a service command through its sender's lane `lane`, claimed where it runs (see module
 * comment): a /stop at once, answered with what it dropped; any other when the lane hands it over.
 */
async function routeCommand(
  lane: string,
  delivered: Delivered,
  command: { readonly name: string; readonly args: readonly string[] },
  { target, tell }: Admitted,
  deps: RoutingDeps,
): Promise<Routed> {
  const { name } = command;
  const once = <Result>(run: () => Promise<Result>) => runOnce(delivered, name, run, tell, deps);
  const reply = () =>
    replyOf(
      name,
      () => deps.service.command(target, userOf(delivered.message.from!), name, command.args),
      deps,
    );
  const position = positionOf(delivered);
  if (name === "stop") {
    // The lane is cancelled as the stop is routed; the turn is stopped (reply) before the drops'
    // claims are awaited, then both are told in one message.
    const stop = async () => {
      let dropped = 0;
      const cancelled = deps.lanes.route(lane, {
        kind: "stop",
        position,
        answer: async (count) => {
          dropped = count;
        },
      });
      const text = await reply();
      const routed = await cancelled;
      await tell(dropped > 0 ? `${text}\n\n${droppedNote(dropped)}` : text);
      return routed;
    };
    return (await once(stop)) ?? { kind: "answered" };
  }
  return deps.lanes.route(lane, {
    kind: "command",
    name,
    handOver: () => once(async () => tell(await reply())),
    tell,
    redelivered: () => deps.redelivers(delivered.updateId),
    // Claimed as its run would be: a redelivery of its update (to any process) is dropped untold.
    claimDrop: () => claimDelivery([delivered], deps),
    position,
  });
}

/**
 * Route `delivered`, the message of an admitted sender in `update` (its `command`, if any), through
 * their lane (see module comment); a full lane refuses it, its sender told LANE_FULL.
 */
export function routeToLane(
  update: Update,
  delivered: Delivered,
  command: { readonly name: string; readonly args: readonly string[] } | undefined,
  admitted: Admitted,
  deps: RoutingDeps,
): Promise<void> {
  const lane = laneOf(delivered.message);
  const routing =
    command && SERVICE_COMMANDS.has(command.name)
      ? routeCommand(lane, delivered, command, admitted, deps)
      : deps.lanes.route(lane, messageEntry(delivered, admitted, deps));
  return routing.then((routed) => {
    if (routed.kind === "queued") deps.waits.note(update, routed.handedOver);
    if (routed.kind !== "full") return;
    deps.logger.info({ lane }, "telegram: hand-over lane full");
    return admitted.tell(LANE_FULL);
  });
}
