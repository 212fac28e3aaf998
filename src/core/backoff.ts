/**
 * Backoff: the capped doubling pause between retries (a channel's reconnects, an MCP server's
 * restarts, a locked SQLite write, a failed wake, a model request), written once so every retry
 * loop grows its pause the same way and none forgets the cap.
 */

/**
 * The pause before retry number `attempt` (0 for the first retry): `firstMs` doubled `attempt`
 * times, never more than `maxMs`. Pure; a huge `attempt` gives `maxMs`.
 */
export function backoffMs(attempt: number, firstMs: number, maxMs: number): number {
  return Math.min(firstMs * 2 ** attempt, maxMs);
}
