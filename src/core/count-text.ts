/**
 * A count written for people, its thousands grouped with commas ("8,000"). Not
 * `toLocaleString`: its first call loads ICU's number formatting, 7.6 MB of RSS that the process
 * then keeps, and a module that wrote a limit into a tool's description that way paid it at
 * every start (the start's idle-RSS budget is 100 MB).
 */

/** `count` (a whole number) with its thousands grouped by commas: 8000 → "8,000", -1234567 → "-1,234,567". */
export function groupedCount(count: number): string {
  return String(count).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}
