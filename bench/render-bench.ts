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
 * second does. Writes bench/results/render.{json,md}.
 */
import { performance } from "node:perf_hooks";
import { FenceTracker, markdownTail } from "../src/channels/shared/markdown-tail.js";
import { EMPTY_TURN, foldTurn } from "../src/channels/shared/turn-view.js";
import { AnswerSections, mrkdwnSections } from "../src/channels/slack/slack-answer-sections.js";
import { type AnswerSectioner, layoutPages } from "../src/channels/slack/slack-document.js";
import { PAGE_BUDGET } from "../src/channels/slack/slack-limits.js";
import { markdownToTelegramHtml } from "../src/channels/telegram/telegram-html.js";
import { PREVIEW_SOURCE_CHARS } from "../src/channels/telegram/telegram-renderer.js";
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

/** Run the benchmark and write its results. */
export async function run(): Promise<Record<string, unknown>> {
  const longest = SIZES.at(-1)! + BEATS * BEAT_CHARS;
  const answer = markdownAnswer(longest);
  measure(answer, 50_000); // JIT warm-up
  measurePreview(answer, 50_000);
  const rows = SIZES.map((chars) => measure(answer, chars));
  const preview = SIZES.map((chars) => measurePreview(answer, chars));
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
  ].join("\n");
  await writeResults("render", { generatedAt, node: process.version, rows, preview }, markdown);
  return { rows, preview };
}
