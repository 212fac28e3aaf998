/**
 * Live render benchmark: what one edit beat of a long streamed answer costs on the event loop in
 * Slack's page layout (the fallback when native streaming is refused, and where an answer goes
 * past the native stream's 10,000 characters). "whole" lays the answer out as each beat did
 * before slack-answer-sections.ts (converting and splitting all of it); "settled" is the
 * renderer's layout, which converts the answer's settled start once and then only its end. And
 * in Telegram's live preview, which shows the answer's tail: cutting the tail with the open code
 * fence found in the whole answer before the cut, as each beat did before the FenceTracker
 * ("whole"), and with the renderer's tracker, which has followed the stream ("tracked"), beside
 * converting the tail to HTML (the same at any size). The answer is markdown of every kind
 * (test/support/markdown-answer.ts); each beat adds 400 characters, as a model streaming for a
 * second does. Then whole renders of hostile text (markdown-walk.ts: shapes `marked` reads in
 * quadratic time, and code spans mixed with them) through each entry point, beside the ordinary answer. Writes
 * bench/results/render.{json,md}.
 */
import { performance } from "node:perf_hooks";
import { FenceTracker, markdownTail } from "../src/channels/shared/markdown-tail.js";
import { CONVERTED_CHARS_PER_RENDER, STRETCH_CHARS } from "../src/channels/shared/markdown-walk.js";
import { EMPTY_TURN, foldTurn } from "../src/channels/shared/turn-view.js";
import { AnswerSections, mrkdwnSections } from "../src/channels/slack/slack-answer-sections.js";
import { type AnswerSectioner, layoutPages } from "../src/channels/slack/slack-document.js";
import { PAGE_BUDGET } from "../src/channels/slack/slack-limits.js";
import { markdownToMrkdwn } from "../src/channels/slack/slack-markdown.js";
import { markdownToTelegramHtml } from "../src/channels/telegram/telegram-html.js";
import { PREVIEW_SOURCE_CHARS } from "../src/channels/telegram/telegram-renderer.js";
import { splitTelegramHtml } from "../src/channels/telegram/telegram-split.js";
import { agentEvent } from "../src/core/events.js";
import { markdownAnswer } from "../test/support/markdown-answer.js";
import { hostLine, percentile, round1, writeResults } from "./support/report.js";

const SIZES = [10_000, 100_000, 500_000, 2_000_000] as const;
/** Characters a beat adds (a model streams a few hundred a second; Slack pages edit every 1.25 s). */
const BEAT_CHARS = 400;
/** Beats timed per size, after the stream reached it. */
const BEATS = 9;

interface SizeFigures {
  readonly chars: number;
  readonly pages: number;
  readonly wholeBeatMs: number;
  readonly settledBeatMs: number;
}

interface PreviewFigures {
  readonly chars: number;
  readonly wholeCutUs: number;
  readonly trackedCutUs: number;
  readonly tailHtmlUs: number;
}

/** The layout before stretches were settled: every answer converted whole, at every beat. */
const WHOLE: AnswerSectioner = { of: (_index, markdown, limit) => mrkdwnSections(markdown, limit) };

const viewOf = (markdown: string) =>
  foldTurn(EMPTY_TURN, agentEvent({ type: "text-delta", delta: markdown }));

/** The median of `samples`, rounded to a tenth. */
const median = (samples: number[]) =>
  round1(
    percentile(
      [...samples].sort((a, b) => a - b),
      50,
    ),
  );

/** Median ms of the beats' layouts, whole and settled, once the answer has grown to `chars`. */
function measure(answer: string, chars: number): SizeFigures {
  const settled = new AnswerSections();
  // The stream up to this size, beat by beat as the renderer saw it (a coarser step: only the
  // settled start it leaves behind matters here).
  for (let end = 20_000; end < chars; end += 20_000)
    layoutPages(viewOf(answer.slice(0, end)), PAGE_BUDGET, settled);
  const whole: number[] = [];
  const incremental: number[] = [];
  let pages = 0;
  for (let beat = 0; beat < BEATS; beat += 1) {
    const view = viewOf(answer.slice(0, chars + beat * BEAT_CHARS));
    let started = performance.now();
    pages = layoutPages(view, PAGE_BUDGET, settled).length;
    incremental.push(performance.now() - started);
    started = performance.now();
    layoutPages(view, PAGE_BUDGET, WHOLE);
    whole.push(performance.now() - started);
  }
  return { chars, pages, wholeBeatMs: median(whole), settledBeatMs: median(incremental) };
}

