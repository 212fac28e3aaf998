/**
 * Button presses and the /coworker slash command. Both are acknowledged first; then card
 * presses go to `service.press` with the pending id and action from the button and the channel and
 * thread of the message it was pressed on (a card is decided only from its own channel:
 * approvals/press-place.ts — not from a payload of another channel that carries its id), Stop and
 * Retry become control presses for the message's thread, a button this version never posted is
 * answered "no longer active", and anything refused (not allowed, already decided, expired) is
 * explained privately with chat.postEphemeral — as plain text, escaped: a refusal names people
 * (the requester, whoever decided), and a display name like `<https://…|Approve>` or `<!channel>`
 * must neither link nor ping. The slash command
 * (Slack does not allow them inside threads) acts on the person's latest thread in that channel
 * (slack-latest-threads.ts), under the same access rules as a message there, and its answer starts
 * with a line naming that thread, since the person never saw it chosen. A command there that
 * changes the thread's session (new, stop, mode, model, grants revoke) is also told to the thread,
 * naming who ran it, as its typed form is: else anyone could reset, stop or retune a thread people
 * share without a word to them, where a typed command answers in the thread. In a channel where that
 * thread is not known — the person has not talked to the bot there, with one process none is
 * known after its restart, and with several on one store none after 7 days of silence — only the
 * commands about the person's own items run; the others are refused with where to type them,
 * never run on a session the whole channel would share.
 * A Stop press and `/coworker stop` first drop what their person has waiting in the thread's
 * hand-over lane (`stopLane`: slack-lanes.ts), as that person's typed stop does, then stop the turn
 * at once: the note telling them what was dropped (a post that may wait on a slow Slack for a
 * minute and more) is awaited only after, never while the turn runs on.
 * Each interaction runs once: its ids (slack-interaction-keys.ts) are recorded where the session
 * layer records messages, and a repeat — a Socket Mode redelivery, a replayed signed HTTP request —
 * is acknowledged like any other but does nothing; a command without a trigger id, which could
 * not be told from its repeat, is refused.
 */
import type { Logger } from "pino";
import type { ButtonPress } from "../../core/button-press.js";
import type { ConversationService } from "../../sessions/contracts.js";
import type { PlatformUser, ThreadTarget } from "../../core/thread-target.js";
import { COMMAND_HELP } from "../../core/text-commands.js";
import { commandWord } from "../../sessions/extra-commands.js";
import { z } from "zod";
import { INACTIVE_BUTTON } from "../intake-log.js";
import type { AccessPolicy } from "./slack-access.js";
import { callWithRetry, describeError, type SlackClients } from "./slack-api.js";
import { ACTION_IDS, CARD_ACTION_PATTERN, context, decodeCardValue } from "./slack-blocks.js";
import { kindOfChannel } from "./slack-conversation-kind.js";
import { slackThreadTarget } from "./slack-thread-target.js";
import type { BotIdentity } from "./slack-events.js";
import { commandKey, pressKey } from "./slack-interaction-keys.js";
import { markdownToMrkdwn } from "./slack-markdown.js";
import { escapeMrkdwn } from "./slack-limits.js";
import type { LatestThreads } from "./slack-latest-threads.js";
import { threadNameLine } from "./slack-thread-name.js";
import type { UserDirectory } from "./slack-users.js";
import { NO_UNFURLS } from "./slack-unfurls.js";

export interface InteractionDeps {
  readonly bot: BotIdentity;
  readonly service: ConversationService;
  readonly clients: SlackClients;
  /** Each person's latest thread per channel: what a slash command acts on. */
  readonly latest: Pick<LatestThreads, "latest">;
  readonly users: UserDirectory;
  readonly access: AccessPolicy;
  readonly logger: Logger;
  /**
   * Drops what `userId` has waiting in the target thread's hand-over lane, telling them, as their
   * typed stop does (SlackInbound.stopLane): the drop is taken as it is called, before it first
   * waits; it settles once they are told.
   */
  readonly stopLane: (target: ThreadTarget, userId: string) => Promise<void>;
}

