/**
 * JsonText: a value handed to the store as its JSON text, written as it is. A caller that holds
 * the JSON of most of a value already (a history page: its messages' texts, measured as each
 * joined it) need not have the whole of it serialised again on every write.
 */

/** A value as its JSON text; the store writes the text where it would write the value's JSON. */
export class JsonText {
  constructor(readonly text: string) {}
}
