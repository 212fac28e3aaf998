/**
 * PendingReplies: what people do to open items — press a card button or type an answer in the
 * thread. A press counts only from the card's own conversation (press-place.ts). A reply is
 * authorised (who may decide, who may loosen: the item's lists as the approvals configuration has
 * them now, withLiveDeciders), checked against the card's options and against the parked turn (its
 * call must still be waiting), then turned into a decision or an answer (pending-settler.ts). The result says whether the parked turn must be resumed.
 */
import type { ButtonPress, PressResult } from "../core/button-press.js";
import type { Attachment } from "../core/attachment.js";
import type { QuestionSpec } from "../core/events.js";
import type { PlatformUser } from "../core/thread-target.js";
import { alwaysCommand } from "../core/text-commands.js";
import { validActions } from "./approval-card.js";
import {
  type ApprovalsConfig,
  loosenRefusal,
  mayDecide,
  whoMayDecide,
  withLiveDeciders,
} from "./authorisation.js";
import type { PendingSettler } from "./pending-settler.js";
import { NOT_PRESSED_WHERE_ASKED, pressedElsewhere } from "./press-place.js";
import type { ParkedLookup, Settled, TextAnswer } from "./pending-hub-types.js";
import {
  deliveriesOf,
  type PendingItem,
  type PendingPerson,
  type PendingPlan,
  type PendingQuestion,
} from "./pending-item.js";
import type { OpenEntry } from "./pending-store.js";
import { firstUnanswered, parseQuestionAction } from "./question-card.js";

type CardPress = Extract<ButtonPress, { kind: "card" }>;

/** A typed thread message, as an answer candidate: its words and the files it came with. */
export interface TypedReply {
  readonly platform: string;
  readonly user: PlatformUser;
  readonly text: string;
  readonly files: readonly Attachment[];
}

/** Resolves presses and typed answers into decisions and answers. */
export class PendingReplies {
  constructor(
    private readonly settler: PendingSettler,
    /** The approvals configuration now: a press is authorised by it, not by the one the item was raised under. */
    private readonly config: Pick<ApprovalsConfig, "approvers" | "perChannel">,
  ) {}

  /** Resolve a card button press. Refusals change nothing. */
  async press(press: CardPress, parkedOf: ParkedLookup): Promise<Settled<PressResult>> {
    const refused = (result: PressResult): Settled<PressResult> => ({ result });
    const { settler } = this;
    const stored = await settler.read(press.pendingId);
    if (stored === "unreadable") return refused({ status: "invalid", message: UNREADABLE });
    if (!stored) return refused({ status: "unknown", message: "This request is no longer known." });
    if (pressedElsewhere(press, stored.target))
      return refused({ status: "not_allowed", message: NOT_PRESSED_WHERE_ASKED });
    const item = withLiveDeciders(stored, this.config);
    if (!mayDecide(item.allowedApprovers, press.platform, press.user.id))
      return refused({ status: "not_allowed", message: whoMayDecide(item).refusal });
    const closed = await settler.closedResult(item);
    if (closed) return resumed(closed, item.sessionId, parkedOf);
    if (!validActions(item).includes(press.action))
      return refused({ status: "invalid", message: `"${press.action}" is not an option on this card.` });
    const loosening = loosenRefusal(item, press.action, press.platform, press.user.id);
    if (loosening) return refused({ status: "not_allowed", message: loosening });
    if (!(await settler.stillWaiting(item, parkedOf)))
      return refused({
        status: "invalid",
        message: "This card is out of date: its call is no longer waiting.",
      });
    const by: PendingPerson = { platform: press.platform, userId: press.user.id, name: press.user.name };
    if (item.kind === "question") {
      const choice = parseQuestionAction(press.action);
      const question = choice && item.questions[choice.question];
      const option = choice && question?.options[choice.option];
      if (!question || option === undefined)
        return refused({ status: "invalid", message: "Unknown option." });
      return resumed(await settler.answer(item.id, question.id, option, by), item.sessionId, parkedOf);
    }
    const decision = { action: press.action, by, at: settler.stamp() };
    return resumed(await settler.decide(item.id, decision), item.sessionId, parkedOf);
  }