const blockActionsSchema = z.looseObject({
  user: z.looseObject({
    id: z.string(),
    username: z.string().optional(),
    name: z.string().optional(),
    team_id: z.string().optional(),
  }),
  team: z.looseObject({ id: z.string() }).nullish(),
  channel: z.looseObject({ id: z.string() }).optional(),
  container: z
    .looseObject({ channel_id: z.string().optional(), message_ts: z.string().optional() })
    .optional(),
  message: z
    .looseObject({
      ts: z.string(),
      thread_ts: z.string().optional(),
      blocks: z.array(z.unknown()).optional(),
    })
    .optional(),
  actions: z
    .array(
      z.looseObject({
        action_id: z.string(),
        block_id: z.string().optional(),
        action_ts: z.string().optional(),
        value: z.string().optional(),
      }),
    )
    .min(1),
  trigger_id: z.string().optional(),
});
type BlockActions = z.infer<typeof blockActionsSchema>;

const slashSchema = z.looseObject({
  user_id: z.string(),
  user_name: z.string().optional(),
  team_id: z.string(),
  channel_id: z.string(),
  text: z.string(),
  trigger_id: z.string().optional(),
});

/**
 * The commands that need no thread in a channel: they list or cancel the person's own items, act
 * on a pending item by id or on the workspace's skill switches — never on the conversation's
 * session. Every other command (mode, model, new, stop, status, grants, skill, reviewer, any
 * module's) needs the thread it is for.
 */
const PER_PERSON_COMMANDS: ReadonlySet<string> = new Set([
  "schedules",
  "cancel_task",
  "subscriptions",
  "unsubscribe",
  "skills",
  "approve",
  "deny",
]);

/** Whether `/coworker <name> <args>` changes the thread's session: told to the thread (see the module header). */
function changesSession(name: string, args: readonly string[]): boolean {
  const word = commandWord(name);
  if (word === "grants") return args[0]?.toLowerCase() === "revoke";
  return word === "new" || word === "stop" || word === "mode" || word === "model";
}

/**
 * The answer to a session command in a channel from someone whose thread there is not known
 * (Slack mrkdwn, with a mention of the bot).
 */
function noThreadRefusal(botUserId: string, text: string): string {
  return [
    "I don't know which thread this is for (Slack doesn't send /coworker from inside a thread), so I didn't run it.",
    `Type it in the thread instead, mentioning me: "<@${botUserId}> ${escapeMrkdwn(text)}" — or reply in that thread first, then use /coworker again.`,
  ].join(" ");
}

/**
 * The answer to a slash command without a trigger id: Slack always sends one, and without it a
 * replay could not be told from the command (slack-interaction-keys.ts).
 */
const NO_TRIGGER_ID = "Slack sent this command without its trigger id, so I didn't run it. Please try again.";

/** What the slash command replies through (Bolt's `respond`). */
export type Respond = (message: { response_type: "ephemeral"; text: string }) => Promise<unknown>;

export class SlackInteractions {
  constructor(private readonly deps: InteractionDeps) {}

