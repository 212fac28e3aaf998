/**
 * Who may decide a pending approval or answer a question: the person whose turn asked, plus the
 * configured approvers — global or per channel, always platform-qualified ("slack:U0123",
 * "telegram:4567") so an id on one platform never authorises someone on another. Loosening a
 * session (a standing "always" grant, a switch to a less safe mode) is narrower: in a DM only its
 * owner; in a shared thread (Slack channel thread, Telegram group or topic) the configured
 * approvers, or — when none is configured — the person who started the session. Approving a plan
 * loosens too (it leaves read-only plan mode), so whoever may loosen the session may decide a plan
 * too. A card its requester may not approve says who may, in the words a refused press gets.
 * A platform no access rule checks, running beside ones that do (the console beside Slack or
 * Telegram: whoever types at the terminal), decides for its own sessions only. A change that steers
 * every later session goes to an approver of the platform named in `approvers`, else to nobody
 * (only the console's person running alone, who owns the deployment, decides it then).
 */
import { z } from "zod";
import type { CardPerson } from "../core/card.js";
import { CONSOLE_PLATFORM } from "../core/console-platform.js";
import { personText } from "../core/person-text.js";
import { isSharedThread, type ThreadTarget } from "../core/thread-target.js";
import type { PendingItem, PendingPerson } from "./pending-item.js";

/** A recorded person as a card names them. */
export function cardPerson(person: PendingPerson): CardPerson {
  return { platform: person.platform, id: person.userId, name: person.name };
}

const qualifiedId = z
  .string()
  .trim()
  .regex(/^[a-z][a-z0-9_-]*:[^\s:][^\s]*$/, 'approver ids are platform-qualified, e.g. "slack:U0123"');

export const approvalsConfigSchema = z.object({
  approvers: z.array(qualifiedId).readonly(),
  /**
   * Keyed "platform:channel", e.g. "slack:C0123". Loaded configs have had their keys checked as
   * real channel and chat ids already (config/platform-ids.ts); this only keeps the shape.
   */
  perChannel: z
    .record(
      z.string().regex(/^[a-z][a-z0-9_-]*:.+$/, 'per-channel keys are "platform:channel"'),
      z.array(qualifiedId),
    )
    .optional(),
  ttlMs: z.number().int().positive(),
  unchecked: z.array(z.string().min(1)).readonly().optional(),
});
export interface ApprovalsConfig {
  readonly approvers: readonly string[];
  readonly perChannel?: Readonly<Record<string, readonly string[]>>;
  readonly ttlMs: number;
  /**
   * Platforms no access rule checks that run beside checked ones ("console" when it runs beside
   * Slack / Telegram): whoever uses one decides only for their own sessions (steeringDecidersFor).
   */
  readonly unchecked?: readonly string[];
}

/** "slack" + "U0123" → "slack:U0123". */
export function qualifiedUserId(platform: string, userId: string): string {
  return `${platform}:${userId}`;
}

/**
 * Everyone allowed to decide an item raised in `target` on behalf of `requesterId`: the requester
 * first, then global approvers, then this channel's approvers, without duplicates.
 */
export function allowedApproversFor(
  config: Pick<ApprovalsConfig, "approvers" | "perChannel">,
  target: ThreadTarget,
  requesterId: string,
): readonly string[] {
  const all = [
    qualifiedUserId(target.platform, requesterId),
    ...config.approvers,
    ...channelApprovers(config, target),
  ];
  return Object.freeze([...new Set(all)]);
}

/**
 * Who may loosen a session in `target` that `starterId` started (platform user id): see the
 * module header. Platform-qualified ids. A session without a starter (stored before starters were
 * kept, its history naming none) is loosened by the configured approvers only — possibly nobody —
 * never by whoever asks first.
 */
export function loosenersFor(
  config: Pick<ApprovalsConfig, "approvers" | "perChannel">,
  target: ThreadTarget,
  starterId: string | undefined,
): readonly string[] {
  if (starterId === undefined) return configuredApprovers(config, target);
  const starter = [qualifiedUserId(target.platform, starterId)];
  if (!isSharedThread(target)) return Object.freeze(starter);
  const configured = configuredApprovers(config, target);
  return configured.length > 0 ? configured : Object.freeze(starter);
}

/**
 * Whether `userId` (a platform user id on `target`'s platform) is a configured approver for
 * `target` — global or of its channel — rather than only its requester or its session's starter:
 * what lets a person act on other members' things there (their channel memories).
 */
export function isConfiguredApprover(
  config: Pick<ApprovalsConfig, "approvers" | "perChannel">,
  target: ThreadTarget,
  userId: string,
): boolean {
  return configuredApprovers(config, target).includes(qualifiedUserId(target.platform, userId));
}