  /**
   * Whether a typed message is, word for word (case and spacing aside), an option of the open
   * question it would answer — the one answerText would give it to (replyPlace). A bare command
   * word ("new") is then that answer, not the command; one that is always a command (alwaysCommand)
   * never is, and nothing is read for it. SessionManager asks alwaysCommand too, before it reads the
   * session's record to come here; this check stays so the hub's own answer holds for any caller
   * (a question stored with a "stop" option, from before ask_user refused command words, never
   * takes the brake).
   */
  async offersOption(
    parkedOf: ParkedLookup,
    sessionId: string,
    reply: Omit<TypedReply, "files">,
  ): Promise<boolean> {
    if (alwaysCommand(reply.text)) return false;
    const open = await this.settler.store.openItems(sessionId);
    if (open.length === 0) return false;
    const place = await this.replyPlace(open, parkedOf, reply, []);
    if (!place || !("question" in place)) return false;
    const words = sameWords(reply.text);
    return place.question.options.some((option) => sameWords(option) === words);
  }

  /**
   * Where a typed reply goes: the first of the sender's open questions and plans (oldest first) that
   * takes it — open, its call still waiting — and has a place for it: a plan (the reply revises it)
   * or a question group's first unanswered question. An item that holds one of `keys` (the reply
   * was delivered before) ends the walk as a redelivery; `closed` may rule an item out first.
   */
  private async replyPlace(
    open: readonly OpenEntry[],
    parkedOf: ParkedLookup,
    reply: Pick<TypedReply, "platform" | "user">,
    keys: readonly string[],
    closed?: (item: PendingItem) => Promise<boolean>,
  ): Promise<ReplyPlace | undefined> {
    for await (const item of this.sendersOpenItems(open, reply)) {
      if (deliveriesOf(item).some((key) => keys.includes(key))) return { redelivered: item };
      if ((await closed?.(item)) || !(await this.takesReply(item, parkedOf))) continue;
      if (item.kind === "plan") return { plan: item };
      if (item.kind !== "question") continue;
      const index = firstUnanswered(item);
      const question = index === undefined ? undefined : item.questions[index];
      if (question) return { item, question };
    }
    return undefined;
  }

  /** The sender's open questions and plans among a session's open entries, as stored now, oldest first. */
  private async *sendersOpenItems(
    open: readonly OpenEntry[],
    reply: Pick<TypedReply, "platform" | "user">,
  ): AsyncGenerator<PendingItem> {
    const { settler } = this;
    for (const entry of open) {
      if (entry.kind !== "question" && entry.kind !== "plan") continue;
      const item = await settler.load(entry.id);
      if (item && item.requester.platform === reply.platform && item.requester.userId === reply.user.id)
        yield item;
    }
  }

  /** Whether a typed reply can go to `item` now: it is open (pending, unexpired) and its call still waits. */
  private async takesReply(item: PendingItem, parkedOf: ParkedLookup): Promise<boolean> {
    return this.settler.isOpenNow(item) && (await this.settler.stillWaiting(item, parkedOf));
  }

  /**
   * A thread message from the person who was asked answers their open question (or revises their
   * open plan); the result is undefined when it is not consumed that way. Exactly once: the
   * message's dedupe keys are stored with the answer (one write) and recorded as seen right after
   * it, before the item leaves the open index, so a redelivery after a crash is recognised from
   * the item (and the settling the crash interrupted is finished) or from the dedupe marks. A
   * session with nothing open is answered from the in-memory open index, without a store read.
   */
  answerText(
    parkedOf: ParkedLookup,
    sessionId: string,
    reply: TypedReply,
    keys: readonly string[],
  ): Promise<Settled<TextAnswer | undefined>> {
    return this.answerTries(parkedOf, sessionId, reply, keys, MAX_ANSWER_TRIES);
  }

