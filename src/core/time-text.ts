/**
 * Times as people read them in the agent's replies and in what the model is shown: to the
 * minute, always in UTC, so a line reads the same to everyone in a thread whatever their zone.
 */

/** "2026-11-29 18:48 UTC"; a text that is not a date comes back as it was. */
export function formatTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}
