/**
 * One connection attempt of a platform channel that never outlives its attempt: the channel is
 * stopped when the attempt is abandoned (deadline, shutdown) or fails, so a library's own
 * reconnect loop does not keep running behind the supervisor's back.
 */

/** Start `channel`, stopping it when `signal` aborts or the start fails (nothing keeps retrying). */
export async function startOrStop(
  channel: { start(): Promise<void>; stop(): Promise<void> },
  signal: AbortSignal | undefined,
): Promise<void> {
  const stop = (): void => void channel.stop().catch(() => undefined);
  signal?.addEventListener("abort", stop, { once: true });
  try {
    await channel.start();
  } catch (error) {
    stop();
    throw error;
  } finally {
    signal?.removeEventListener("abort", stop);
  }
}