/** Median µs of the Telegram preview's beats once the answer has grown to `chars` (see the header). */
function measurePreview(answer: string, chars: number): PreviewFigures {
  const tracked = new FenceTracker();
  for (let end = 20_000; end < chars; end += 20_000)
    markdownTail(answer.slice(0, end), PREVIEW_SOURCE_CHARS, tracked);
  const whole: number[] = [];
  const incremental: number[] = [];
  const html: number[] = [];
  for (let beat = 0; beat < BEATS; beat += 1) {
    const markdown = answer.slice(0, chars + beat * BEAT_CHARS);
    let started = performance.now();
    const tail = markdownTail(markdown, PREVIEW_SOURCE_CHARS, tracked);
    incremental.push(performance.now() - started);
    started = performance.now();
    markdownTail(markdown, PREVIEW_SOURCE_CHARS, new FenceTracker());
    whole.push(performance.now() - started);
    started = performance.now();
    markdownToTelegramHtml(tail.text);
    html.push(performance.now() - started);
  }
  const micros = (samples: number[]) => median(samples.map((ms) => ms * 1_000));
  return { chars, wholeCutUs: micros(whole), trackedCutUs: micros(incremental), tailHtmlUs: micros(html) };
}

/** Text sizes of the whole-render figures: a long answer, a crafted one, the longest reply kept. */
const HOSTILE_SIZES = [50_000, 200_000, 2_000_000] as const;

/** Text of one shape, `chars` long. */
const repeated = (unit: string) => (chars: number) =>
  unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);

/**
 * Shapes that cost `marked` the most (found by .probes-style searches): emphasis delimiters after
 * punctuation (its emphasis search), lazy quote continuation (its block lexer, quadratic), and a
 * lazy quote in blank-line-separated paragraphs just under a stretch each.
 */
const SHAPES: Readonly<Record<string, (chars: number) => string>> = {
  ordinary: markdownAnswer,
  "emphasis !*a": repeated("!*a"),
  "emphasis *_a": repeated("*_a"),
  "lazy quote >a\\na": repeated(">a\na\n"),
  "lazy quote stretches": repeated(`${">a\na\n".repeat(4_700)}\n`),
  // Code spans beside emphasis delimiters (inline-pieces.ts never cuts inside code): short spans,
  // one unmatched backtick before every delimiter, and spans longer than a piece between runs of
  // delimiters; in lines of ~1,000 characters, so each stretch is one paragraph.
  "code + emphasis `x` !*a": repeated(`${"`x` !*a".repeat(143)}\n`),
  "lone backtick + !*a": (chars) => `\`${repeated(`${"!*a".repeat(333)}\n`)(chars - 1)}`,
  "long code spans + !*a": repeated(`${"!*a".repeat(60)}\`${"b !*a ".repeat(500)}\`\n`),
};

interface HostileFigures {
  readonly shape: string;
  readonly chars: number;
  /** Telegram's final answer: converted whole, then split into messages. */
  readonly telegramFinalMs: number;
  /** Telegram's conversion alone (markdownToTelegramHtml), the part the render budget bounds. */
  readonly telegramHtmlMs: number;
  /** Slack's plain pages and messenger: converted whole. */
  readonly slackMrkdwnMs: number;
  /** Slack's page layout, the whole text arriving in one beat. */
  readonly slackSectionsMs: number;
  /** One Telegram preview beat (the tail). */
  readonly telegramPreviewMs: number;
  /** One Slack page-layout beat after the text settled (its unsettled tail), 400 characters on. */
  readonly slackBeatMs: number;
}

const timed = (work: () => unknown) => {
  const started = performance.now();
  work();
  return round1(performance.now() - started);
};

