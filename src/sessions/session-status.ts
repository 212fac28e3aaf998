/**
 * Status and grants text for the thread commands: what a person sees for `status` and `grants`.
 * An "Allow anyway" says for whom and until when; one that can no longer be used — expired, or
 * stored before those were recorded (grants.ts) — is left out, the others keeping their numbers.
 * The reply is markdown: a person is named with their user id (personText), which a display name
 * cannot fake, and every name goes in as plain text (markdownLiteral), never as a link or mention;
 * so do a grant's arguments and command, which the model wrote.
 */
import { type Grant, isBoundOnce } from "../engine/permissions/grants.js";
import { formatTime } from "../core/time-text.js";
import type { PlatformUser } from "../core/thread-target.js";
import { markdownLiteral, personInMarkdown } from "../core/person-text.js";
import { clip } from "../core/surrogate-pairs.js";
import type { SessionRecord } from "./session-record.js";

/** An "Allow anyway" no call can use at `now`: expired, or naming no one and no expiry. */
const unusable = (grant: Grant, now: Date): boolean =>
  grant.kind === "once" && (!isBoundOnce(grant) || Date.parse(grant.expiresAt) <= now.getTime());

/**
 * One line per grant that can be used at `now`, numbered by its place from 1 (the numbers
 * `grants revoke n` takes).
 */
export function describeGrants(grants: readonly Grant[], now: Date): string {
  const lines = grants.flatMap((grant, i) =>
    unusable(grant, now) ? [] : [`${i + 1}. ${describeGrant(grant)}`],
  );
  return lines.length === 0 ? "No standing grants in this session." : lines.join("\n");
}

/**
 * A grant in words, with who gave it when known: the person with their user id, or — for a grant
 * stored before givers were recorded as people — the name alone, said to be unverified.
 */
export function describeGrant(grant: Grant): string {
  const { by } = grant;
  if (by === undefined) return grantText(grant);
  const giver =
    typeof by === "string"
      ? `${markdownLiteral(by)}, id not recorded`
      : shownPerson(by.platform, { id: by.id, name: by.name });
  return `${grantText(grant)} (granted by ${giver})`;
}

function grantText(grant: Grant): string {
  switch (grant.kind) {
    case "tool":
      return `always allow tool ${grant.tool}`;
    case "command":
      return `always allow command ${commandShown(grant.command)}`;
    case "domain":
      return `always allow domain ${grant.domain}`;
    case "readonly_session":
      return "read-only shell commands allowed this session";
    case "once": {
      const args = clip(grant.args, 120);
      const bound = isBoundOnce(grant) ? ` for ${grant.requester}, until ${formatTime(grant.expiresAt)}` : "";
      return `allow once (over the reviewer)${bound}: ${grant.tool} ${markdownLiteral(args)}`;
    }
  }
}

/** A granted command as markdown shows it: as code when nothing in it can end the code span, else as plain text. */
function commandShown(command: string): string {
  return /[`\r\n]/.test(command) ? markdownLiteral(command) : `\`${command}\``;
}

/**
 * A person of the session's platform as a markdown reply names them: their name as plain text,
 * and user id (personText).
 */
export function shownPerson(platform: string, user: PlatformUser): string {
  return personInMarkdown({ platform, id: user.id, name: user.name });
}

/** The `status` reply. */
export function describeStatus(input: {
  readonly record: SessionRecord;
  readonly running: boolean;
  /** A turn is stored as in progress but not running here (waiting for a person after a restart). */
  readonly suspended: boolean;
  readonly queued: number;
  readonly extras: readonly string[];
  /** For which grants can still be used. */
  readonly now: Date;
}): string {
  const { record, now } = input;
  const { platform } = record.target;
  const usage = record.usage;
  const turn = input.running
    ? "a turn is running"
    : input.suspended
      ? "a turn is waiting to continue"
      : "idle";
  const lines = [
    `Session ${record.id} (${turn}${input.queued > 0 ? `, ${input.queued} queued` : ""})`,
    `Mode: ${record.mode}${record.modeSetBy ? ` (set by ${shownPerson(platform, record.modeSetBy)})` : ""}`,
    ...(record.startedBy ? [`Started by: ${shownPerson(platform, record.startedBy)}`] : []),
    `Model: ${record.provider}:${record.model}`,
    `Grants:${record.grants.every((g) => unusable(g, now)) ? " none" : `\n${describeGrants(record.grants, now)}`}`,
    ...input.extras,
    `Usage: ${record.turns} turns, ${usage.inputTokens} input + ${usage.outputTokens} output = ${usage.totalTokens} tokens`,
  ];
  return lines.join("\n");
}
