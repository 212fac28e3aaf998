/**
 * A duration in the unit that reads best, written once for every place that shows one: a tool
 * call's status line, and the transcription limit an audio file ran past.
 */

/** "850 ms", "3.2 s", "2 min 5 s". */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1_000);
  return seconds > 0 ? `${minutes} min ${seconds} s` : `${minutes} min`;
}