/** One render of `shape` at `chars` through every entry point. */
function measureHostile(shape: string, chars: number): HostileFigures {
  const make = SHAPES[shape]!;
  const text = make(chars);
  const longer = make(chars + BEAT_CHARS);
  const sections = new AnswerSections();
  const slackSectionsMs = timed(() => sections.of(0, text, PAGE_BUDGET.section));
  const fences = new FenceTracker();
  markdownTail(text, PREVIEW_SOURCE_CHARS, fences);
  return {
    shape,
    chars,
    telegramFinalMs: timed(() => splitTelegramHtml(markdownToTelegramHtml(text))),
    telegramHtmlMs: timed(() => markdownToTelegramHtml(text)),
    slackMrkdwnMs: timed(() => markdownToMrkdwn(text)),
    slackSectionsMs,
    telegramPreviewMs: timed(() =>
      markdownToTelegramHtml(markdownTail(longer, PREVIEW_SOURCE_CHARS, fences).text),
    ),
    slackBeatMs: timed(() => sections.of(0, longer, PAGE_BUDGET.section)),
  };
}

/** Run the benchmark and write its results. */
export async function run(): Promise<Record<string, unknown>> {
  const longest = SIZES.at(-1)! + BEATS * BEAT_CHARS;
  const answer = markdownAnswer(longest);
  measure(answer, 50_000); // JIT warm-up
  measurePreview(answer, 50_000);
  const rows = SIZES.map((chars) => measure(answer, chars));
  const preview = SIZES.map((chars) => measurePreview(answer, chars));
  measureHostile("emphasis !*a", 50_000); // JIT warm-up
  const hostile = Object.keys(SHAPES).flatMap((shape) =>
    HOSTILE_SIZES.map((chars) => measureHostile(shape, chars)),
  );
  const generatedAt = new Date().toISOString();
  const markdown = [
    "# Live render: Slack page layout per edit beat",
    "",
    hostLine(generatedAt),
    "",
    `Each beat adds ${BEAT_CHARS} characters to a streamed markdown answer; the median of ${BEATS} beats per size, in ms`,
    "of event-loop time. whole = the answer converted and split at every beat (before); settled = the renderer's",
    "layout, which converts the settled start once (slack-answer-sections.ts).",
    "",
    "| answer chars | pages | whole ms/beat | settled ms/beat |",
    "|---|---|---|---|",
    ...rows.map((row) => `| ${row.chars} | ${row.pages} | ${row.wholeBeatMs} | ${row.settledBeatMs} |`),
    "",
    "## Telegram live preview per beat",
    "",
    `The preview shows the answer's last ${PREVIEW_SOURCE_CHARS} characters; the median of ${BEATS} beats per size, in µs.`,
    "whole cut = the tail cut with the code fence open there found in the whole answer before the cut (before);",
    "tracked cut = with the renderer's FenceTracker, which has followed the stream (markdown-tail.ts);",
    "tail → HTML = converting the tail to Telegram HTML, the rest of the beat's answer.",
    "",
    "| answer chars | whole cut µs/beat | tracked cut µs/beat | tail → HTML µs/beat |",
    "|---|---|---|---|",
    ...preview.map((row) => `| ${row.chars} | ${row.wholeCutUs} | ${row.trackedCutUs} | ${row.tailHtmlUs} |`),
    "",
    "## Whole renders of hostile text, per entry point",
    "",
    `One render each, in ms of event-loop time. Each render converts at most ${CONVERTED_CHARS_PER_RENDER} characters in stretches of`,
    `${STRETCH_CHARS} (markdown-walk.ts), the rest shown as text. Telegram final = convert + split into messages;`,
    "Telegram HTML = the conversion alone; Slack mrkdwn = markdownToMrkdwn (plain pages, messenger);",
    "Slack sections = AnswerSections.of with the whole text in one beat; previews = one live beat 400 characters on.",
    "",
    "| shape | chars | Telegram final | Telegram HTML | Slack mrkdwn | Slack sections | Telegram preview | Slack beat |",
    "|---|---|---|---|---|---|---|---|",
    ...hostile.map(
      (row) =>
        `| ${row.shape} | ${row.chars} | ${row.telegramFinalMs} | ${row.telegramHtmlMs} | ${row.slackMrkdwnMs} | ${row.slackSectionsMs} | ${row.telegramPreviewMs} | ${row.slackBeatMs} |`,
    ),
    "",
  ].join("\n");
  await writeResults("render", { generatedAt, node: process.version, rows, preview, hostile }, markdown);
  return { rows, preview, hostile };
}