  /** answerText, walking the open items at most `tries` more times. */
  private async answerTries(
    parkedOf: ParkedLookup,
    sessionId: string,
    reply: TypedReply,
    keys: readonly string[],
    tries: number,
  ): Promise<Settled<TextAnswer | undefined>> {
    // The usual case, nothing open in the session, is answered here: a small frame waits on the
    // read, and the walk over the items (answerOpen) is not started.
    const open = await this.settler.store.openItems(sessionId);
    if (open.length === 0 || tries === 0) return NOTHING_ANSWERED;
    return this.answerOpen(open, parkedOf, sessionId, reply, keys, tries);
  }

  /**
   * answerText over the session's open entries (at least one). A reply whose answer or decision
   * another one got to first (another message typed meanwhile, on this process or another) did
   * not answer: the walk is made again — the question's next one, or nothing, which leaves the
   * message to be handled as any other — unless that other was this same message, delivered
   * twice (its keys are the winner's): a redelivery.
   */
  private async answerOpen(
    open: readonly OpenEntry[],
    parkedOf: ParkedLookup,
    sessionId: string,
    reply: TypedReply,
    keys: readonly string[],
    tries: number,
  ): Promise<Settled<TextAnswer | undefined>> {
    const again = () => this.answerTries(parkedOf, sessionId, reply, keys, tries - 1);
    const { settler } = this;
    // An item this reply found past its expiry is expired here; its turn may need resuming.
    let expired = false;
    const place = await this.replyPlace(open, parkedOf, reply, keys, async (item) => {
      const closed = await settler.closedResult(item);
      if (closed?.resume) expired = true;
      return closed !== undefined;
    });
    if (!place) return resumed({ result: undefined, resume: expired }, sessionId, parkedOf);
    if ("redelivered" in place)
      return resumed(
        { result: "redelivered", ...(await settler.complete(place.redelivered)) },
        sessionId,
        parkedOf,
      );
    const by: PendingPerson = { platform: reply.platform, userId: reply.user.id, name: reply.user.name };
    if ("plan" in place) {
      const decision = {
        action: "plan_reject",
        by,
        at: settler.stamp(),
        note: reply.text,
        dedupeKeys: keys,
        ...(reply.files.length > 0 ? { files: reply.files } : {}),
      };
      const decided = await settler.decide(place.plan.id, decision, () => settler.recordDeliveries(keys));
      if (decided.result.status === "already_decided") return again();
      return resumed({ result: "answered", resume: decided.resume }, sessionId, parkedOf);
    }
    const typed = { keys, files: reply.files };
    const answered = await settler.answer(place.item.id, place.question.id, reply.text, by, typed);
    if (!answered.won) return again();
    return resumed({ result: "answered", resume: answered.resume }, sessionId, parkedOf);
  }
}

/** Where a typed reply goes (PendingReplies.replyPlace). */
type ReplyPlace =
  | { readonly redelivered: PendingItem }
  | { readonly plan: PendingPlan }
  | { readonly item: PendingQuestion; readonly question: QuestionSpec };

/** The refusal of a press on an item whose stored record cannot be read here. */
const UNREADABLE =
  "This request's stored record cannot be read here (made by a newer version of the service, or damaged), so nothing was decided. Ask the operator to look at the log.";

/**
 * How many times a typed reply walks the open items when other answers keep getting there first
 * (each of them answers a question, so a walk finds less open); then it answers nothing.
 */
const MAX_ANSWER_TRIES = 5;

/** A typed reply that answered nothing and resumes nothing. */
const NOTHING_ANSWERED: Settled<TextAnswer | undefined> = { result: undefined, resume: undefined };

/** Text as compared with an option: trimmed, spaces collapsed, lower case. */
function sameWords(text: string): string {
  return text.trim().replace(/\s+/g, " ").toLowerCase();
}

/** The settled result, with the session's parked turn when the settling must resume it. */
async function resumed<R>(
  settled: { readonly result: R; readonly resume: boolean },
  sessionId: string,
  parkedOf: ParkedLookup,
): Promise<Settled<R>> {
  return { result: settled.result, resume: settled.resume ? await parkedOf(sessionId) : undefined };
}