/** The approvers configured for `target` (global and its channel's), on its platform. */
function configuredApprovers(
  config: Pick<ApprovalsConfig, "approvers" | "perChannel">,
  target: ThreadTarget,
): readonly string[] {
  const configured = [...config.approvers, ...channelApprovers(config, target)].filter((id) =>
    id.startsWith(`${target.platform}:`),
  );
  return Object.freeze([...new Set(configured)]);
}

/**
 * The per-channel approvers of `target`'s channel: those listed under its id and, when the channel
 * records another id for the same chat (`extra.alsoKnownAs`: a Telegram supergroup continuing its
 * former group's session under the group's id), under that id too — an admin may key either.
 */
function channelApprovers(
  config: Pick<ApprovalsConfig, "perChannel">,
  target: Pick<ThreadTarget, "platform" | "channel" | "extra">,
): readonly string[] {
  const other = target.extra?.alsoKnownAs;
  const channels = [target.channel, ...(other === undefined || other === "" ? [] : [String(other)])];
  return [...new Set(channels)].flatMap(
    (channel) => config.perChannel?.[`${target.platform}:${channel}`] ?? [],
  );
}

/** What withLiveDeciders reads and narrows: a pending item, or a reviewer denial (its deciders only). */
type LiveDecided = Pick<PendingItem, "target" | "requester" | "allowedApprovers" | "mayLoosen" | "startedBy">;

/**
 * `item` with its deciders (`allowedApprovers`) and looseners (`mayLoosen`) as `config` has them
 * now, for a decision taken now (a pending item, or a reviewer denial's "Allow anyway", which
 * records no looseners: reviewer-denials.ts): an item keeps the lists it was raised with, and an
 * approver removed from the configuration since (a restart on a new one) must not go on deciding it
 * until it expires. A stored decider stays one while they are its requester, still a configured
 * approver for its conversation, or still a loosener of its session (loosenersFor now: its starter,
 * in a DM or in a shared thread no approver is configured for). The starter is the item's `startedBy`; an item
 * stored before it was kept counts its requester as the starter when they could loosen it. Only
 * ever narrows: nobody left off when it was raised (a steering change's requester) is added.
 */
export function withLiveDeciders<T extends LiveDecided>(
  item: T,
  config: Pick<ApprovalsConfig, "approvers" | "perChannel">,
): T {
  const { target, requester } = item;
  const requesterId = qualifiedUserId(requester.platform, requester.userId);
  const starter =
    item.startedBy?.userId ?? (item.mayLoosen?.includes(requesterId) ? requester.userId : undefined);
  const looseners = new Set(loosenersFor(config, target, starter));
  const configured = new Set(configuredApprovers(config, target));
  const decides = (id: string) => id === requesterId || configured.has(id) || looseners.has(id);
  return {
    ...item,
    allowedApprovers: item.allowedApprovers.filter(decides),
    ...(item.mayLoosen ? { mayLoosen: item.mayLoosen.filter((id) => looseners.has(id)) } : {}),
  };
}

/** Who may loosen a session in a shared thread, in words (refusals and cards). */
const LOOSENERS = "a configured approver (or, without one, whoever started the session)";

/**
 * Card actions that loosen the session: a standing grant, or approving a plan — a plan is proposed
 * only in read-only plan mode, so its approval (into interactive or auto mode) always lets more run
 * unasked, for the rest of the turn and for the session.
 */
function loosens(action: string): boolean {
  return (
    action.startsWith("always_") ||
    action === "readonly_session" ||
    action === "plan_interactive" ||
    action === "plan_auto"
  );
}

/**
 * Why the presser may not take `action` on `item` because it would loosen the session; undefined
 * when it does not loosen or they may. Items stored before `mayLoosen`: the requester only. Plain
 * text (channels show it as such), naming the requester with their user id, which no name can fake.
 */
export function loosenRefusal(
  item: Pick<PendingItem, "kind" | "mayLoosen" | "requester">,
  action: string,
  platform: string,
  userId: string,
): string | undefined {
  if (!loosens(action)) return undefined;
  if (mayDecide(loosenersOf(item), platform, userId)) return undefined;
  return item.kind === "plan" ? planLoosenersOnly(item.requester) : LOOSEN_REFUSAL;
}

/** The refusal for a person who may not loosen the session. */
export const LOOSEN_REFUSAL = `Standing permissions and auto mode are for the session's owner — in a shared thread, ${LOOSENERS}. You can still approve this once.`;

/** How a refusal of a call that steers every later session begins: why it is not the session's own. */
const STEERS_EVERY_SESSION = "This changes what steers every later session, in every conversation, so";

/** Why only a configured approver decides a call that steers every later session. */
const STEERING_APPROVERS_ONLY = `${STEERS_EVERY_SESSION} only a configured approver can decide it.`;

/**
 * The end of a refusal for a change only a configured approver may decide, when none is configured
 * for `platform`: nobody can, and what the operator sets (the console's one person is
 * "console:local", the deployment's owner; see steeringDecidersFor).
 */
