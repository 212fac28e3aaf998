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
  /** How much of `room` a ranked cut must fill to be taken; when none does, the best-ranked one is. */
  minFill(room: number): number;
  /** Where the next chunk starts after a cut (e.g. past the whitespace at it); the cut by default. */
  resume?(cut: number): number;
}

/** One chunk: units `start` (inclusive) to `end` (exclusive). */
export interface SplitRange {
  readonly start: number;
  readonly end: number;
}

/** The end of the chunk that starts at `start`. */
function nextCut(units: SplitUnits, rules: SplitRules, start: number): number {
  const room = rules.room(start);
  // Forward, sizes only: how much stands before each unit, up to where the chunk must end.
  const before: number[] = [];
  let overflow = -1;
  let length = 0;
  for (let index = start; index < units.length; index++) {
    if (overflow === -1) before.push(length);
    length += units.size(index);
    if (overflow === -1 && length > room.cut) overflow = index;
    if (length > room.whole) return chooseCut(units, start, overflow, before, rules.minFill(room.cut));
  }
  return units.length;
}

/**
 * Backward from the overflow: the latest cut of each rank is the first one met. The best rank
 * that fills `minFill` wins; once the scan drops below `minFill` with such a cut in hand, or
 * meets a filling cut of rank 0, nothing further back can change the answer.
 */
function chooseCut(
  units: SplitUnits,
  start: number,
  overflow: number,
  before: readonly number[],
  minFill: number,
): number {
  const ranked: number[] = [];
  let filling = Number.POSITIVE_INFINITY;
  let lastSafe = -1;
  for (let index = overflow; index > start; index--) {
    const length = before[index - start] as number;
    if (length <= 0) break;
    if (length < minFill && filling !== Number.POSITIVE_INFINITY) break;
    const rank = units.rank(index);
    if (rank === undefined) continue;
    if (lastSafe === -1) lastSafe = index;
    if (rank === ANYWHERE || ranked[rank] !== undefined) continue;
    ranked[rank] = index;
    if (length >= minFill) filling = Math.min(filling, rank);
    if (rank === 0 && length >= minFill) break;
  }
  if (filling !== Number.POSITIVE_INFINITY) return ranked[filling] as number;
  for (const index of ranked) if (index !== undefined) return index;
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
