/** "Did you mean …" suggestions by edit distance, for unknown config keys and enum values. */

/** Levenshtein distance between two strings (case-insensitive). */
export function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, i) => i);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[y.length] ?? 0;
}

/** The closest candidate within a typo-sized distance, or undefined when nothing is close. */
export function closestMatch(input: string, candidates: readonly string[]): string | undefined {
  const limit = Math.max(2, Math.floor(input.length / 3));
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(input, candidate);
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}