  /** A block_actions payload (already acknowledged). Never throws. */
  async press(rawBody: unknown): Promise<void> {
    const parsed = blockActionsSchema.safeParse(rawBody);
    if (!parsed.success) {
      this.deps.logger.warn("slack button press ignored: unexpected payload");
      return;
    }
    const body = parsed.data;
    const action = body.actions[0] as BlockActions["actions"][number];
    const channel = body.channel?.id ?? body.container?.channel_id;
    const messageTs = body.message?.ts ?? body.container?.message_ts;
    if (!channel || !messageTs) return;
    const threadTs = body.message?.thread_ts ?? messageTs;
    const tell = (text: string) => this.ephemeral(channel, body.user.id, threadTs, text);
    try {
      const key = pressKey({ trigger_id: body.trigger_id, user: body.user.id, channel, messageTs, action });
      if (!(await this.firstTime(key, "button press", channel))) return;
      const user: PlatformUser = await this.deps.users.user(
        body.user.id,
        body.user.name ?? body.user.username,
      );
      // The channel counts as for a message: no Stop, Retry or card works where the bot may not.
      const access = await this.deps.access.check(user.id, channel, kindOfChannel(channel));
      if (!access.allowed) return await tell(access.refusal);
      const press = this.toPress(body, action, user, channel, threadTs);
      if (!press) return await tell(INACTIVE_BUTTON);
      const stop = press.kind === "control" && press.control === "stop";
      const laneStopped = stop ? this.stopLane(press.target, user.id) : undefined;
      const result = await this.deps.service.press(press);
      await laneStopped;
      if (result.status !== "accepted") return await tell(result.message);
      if (press.kind === "control" && press.control === "retry") await this.retired(channel, messageTs, body);
    } catch (error) {
      this.deps.logger.error({ err: describeError(error) }, "slack button press failed");
      await tell("Sorry — that didn't work. Please try again.");
    }
  }

  private toPress(
    body: BlockActions,
    action: BlockActions["actions"][number],
    user: PlatformUser,
    channel: string,
    threadTs: string,
  ): ButtonPress | undefined {
    const target = slackThreadTarget(this.deps.bot.teamId, {
      channel,
      thread: threadTs,
      user: user.id,
      kind: kindOfChannel(channel),
      senderTeam: body.user.team_id ?? body.team?.id,
    });
    if (action.action_id === ACTION_IDS.stop || action.action_id === ACTION_IDS.retry) {
      return {
        kind: "control",
        control: action.action_id === ACTION_IDS.stop ? "stop" : "retry",
        target,
        user,
      };
    }
    if (!CARD_ACTION_PATTERN.test(action.action_id)) return undefined;
    const card = decodeCardValue(action.value);
    return card
      ? {
          kind: "card",
          platform: "slack",
          pendingId: card.pendingId,
          action: card.action,
          user,
          pressedIn: target,
        }
      : undefined;
  }

  /** After a retry was accepted, the failed reply loses its Retry button. */
  private async retired(channel: string, ts: string, body: BlockActions): Promise<void> {
    const blocks = (body.message?.blocks ?? []).filter((b) => (b as { type?: string }).type !== "actions");
    try {
      await callWithRetry(() =>
        this.deps.clients.api.chat.update({
          channel,
          ts,
          text: "Retrying…",
          blocks: [...(blocks as never[]), context("↻ Retrying…")],
        }),
      );
    } catch (error) {
      this.deps.logger.debug({ err: describeError(error) }, "slack could not retire the retry button");
    }
  }

