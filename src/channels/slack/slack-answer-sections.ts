/**
 * A long answer's Slack sections (markdown → mrkdwn → pieces of at most a section's length),
 * worked out a stretch at a time. The page layout converted and split the whole answer at every
 * edit beat, on the one event loop every chat shares: 54 ms per beat at 500,000 characters, 214 at
 * 2,000,000 (bench/results/render.md). An answer only grows, so everything but its last
 * TAIL_CHARS is settled once, in stretches that end before a block (channels/shared/markdown-tail.ts),
 * and a beat converts only the rest. Only a stretch that cannot end before a block within a whole
 * stretch's reach ends between two lines, or characters. A code block open where a stretch would
 * end is left whole when it closes within reach, else closed there and reopened in the next
 * stretch, as the splitter does for a code block longer than a section. A table longer than a
 * stretch is cut between rows, and its header and delimiter rows are repeated before the rows that
 * follow, so they show as a table too. An answer shorter than a stretch and its tail is converted
 * whole, as before.
 */
import { cutBetweenCharacters } from "../../core/surrogate-pairs.js";
import { blockBoundary, fenceCloseWithin, grewFrom, openFence, openTable } from "../shared/markdown-tail.js";
import { type RenderBudget, renderBudget } from "../shared/markdown-walk.js";
import { markdownToMrkdwn } from "./slack-markdown.js";
import { splitMrkdwn } from "./slack-split.js";

/** The least text a settled stretch holds (about three sections). */
const STRETCH_CHARS = 8_000;
/** The answer's end that stays unsettled: its last block may still be growing. */
const TAIL_CHARS = 2_000;

/** An answer's markdown as non-blank mrkdwn sections of at most `limit` characters. */
export function mrkdwnSections(markdown: string, limit: number, budget?: RenderBudget): string[] {
  return splitMrkdwn(markdownToMrkdwn(markdown, budget), limit).filter((chunk) => chunk.trim().length > 0);
}

/** The settled start of one answer at one section limit. */
interface Settled {
  /** The answer's text up to where the settled stretches end. */
  readonly source: string;
  /** The fence marker open there, reopened at the start of what follows. */
  readonly fence: string | undefined;
  /** The header and delimiter rows of a table open there, repeated at the start of what follows. */
  readonly table: string | undefined;
  /** The settled stretches' sections, in order. */
  readonly sections: readonly string[];
}

const NOTHING_SETTLED: Settled = Object.freeze({
  source: "",
  fence: undefined,
  table: undefined,
  sections: Object.freeze([]),
});

/** What is open at a settled end (a fence marker, or a table's header rows) reopened before `text`. */
function reopened(open: string | undefined, text: string): string {
  return open === undefined ? text : `${open}\n${text}`;
}

/** The sections of one turn's answers, each answer's settled start kept between beats. */
export class AnswerSections {
  private readonly settled = new Map<string, Settled>();

  /** The sections of the view's text item `index`, whose markdown is now `markdown`. */
  of(index: number, markdown: string, limit: number): readonly string[] {
    const key = `${index}:${limit}`;
    const known = this.settled.get(key);
    // An answer only grows; should its text have been replaced, its settled start is worked out again.
    const start = known !== undefined && grewFrom(markdown, known.source) ? known : NOTHING_SETTLED;
    // One beat's stretches share one render budget (a whole long answer may settle in one beat).
    const budget = renderBudget();
    const settled = settle(start, markdown, limit, budget);
    this.settled.set(key, settled);
    const rest = markdown.slice(settled.source.length);
    const open = settled.fence ?? settled.table;
    return [...settled.sections, ...mrkdwnSections(reopened(open, rest), limit, budget)];
  }
}

/** `from` with every stretch of `markdown` that is now settled added to it. */
function settle(from: Settled, markdown: string, limit: number, budget: RenderBudget): Settled {
  let { source, fence, table } = from;
  let sections: string[] | undefined;
  while (markdown.length - source.length >= STRETCH_CHARS + TAIL_CHARS) {
    const min = source.length + STRETCH_CHARS;
    const max = Math.min(markdown.length - TAIL_CHARS, min + STRETCH_CHARS);
    // A reach of a whole stretch is cut where it must; a shorter one waits for a block to end
    // there (a paragraph cut between two lines shows its rest as a piece of its own, and a table's
    // rest repeats its header).
    const full = max >= min + STRETCH_CHARS;
    const boundary = blockBoundary(markdown, min, max, !full);
    if (boundary === undefined && !full) break;
    let end = boundary ?? cutBetweenCharacters(markdown, min);
    let stretch = reopened(fence ?? table, markdown.slice(source.length, end));
    const openAtEnd = openFence(stretch);
    // A code block open at the boundary is best left whole: the stretch ends after it.
    const closed = openAtEnd === undefined ? undefined : fenceCloseWithin(markdown, openAtEnd, end, max);
    if (openAtEnd !== undefined && closed === undefined && !full) break;
    if (closed !== undefined) {
      end = blockBoundary(markdown, closed, max) ?? closed;
      stretch = reopened(fence ?? table, markdown.slice(source.length, end));
    }
    fence = closed === undefined ? openAtEnd : openFence(stretch);
    table = fence === undefined ? openTable(stretch) : undefined;
    sections ??= [...from.sections];
    sections.push(...mrkdwnSections(fence === undefined ? stretch : `${stretch}\n${fence}`, limit, budget));
    source = markdown.slice(0, end);
  }
  return sections === undefined ? from : { source, fence, table, sections };
}
