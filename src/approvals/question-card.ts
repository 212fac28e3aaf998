/**
 * Question cards: one card for one or several questions the agent asks (ask_user). Each option
 * becomes a button "q<i>:o<j>"; answered questions show their answer; the card settles once every
 * question is answered (or the item expires / is stopped). A question asked in a turn woken by
 * channel content warns of it, quotes that content and names whom the turn was woken for, as an
 * approval card does; one asked in a turn a wake-up or a scheduled run started names them too.
 * The model's text — questions, options (on buttons and in the outcome line), answers — shows its
 * bidirectional control characters written out, as an approval card's does (bidiControlsShown), so
 * it reads in the order it was written.
 */
import type { Card, CardBlock, CardButton, CardOutcome } from "../core/card.js";
import { oneLine } from "../core/one-line.js";
import { clip } from "../core/surrogate-pairs.js";
import {
  bidiControlsShown,
  CHANNEL_CONTENT_QUESTION_WARNING,
  channelContentParts,
  decidedOutcome,
  requesterField,
  settledLine,
  shownBlock,
} from "./approval-card.js";
import { cardPerson } from "./authorisation.js";
import type { PendingPerson, PendingQuestion } from "./pending-item.js";

/**
 * How to answer by typing, under an open card: a reply to the card (on Telegram a group's bot sees
 * only messages addressed to it, and a reply to its card is).
 */
const REPLY_HINT = "Reply to this message with your answer.";

/** "q1:o2" → question 1, option 2; undefined for anything else. */
export function parseQuestionAction(action: string): { question: number; option: number } | undefined {
  const match = /^q(\d{1,3}):o(\d{1,3})$/.exec(action);
  if (!match) return undefined;
  return { question: Number(match[1]), option: Number(match[2]) };
}

/** The first question still without an answer (free text answers it). */
export function firstUnanswered(item: PendingQuestion): number | undefined {
  const index = item.questions.findIndex((q) => item.answers[q.id] === undefined);
  return index < 0 ? undefined : index;
}

/**
 * Who gave each answer of the group, by question id: as recorded, else (items stored before that)
 * whoever settled the group, else the requester.
 */
export function answerersOf(item: PendingQuestion): Readonly<Record<string, PendingPerson>> {
  const fallback = item.decision?.by ?? item.requester;
  return Object.fromEntries(item.questions.map((q) => [q.id, item.answeredBy?.[q.id] ?? fallback]));
}

/**
 * A settled question group's outcome line: "Answered by Ana: yes · later" when one person gave
 * every answer, else each answer with who gave it ("Answered: prod (Boss) · T-1 (Ana)"), every
 * person shown as the channel shows people (a Slack mention, a Telegram name with the id); undefined
 * while open.
 */
export function questionOutcome(item: PendingQuestion): CardOutcome | undefined {
  if (item.status !== "decided") return settledLine(item, "Answered");
  const answered = item.questions.filter((q) => item.answers[q.id] !== undefined);
  const answerers = answerersOf(item);
  const people = new Set(answered.map((q) => personKey(answerers[q.id])));
  if (people.size > 1) {
    // Each answer gets its share of the line, so every person who answered is named.
    const share = Math.floor(OUTCOME_ANSWER_CHARS / answered.length);
    return answered.reduceRight<CardOutcome | undefined>((next, q, i) => {
      const answer = clip(bidiControlsShown(oneLine(item.answers[q.id] ?? "")), share);
      const part = decidedOutcome(
        `${i === 0 ? "Answered: " : " · "}${answer} (`,
        cardPerson(answerers[q.id]!),
        ")",
      );
      return Object.freeze(next ? { ...part, next } : part);
    }, undefined);
  }
  const by = answered[0] ? answerers[answered[0].id] : undefined;
  return decidedOutcome(
    "Answered by ",
    cardPerson(by ?? item.decision?.by ?? item.requester),
    `: ${outcomeAnswers(answered.map((q) => item.answers[q.id] ?? ""))}`,
  );
}

function personKey(person: PendingPerson | undefined): string {
  return person ? `${person.platform}:${person.userId}` : "";
}

/**
 * The most characters of the answers an outcome line shows: a typed answer may be long, and the
 * settled card (its body quotes each answer) and Slack's notification text must still fit.
 */
export const OUTCOME_ANSWER_CHARS = 300;

/**
 * The answers as the outcome line shows them: joined on one line (a line break in a model-written
 * option would let it forge a line of its own, "Answered by Boss"), bidirectional control
 * characters written out, cut to OUTCOME_ANSWER_CHARS with "…".
 */
function outcomeAnswers(answers: readonly string[]): string {
  return clip(bidiControlsShown(oneLine(answers.join(" · "))), OUTCOME_ANSWER_CHARS);
}

/** The card for a pending question group, open or settled. */
export function questionCard(item: PendingQuestion): Card {
  const open = item.status === "pending";
  const grouped = item.questions.length > 1;
  const channel = channelContentParts(item.provenanceQuote, CHANNEL_CONTENT_QUESTION_WARNING);
  const blocks: CardBlock[] = [...channel.lead];
  const buttons: CardButton[] = [];
  item.questions.forEach((q, i) => {
    const answer = item.answers[q.id];
    const prefix = grouped ? `${i + 1}. ` : "";
    blocks.push({ kind: "text", text: `${prefix}${q.question}` });
    if (answer !== undefined) blocks.push({ kind: "quote", text: `Answer: ${answer}` });
    else if (open)
      q.options.forEach((option, j) => {
        buttons.push({
          action: `q${i}:o${j}`,
          label: bidiControlsShown(grouped ? `${i + 1}: ${option}` : option),
          style: "default",
        });
      });
  });
  if (channel.quote) blocks.push(channel.quote);
  // Whom it asks, when nothing else in the thread points to them: a turn woken without their message.
  if (channel.quote || item.woken)
    blocks.push({ kind: "fields", fields: [requesterField(item.requester, "Woken for")] });
  const outcome = questionOutcome(item);
  const title = grouped ? `${item.questions.length} questions` : "Question";
  return {
    pendingId: item.id,
    kind: "question",
    title: channel.quote ? `${title} (triggered by channel content)` : title,
    blocks: blocks.map(shownBlock),
    buttons,
    ...(open ? { footer: buttons.length > 0 ? `Or ${REPLY_HINT.toLowerCase()}` : REPLY_HINT } : {}),
    ...(outcome ? { outcome } : {}),
  };
}