  /** A /coworker command (already acknowledged). Never throws. */
  async command(rawCommand: unknown, respond: Respond): Promise<void> {
    const parsed = slashSchema.safeParse(rawCommand);
    if (!parsed.success) return;
    const command = parsed.data;
    const replyMrkdwn = (text: string) =>
      respond({ response_type: "ephemeral", text, ...NO_UNFURLS }).catch((error: unknown) =>
        this.deps.logger.warn({ err: describeError(error) }, "slack command reply failed"),
      );
    const reply = (text: string) => replyMrkdwn(markdownToMrkdwn(text) || text);
    const key = commandKey(command);
    if (key === undefined) {
      this.deps.logger.info({ channel: command.channel_id }, "slack command refused: no trigger_id");
      return void (await reply(NO_TRIGGER_ID));
    }
    try {
      if (!(await this.firstTime(key, "slash command", command.channel_id))) return;
    } catch (error) {
      this.deps.logger.error({ err: describeError(error) }, "slack command not recorded");
      return void (await reply("Sorry — that command failed. Please try again."));
    }
    const kind = kindOfChannel(command.channel_id);
    const access = await this.deps.access.check(command.user_id, command.channel_id, kind);
    if (!access.allowed) return void (await reply(access.refusal));
    const [name, ...args] = command.text
      .trim()
      .split(/\s+/)
      .filter((w) => w.length > 0);
    if (name === undefined) return void (await reply(`Usage: \`/coworker <command>\`\n${COMMAND_HELP}`));
    try {
      const thread = await this.deps.latest.latest(command.channel_id, command.user_id);
      // Without a thread, a command in a channel would act on one session shared by the whole channel.
      const perPerson = PER_PERSON_COMMANDS.has(commandWord(name));
      if (kind === "channel" && thread === undefined && !perPerson)
        return void (await replyMrkdwn(noThreadRefusal(this.deps.bot.userId, command.text.trim())));
      const target = slackThreadTarget(this.deps.bot.teamId, {
        channel: command.channel_id,
        thread: thread || undefined,
        user: command.user_id,
        kind,
        senderTeam: command.team_id,
      });
      const user = await this.deps.users.user(command.user_id, command.user_name);
      const laneStopped = commandWord(name) === "stop" ? this.stopLane(target, command.user_id) : undefined;
      // The answer is ephemeral: in a channel, a listing of the person's items stays in it too.
      const privately = kind === "channel";
      const answer = await this.deps.service.command(target, user, name.toLowerCase(), args, { privately });
      await laneStopped;
      const shown = markdownToMrkdwn(answer) || answer;
      if (kind === "channel" && target.thread && changesSession(name, args))
        await this.tellThread(
          target,
          `<@${command.user_id}> ran \`/coworker ${commandWord(name)}\` here: ${shown}`,
        );
      // A command that acted on the thread says which one: the person never saw it chosen.
      if (!target.thread || perPerson) return void (await replyMrkdwn(shown));
      const line = await threadNameLine(
        this.deps.clients.api,
        command.channel_id,
        target.thread,
        this.deps.logger,
      );
      await replyMrkdwn(`${line}\n${shown}`);
    } catch (error) {
      this.deps.logger.error({ err: describeError(error) }, "slack command failed");
      await reply("Sorry — that command failed. Please try again.");
    }
  }

  /**
   * Drop what `userId` has waiting in the target thread's lane: taken at once, as it is called; what
   * it returns settles once they are told, which may wait on Slack, so the caller stops the turn
   * first and awaits it after. Never rejects: a failure is logged.
   */
  private stopLane(target: ThreadTarget, userId: string): Promise<void> {
    return this.deps.stopLane(target, userId).catch((error: unknown) => {
      this.deps.logger.warn({ err: describeError(error) }, "slack could not stop the hand-over lane");
    });
  }

  /** Post `text` (mrkdwn) in the target's thread for everyone there, best effort: a failure is logged. */
  private async tellThread(target: ThreadTarget, text: string): Promise<void> {
    try {
      await this.deps.clients.api.chat.postMessage({
        channel: target.channel,
        text,
        ...(target.thread ? { thread_ts: target.thread } : {}),
        ...NO_UNFURLS,
      });
    } catch (error) {
      this.deps.logger.warn({ err: describeError(error) }, "slack could not tell the thread of a command");
    }
  }

  /**
   * Record an interaction's key; false — logged, and the interaction then does nothing — when it
   * was seen before. Rejects when it cannot be recorded (the caller apologises).
   */
  private async firstTime(key: string, kind: string, channel: string): Promise<boolean> {
    if (await this.deps.service.firstDelivery([key])) return true;
    this.deps.logger.info(
      { kind, channel },
      "slack interaction dropped: already handled (a redelivery or replay)",
    );
    return false;
  }

  /** Tell `user` privately: `text` is plain text (a press's refusal), shown as it is. */
  private async ephemeral(channel: string, user: string, threadTs: string, text: string): Promise<void> {
    try {
      await this.deps.clients.api.chat.postEphemeral({
        channel,
        user,
        text: escapeMrkdwn(text),
        thread_ts: threadTs,
      });
    } catch (error) {
      this.deps.logger.warn({ err: describeError(error) }, "slack ephemeral message failed");
    }
  }
}
