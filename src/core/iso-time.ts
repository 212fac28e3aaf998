/**
 * The ISO text of a Date, formatted once per second: toISOString costs about a microsecond, and
 * one reply stamps the time several times (its turn's start, its messages, its record's versions),
 * each a millisecond or so after the last. The text up to the seconds is kept for the second it
 * was made in, and each call adds its milliseconds to it.
 */

let lastSecond = Number.NaN;
/** toISOString's text for `lastSecond` without its milliseconds and "Z" ("2023-11-14T22:13:20."). */
let secondText = "";

/** `date.toISOString()` (a RangeError for an invalid date, as there). */
export function isoTime(date: Date): string {
  const time = date.getTime();
  const second = Math.floor(time / 1000);
  if (second !== lastSecond) {
    secondText = date.toISOString().slice(0, -4);
    lastSecond = second;
  }
  const ms = time - second * 1000;
  return `${secondText}${ms < 10 ? "00" : ms < 100 ? "0" : ""}${ms}Z`;
}
