/**
 * The full-stack goal line the channel benchmarks print: inbound → finished replies at ≥ 0.5 of
 * the bare echo bot's rate at every concurrency level, stated per level so a partial result is
 * visible rather than hidden behind one flag.
 */

/** One full-stack row: its concurrency level and its ratio to the echo floor. */
export interface StackRatio {
  readonly level: number;
  readonly ratio: number;
}

/** Whether every level reaches `goal`. */
export function stackMeetsGoal(rows: readonly StackRatio[], goal: number): boolean {
  return rows.every((row) => row.ratio >= goal);
}

/** "Full-stack goal: ratio ≥ 0.5 at every level — ❌ not met (1: 0.21, 50: 0.55 ✅, 200: 0.48)." */
export function stackGoalLine(label: string, rows: readonly StackRatio[], goal: number): string {
  const levels = rows.map((row) => `${row.level}: ${row.ratio}${row.ratio >= goal ? " ✅" : ""}`).join(", ");
  const met = stackMeetsGoal(rows, goal) ? "✅ met" : "❌ not met";
  return `Goal for ${label}: ratio ≥ ${goal} at every level — ${met} (${levels}).`;
}
