/**
 * Stored rows as read, for callers that must handle a key whatever its row holds: the row's exact
 * text (RowText), which a compare-and-set or compare-and-delete takes in place of a value and
 * matches only while the row still holds that very text; and UnreadableRow, the one error for a
 * row the store holds but cannot read a value from (not JSON, or JSON holding no value), carrying
 * that text so the row can still be replaced or deleted atomically. Without them such a row could
 * be neither read nor written over safely, and JSON spelled otherwise than the store writes it
 * (spaced, `"expires":null`) could not be matched by the value read from it.
 */
import { StoredDataError } from "./versioned.js";

/**
 * A row's text exactly as stored, as a read found it (live), with its expiry (ms since the epoch)
 * when it has one. Handed to `replaceIf` / `deleteIf` as `expected`, it matches only a row holding
 * exactly this text, not yet expired by the caller's clock.
 */
export class RowText {
  constructor(
    readonly text: string,
    readonly expires: number | undefined,
  ) {}
}

/** Why a row holds nothing the store can read as a value. */
export type UnreadableReason = "is not JSON" | "holds no value";

/**
 * A row the store holds at `key` of `namespace` but cannot read a value from: its text is not JSON,
 * or is JSON that is not an entry holding a value (`null`, `{"v":1}`). It still counts as present
 * (a write-if-absent does not write over it); its `row` replaces or deletes it atomically. The
 * message names the key, never the text (which may be large, or another program's data).
 */
export class UnreadableRow extends StoredDataError {
  constructor(
    readonly namespace: string,
    readonly key: string,
    readonly row: RowText,
    readonly reason: UnreadableReason,
  ) {
    super(`stored entry ${key} in ${namespace} ${reason}: it was not written by Coworker, or it is corrupt`);
  }
}

/**
 * One key as read row by row: undefined when absent (or expired), else its value or the
 * UnreadableRow it holds, with `expected`, what to hand `replaceIf` / `deleteIf` to change or
 * delete exactly what was read — a RowText when the space reads rows itself, else the value.
 */
export type RowRead<T = unknown> =
  | { readonly value: T; readonly expected: unknown }
  | { readonly unreadable: UnreadableRow; readonly expected: RowText }
  | undefined;
