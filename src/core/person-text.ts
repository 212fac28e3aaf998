/**
 * How replies and cards name a person in text. A display name is whatever its owner typed
 * ("Boss", "[Approve here](https://…)"), so text names a person by name and by their platform
 * user id, which a name cannot fake, and a name going into markdown is escaped so it stays text.
 */
import type { CardPerson } from "./card.js";
import { CONSOLE_PLATFORM } from "./console-platform.js";

/**
 * A person in plain text, where no platform formats them: the name and, except on the console
 * (one local person, no ids), the platform user id.
 */
export function personText(person: CardPerson): string {
  return person.platform === CONSOLE_PLATFORM ? person.name : `${person.name} (id ${person.id})`;
}

/**
 * Text shown as it is where markdown is read (a card's text block, a markdown reply): every ASCII
 * punctuation mark is backslash-escaped (CommonMark), so it never becomes a link, emphasis or a
 * mention.
 */
export function markdownLiteral(text: string): string {
  return text.replace(/[!-/:-@[-`{-~]/g, "\\$&");
}

/** A person as markdown text names them: personText with the name escaped (markdownLiteral). */
export function personInMarkdown(person: CardPerson): string {
  return personText({ ...person, name: markdownLiteral(person.name) });
}
