/**
 * Status and grants text for the thread commands: what a person sees for `status` and `grants`.
 */
import type { Grant } from "../engine/permissions/grants.js";
import type { SessionRecord } from "./session-record.js";

/** One line per grant, numbered from 1 (the numbers `grants revoke n` takes). */
export function describeGrants(grants: readonly Grant[]): string {
  if (grants.length === 0) return "No standing grants in this session.";
  return grants.map((grant, i) => `${i + 1}. ${describeGrant(grant)}`).join("\n");
}

/** A grant in words, with who gave it when known. */
export function describeGrant(grant: Grant): string {
  return grant.by === undefined ? grantText(grant) : `${grantText(grant)} (granted by ${grant.by})`;
}

function grantText(grant: Grant): string {
  switch (grant.kind) {
    case "tool":
      return `always allow tool ${grant.tool}`;
    case "command":
      return `always allow command \`${grant.command}\``;
    case "domain":
      return `always allow domain ${grant.domain}`;
    case "readonly_session":
      return "read-only shell commands allowed this session";
    case "once":
      return `allow once (over the reviewer): ${grant.tool} ${grant.args.length > 120 ? `${grant.args.slice(0, 119)}…` : grant.args}`;
  }
}

/** The `status` reply. */
export function describeStatus(input: {
  readonly record: SessionRecord;
  readonly running: boolean;
  /** A turn is stored as in progress but not running here (waiting for a person after a restart). */
  readonly suspended: boolean;
  readonly queued: number;
  readonly extras: readonly string[];
}): string {
  const { record } = input;
  const usage = record.usage;
  const turn = input.running
    ? "a turn is running"
    : input.suspended
      ? "a turn is waiting to continue"
      : "idle";
  const lines = [
    `Session ${record.id} (${turn}${input.queued > 0 ? `, ${input.queued} queued` : ""})`,
    `Mode: ${record.mode}${record.modeSetBy ? ` (set by ${record.modeSetBy.name})` : ""}`,
    ...(record.startedBy ? [`Started by: ${record.startedBy.name}`] : []),
    `Model: ${record.provider}:${record.model}`,
    `Grants:${record.grants.length === 0 ? " none" : `\n${describeGrants(record.grants)}`}`,
    ...input.extras,
    `Usage: ${record.turns} turns, ${usage.inputTokens} input + ${usage.outputTokens} output = ${usage.totalTokens} tokens`,
  ];
  return lines.join("\n");
}
