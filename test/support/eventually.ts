/**
 * Test support: wait for a condition that becomes true in the background (a timer, another
 * connection, a worker), polling it, and fail with what was awaited when it does not in time.
 */

/** Resolves once `condition` holds; rejects after `timeoutMs` naming `what`. */
export async function eventually(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 5_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
