/**
 * One connection attempt of a platform channel that never outlives its attempt. The undo has one
 * owner each way: a channel whose start fails undoes what it began itself (Slack and Telegram stop
 * themselves, so a channel started without this — tests, the console — is left clean too), and
 * this stops the channel only when the attempt is abandoned (its signal aborts: deadline,
 * shutdown), so a library's own reconnect loop does not keep running behind the supervisor's back.
 * An abandoned attempt settles only once its stop has finished, so no stop still runs when the
 * caller goes on.
 */

interface Startable {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Start `channel`. When `signal` aborts first, the channel is stopped, and the returned promise
 * rejects with the signal's reason once it is; a start that still succeeds after that stop (the
 * stop came before there was anything to stop) is stopped when it does, before the rejection. A
 * failed start rejects as is: the channel undid it. Nothing starts when `signal` has aborted already.
 */
export async function startOrStop(channel: Startable, signal: AbortSignal | undefined): Promise<void> {
  signal?.throwIfAborted();
  const started = channel.start();
  if (signal === undefined) return started;
  const outcome = started.then(
    () => "connected" as const,
    () => "failed" as const,
  );
  let onAbort = (): void => undefined;
  const abandoned = new Promise<"abandoned">((resolve) => {
    onAbort = () => resolve("abandoned");
  });
  signal.addEventListener("abort", onAbort, { once: true });
  const first = await Promise.race([outcome, abandoned]);
  signal.removeEventListener("abort", onAbort);
  if (first === "connected") return;
  if (first === "failed") return started;
  // Abandoned: stopped at once (cutting the start short), and again only if it connects all the
  // same. A start that failed was undone by the channel.
  await stopQuietly(channel);
  if ((await outcome) === "connected") await stopQuietly(channel);
  throw signal.reason;
}

/** The attempt is abandoned either way: a stop that fails leaves the caller nothing to do (the channel logs it). */
function stopQuietly(channel: Startable): Promise<void> {
  return channel.stop().catch(() => undefined);
}
