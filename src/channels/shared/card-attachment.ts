/**
 * The whole text of a card's cut code, posted beside the card as a plain-text file. A command
 * padded past what a card holds is cut on the card; the file lets the person deciding read all
 * of it first. The card goes up first, with the notice of what is not shown; then the file
 * (waited for at most ATTACH_WAIT_MS), and only once it is posted does the card's notice point
 * to it. A failed or slow upload is logged and leaves the card as it was: still posted, still
 * pressable. The model writes the text, never what goes with it: the file's name is the tool's
 * registry name and the card's own id, always `.txt`, and the words posted with it are fixed.
 * Only postCard attaches, and the card's ref records that it did, so a card updated after a
 * press or a restart says so without posting the file again.
 */
import type { Logger } from "pino";
import type { Card, CardRef } from "../../core/card.js";
import { MAX_REPLY_CHARS } from "../../core/messages.js";
import { settlesWithin } from "../../core/settles-within.js";
import { cardView } from "./card-view.js";

/** The file posted beside a card whose code is cut. */
export interface CardAttachment {
  /** Made by the service from the card (see attachmentName), never from what the model wrote. */
  readonly name: string;
  /** The whole code the card cuts, as the card shows it (hidden characters as code points). */
  readonly text: string;
}

/** How one platform posts a card, tells whether its card cuts a code, uploads the file and edits the card. */
export interface CardPoster {
  /** Whether this platform's card cuts `code` (a code block's text, as the card view holds it). */
  cuts(code: string): boolean;
  /** Post the card as it reads without a file (the notice says to decide on what is shown). */
  post(card: Card): Promise<CardRef>;
  /** Post `file` beside the card at `ref`, as plain text, with ATTACHMENT_CAPTION. */
  attach(ref: CardRef, file: CardAttachment): Promise<void>;
  /** Show `card` at `ref` again; `ref` says whether the file is posted (attachedFile). */
  update(ref: CardRef, card: Card): Promise<void>;
}

/** The words posted with the file: the service's own, so nothing in them mentions or formats. */
export const ATTACHMENT_CAPTION = "The whole text of the card above, as plain text.";

/** Longest the card's post waits for the file before it gives up on pointing to it. */
const ATTACH_WAIT_MS = 15_000;

/**
 * The longest text posted as a card's file: a call's whole text as the card shows it — a command,
 * a write's diff or content (each at most a reply's length), with room for hidden characters
 * spelled out as code points. Anything longer is not a call's whole text.
 */
const MAX_ATTACHMENT_CHARS = 2 * MAX_REPLY_CHARS;

/** The mark a card's ref carries once its file is posted. */
const ATTACHED = "attached";

/**
 * The file's name: the tool's name (or the card's kind) and the start of the card's pending id,
 * in characters that mean nothing to any platform, then `.txt`.
 */
export function attachmentName(card: Card): string {
  const subject = (card.tool ?? card.kind).replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 40);
  return `${subject}-${card.pendingId.replace(/[^A-Za-z0-9]/g, "").slice(0, 8)}.txt`;
}

/** The name of the file posted beside the card at `ref`, when one was. */
export function attachedFile(card: Card, ref: CardRef): string | undefined {
  return ref[ATTACHED] === 1 ? attachmentName(card) : undefined;
}

/** The file for a card, when the platform's card cuts any of its code and the whole of it fits the cap. */
function attachmentFor(card: Card, cuts: (code: string) => boolean): CardAttachment | undefined {
  const cut = cardView(card).blocks.flatMap((block) =>
    block.kind === "code" && cuts(block.text) ? [block.text] : [],
  );
  const text = cut.join("\n\n");
  if (cut.length === 0 || text.length > MAX_ATTACHMENT_CHARS) return undefined;
  return { name: attachmentName(card), text };
}

/**
 * Post `card`; when its code is cut, post the whole of it beside the card and point the card's
 * notice to it. Resolves with the card's ref (marked when the file is posted); only the card's
 * own post can fail it.
 */
export async function postCardWithAttachment(
  card: Card,
  poster: CardPoster,
  logger: Logger,
): Promise<CardRef> {
  const ref = await poster.post(card);
  const file = attachmentFor(card, poster.cuts);
  if (file === undefined) return ref;
  try {
    if (!(await settlesWithin(poster.attach(ref, file), ATTACH_WAIT_MS)))
      throw new Error(`no answer within ${ATTACH_WAIT_MS} ms`);
  } catch (error) {
    logger.warn(
      { err: error, pendingId: card.pendingId, file: file.name },
      "posting the whole text of a cut card failed; the card says to decide on what it shows",
    );
    return ref;
  }
  const attached: CardRef = { ...ref, [ATTACHED]: 1 };
  try {
    await poster.update(attached, card);
  } catch (error) {
    logger.warn(
      { err: error, pendingId: card.pendingId, file: file.name },
      "pointing a cut card to its file failed; its next update will",
    );
  }
  return attached;
}
