/**
 * Live render benchmark: what one edit beat of a long streamed answer costs on the event loop in
 * Slack's page layout (the fallback when native streaming is refused, and where an answer goes
 * past the native stream's 10,000 characters). "whole" lays the answer out as each beat did
 * before slack-answer-sections.ts (converting and splitting all of it); "settled" is the
 * renderer's layout, which converts the answer's settled start once and then only its end. The
 * answer is markdown of every kind (test/support/markdown-answer.ts); each beat adds
 * 400 characters, as a model streaming for a second does. Writes bench/results/render.{json,md}.
 */
import { performance } from "node:perf_hooks";
import { EMPTY_TURN, foldTurn } from "../src/channels/shared/turn-view.js";
import { AnswerSections, mrkdwnSections } from "../src/channels/slack/slack-answer-sections.js";
import { type AnswerSectioner, layoutPages } from "../src/channels/slack/slack-document.js";
import { PAGE_BUDGET } from "../src/channels/slack/slack-limits.js";
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

/** The layout before stretches were settled: every answer converted whole, at every beat. */
const WHOLE: AnswerSectioner = { of: (_index, markdown, limit) => mrkdwnSections(markdown, limit) };

const viewOf = (markdown: string) =>
  foldTurn(EMPTY_TURN, agentEvent({ type: "text-delta", delta: markdown }));

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
  const median = (samples: number[]) =>
    round1(
      percentile(
        [...samples].sort((a, b) => a - b),
        50,
      ),
    );
  return { chars, pages, wholeBeatMs: median(whole), settledBeatMs: median(incremental) };
}

/** Run the benchmark and write its results. */
export async function run(): Promise<Record<string, unknown>> {
  const longest = SIZES.at(-1)! + BEATS * BEAT_CHARS;
  const answer = markdownAnswer(longest);
  measure(answer, 50_000); // JIT warm-up
  const rows = SIZES.map((chars) => measure(answer, chars));
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
  ].join("\n");
  await writeResults("render", { generatedAt, node: process.version, rows }, markdown);
  return { rows };
}
