/**
 * Splitting formatted text at a platform's limit, on safe boundaries. A platform describes its
 * text as a row of units (characters, code points, entities, tags) that each count something
 * towards the limit (Slack counts every character, Telegram only the visible ones) and ranks
 * the cut before each unit: a paragraph beats a line end beats a space, some spots are merely
 * safe, and some never (inside an entity, a link, a code fence marker). The split is greedy:
 * each chunk is filled as far as its room allows, then cut at the best-ranked spot that still
 * fills a good part of the room; failing that at the best-ranked spot at all, then at the last
 * safe one, and only then hard. Re-opening what a cut leaves open (a code fence, HTML tags) is
 * the platform's part: the room it gives each chunk leaves space for that.
 */

/** The rank of a cut that is safe but no preferred break. */
export const ANYWHERE = Number.POSITIVE_INFINITY;

/** A text as the splitter sees it. */
export interface SplitUnits {
  /** How many units the text is made of. */
  readonly length: number;
  /** What unit `index` counts towards the limit. */
  size(index: number): number;
  /** The rank of a cut just before unit `index`: 0 is best, `ANYWHERE` a plain safe spot, undefined never. */
  rank(index: number): number | undefined;
}

/** How much a chunk may hold: `whole` when it takes the rest of the text, `cut` when it is cut. */
export interface SplitRoom {
  readonly whole: number;
  readonly cut: number;
}

/** A platform's limits for one split. */
export interface SplitRules {
  /** The room of the chunk that starts at unit `start` (what re-opening and closing leave). */
  room(start: number): SplitRoom;
  /** The least a ranked cut must fill of `room` to win over a better-ranked one further back. */
  minFill(room: number): number;
  /** Where the next chunk starts after a cut (e.g. past the whitespace at it); the cut by default. */
  resume?(cut: number): number;
}

/** One chunk: units `start` (inclusive) to `end` (exclusive). */
export interface SplitRange {
  readonly start: number;
  readonly end: number;
}

interface Candidate {
  readonly index: number;
  readonly length: number;
}

/** The end of the chunk that starts at `start`. */
function nextCut(units: SplitUnits, rules: SplitRules, start: number): number {
  const room = rules.room(start);
  const ranked: Candidate[] = [];
  let lastSafe = -1;
  let overflow = -1;
  let length = 0;
  for (let index = start; index < units.length; index++) {
    if (overflow === -1 && length > 0) {
      const rank = units.rank(index);
      if (rank !== undefined) {
        lastSafe = index;
        if (rank !== ANYWHERE) ranked[rank] = { index, length };
      }
    }
    length += units.size(index);
    if (overflow === -1 && length > room.cut) overflow = index;
    if (length > room.whole) return chooseCut(ranked, rules.minFill(room.cut), lastSafe, overflow, start);
  }
  return units.length;
}

function chooseCut(
  ranked: readonly (Candidate | undefined)[],
  minFill: number,
  lastSafe: number,
  overflow: number,
  start: number,
): number {
  for (const candidate of ranked) if (candidate && candidate.length >= minFill) return candidate.index;
  for (const candidate of ranked) if (candidate) return candidate.index;
  if (lastSafe > start) return lastSafe;
  // Nothing safe in the room (one enormous link or entity run): cut hard, but never make no progress.
  return Math.max(overflow, start + 1);
}

/** Split `units` into ordered chunks that each fit the room `rules` give them. */
export function splitRanges(units: SplitUnits, rules: SplitRules): SplitRange[] {
  const ranges: SplitRange[] = [];
  let start = 0;
  while (start < units.length) {
    const end = nextCut(units, rules, start);
    ranges.push({ start, end });
    start = rules.resume ? rules.resume(end) : end;
  }
  return ranges;
}