export function noApproversConfigured(platform: string): string {
  const example = platform === CONSOLE_PLATFORM ? `${CONSOLE_PLATFORM}:local` : `${platform}:<user id>`;
  return `none is configured for ${platform}: nobody can approve it. The operator lists approvers in \`approvals.approvers\` (e.g. "${example}").`;
}

/** Why nobody may decide such a call on `platform`: no approver is configured there. */
function noSteeringApprovers(platform: string): string {
  return `${STEERS_EVERY_SESSION} a configured approver must decide it, and ${noApproversConfigured(platform)}`;
}

/**
 * Who may approve a change that steers every later session (a skill, AGENTS.md): the configured
 * approvers of the platform — the change reaches every conversation, not only this one, so the
 * looseners of this one (a DM's owner, a thread's starter) do not suffice, and without an approver
 * nobody may: else anyone who can write to the bot could approve their own change in their own DM
 * (as save_skill, skill-authority.ts). The console's person running alone owns the deployment and
 * decides through `looseners`; beside checked platforms (`unchecked`) they too need naming.
 */
export function steeringDecidersFor(
  config: Pick<ApprovalsConfig, "approvers" | "unchecked">,
  platform: string,
  looseners: readonly string[],
): readonly string[] {
  const approvers = config.approvers.filter((id) => id.startsWith(`${platform}:`));
  if (approvers.length > 0) return Object.freeze([...new Set(approvers)]);
  const ownsDeployment = platform === CONSOLE_PLATFORM && !config.unchecked?.includes(platform);
  return Object.freeze(ownsDeployment ? [...looseners] : []);
}

/**
 * Why only those who may loosen the session approve a plan; `requester` may still reject it, named
 * with their user id, which no name can fake, and their name made plain text by `literal`.
 */
function planLoosenersOnly(
  requester: PendingPerson,
  literal: (name: string) => string = (name) => name,
): string {
  const named = personText({ ...cardPerson(requester), name: literal(requester.name) });
  return `Approving this plan takes the session out of read-only plan mode, so only ${LOOSENERS} can approve it. ${named} can still reject it or reply with changes.`;
}

/**
 * Everyone who may decide `item`, as its allowed list is built: the base list and, for a plan,
 * those who may loosen the session too — approving one loosens it, and in a shared thread without
 * configured approvers whoever started the session may, though only its requester and the
 * approvers are on the base list. Which of its actions each may take is loosenRefusal's.
 */
export function decidersOf(
  item: Pick<PendingItem, "kind" | "allowedApprovers" | "mayLoosen" | "requester">,
): readonly string[] {
  if (item.kind !== "plan") return item.allowedApprovers;
  return [...new Set([...item.allowedApprovers, ...loosenersOf(item)])];
}

/** Who may decide an item, in words: what its open card says, and the refusal to anyone else. */
export interface WhoMayDecide {
  /**
   * The card's note while open when its requester may not approve it — a call that steers every
   * later session, a plan whose requester may not loosen the session; undefined otherwise.
   */
  readonly note: string | undefined;
  /** The refusal for someone who may not decide it at all: the note, or the requester or an approver. */
  readonly refusal: string;
}

/**
 * Who may decide `item`, in words: one source for its card's note and the refusal of a press by
 * someone not on its allowed list (built with decidersOf), so that the two never disagree. A name
 * is whatever its owner typed: `literal` makes it plain text in the note's format (the card's
 * markdown), and the refusal names the requester with their user id, which no name can fake.
 */
export function whoMayDecide(
  item: PendingItem,
  literal: (name: string) => string = (name) => name,
): WhoMayDecide {
  const note = requesterMayNotNote(item, literal);
  const requester = personText(cardPerson(item.requester));
  return { note, refusal: note ?? `Only ${requester} or a configured approver can decide this.` };
}

/** The note on who may decide `item` when its requester may not approve it; see WhoMayDecide. */
function requesterMayNotNote(item: PendingItem, literal: (name: string) => string): string | undefined {
  const { requester } = item;
  if (item.kind === "approval") {
    if (mayDecide(item.allowedApprovers, requester.platform, requester.userId)) return undefined;
    return item.allowedApprovers.length === 0
      ? noSteeringApprovers(requester.platform)
      : STEERING_APPROVERS_ONLY;
  }
  if (item.kind === "plan")
    return mayDecide(loosenersOf(item), requester.platform, requester.userId)
      ? undefined
      : planLoosenersOnly(requester, literal);
  return undefined;
}

/** Who may loosen the session of `item`; for items stored before `mayLoosen`, the requester. */
function loosenersOf(item: Pick<PendingItem, "mayLoosen" | "requester">): readonly string[] {
  return item.mayLoosen ?? [qualifiedUserId(item.requester.platform, item.requester.userId)];
}

/** Whether the presser (platform + platform user id) is on the item's allowed list. */
export function mayDecide(allowed: readonly string[], platform: string, userId: string): boolean {
  return allowed.includes(qualifiedUserId(platform, userId));
}
