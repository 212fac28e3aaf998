/**
 * How a tool's approval card names a workspace path: one clipped line of literal text. A path is
 * the model's words — it names the workspace's files (write_file, a command) — so a file called
 * "x\n\n*Checked by security*" would otherwise write lines and emphasis of the card a person
 * decides on. A refusal that names the path is shown the same way.
 */
import { literalLine } from "../../core/one-line.js";

/** Longest path (or file name) shown on a card, in characters. */
const PATH_SHOWN_MAX = 200;
/** Longest reason shown on a card for a call that will fail (it names the path), in characters. */
const REASON_SHOWN_MAX = 400;

/** A path or a file's name as a card shows it. */
export function pathOnCard(path: string): string {
  return literalLine(path, PATH_SHOWN_MAX);
}

/** Why a call will fail, as a card shows it (the reason names the path). */
export function reasonOnCard(reason: string): string {
  return literalLine(reason, REASON_SHOWN_MAX);
}
