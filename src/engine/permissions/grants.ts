/**
 * Session grants: the standing "always" answers a person gave during a session (always this
 * tool, always this exact command, always this domain, read-only shell commands for the session),
 * and the one-shot "Allow anyway" a person gave over a reviewer's denial (this exact tool and
 * canonical arguments, once, for a turn of the person whose call was denied, within
 * ONCE_GRANT_TTL_MS; consumed by the first call that matches). In a shared thread another member's
 * identical call, or one made long after, is not what the person allowed: it goes through the
 * reviewer again.
 *
 * A GrantSet is the live, mutable set the permission engine consults; listeners hear every change
 * so sessions can persist it. Grants are validated at the boundary (`grantSchema`).
 */
import { z } from "zod";
import type { CardPerson } from "../../core/card.js";

/**
 * Who gave a grant, when known; never part of what the grant allows. The person (platform, user id
 * and display name) — a name alone is whatever its owner typed ("Boss") — or, in a grant stored
 * before givers were recorded as people, their display name alone.
 */
const by = z
  .union([
    z.string().max(200),
    z.object({ platform: z.string().min(1), id: z.string().min(1), name: z.string().max(200) }),
  ])
  .optional();

/**
 * How long an "Allow anyway" stays usable once given: long enough to ask the agent to retry (its
 * card says "within the hour"), not for good.
 */
export const ONCE_GRANT_TTL_MS = 60 * 60 * 1000;

export const grantSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("tool"), tool: z.string().min(1), by }),
  z.object({ kind: z.literal("command"), command: z.string().min(1), by }),
  z.object({ kind: z.literal("domain"), domain: z.string().min(1), by }),
  z.object({ kind: z.literal("readonly_session"), by }),
  z.object({
    kind: z.literal("once"),
    tool: z.string().min(1),
    args: z.string(),
    // Optional only so grants stored before they were bound still parse; such a grant is never used.
    requester: z.string().min(1).optional(),
    expiresAt: z.iso.datetime().optional(),
    by,
  }),
]);

interface GrantedBy {
  /** See `by` above: the person, or a bare display name in a grant stored before people were. */
  readonly by?: CardPerson | string | undefined;
}

export type Grant = GrantedBy &
  (
    | { readonly kind: "tool"; readonly tool: string }
    | { readonly kind: "command"; readonly command: string }
    | { readonly kind: "domain"; readonly domain: string }
    | { readonly kind: "readonly_session" }
    | OnceGrant
  );

/**
 * A one-shot "Allow anyway". `args` is the canonical JSON of the arguments
 * (src/engine/call-identity.ts); `requester` the platform-qualified id ("slack:U0123") of the person
 * whose call was denied, `expiresAt` when it stops being usable (ISO). A grant stored before these
 * were recorded lacks them and is never used: whose call it allowed, and until when, is unknown.
 */
export interface OnceGrant {
  readonly kind: "once";
  readonly tool: string;
  readonly args: string;
  readonly requester?: string | undefined;
  readonly expiresAt?: string | undefined;
}

/** An "Allow anyway" that records whose call it allows and until when: the only kind ever used. */
export type BoundOnceGrant = OnceGrant & { readonly requester: string; readonly expiresAt: string };

/** Whether `grant` is an "Allow anyway" bound to a requester and an expiry (see OnceGrant). */
export function isBoundOnce(grant: Grant): grant is BoundOnceGrant {
  return grant.kind === "once" && grant.requester !== undefined && grant.expiresAt !== undefined;
}

/** The call an "Allow anyway" would allow: its tool, canonical arguments and the turn's requester. */
export type OnceCall = Pick<BoundOnceGrant, "tool" | "args" | "requester">;

export type GrantListener = (grants: readonly Grant[]) => void;

/** Normalise a host name for comparison: lower case, no trailing dot. */
export function normaliseDomain(domain: string): string {
  return domain.trim().toLowerCase().replace(/\.$/, "");
}

function normalise(grant: Grant): Grant {
  const giver = grant.by === undefined ? {} : { by: grant.by };
  switch (grant.kind) {
    case "tool":
      return Object.freeze({ kind: "tool", tool: grant.tool, ...giver });
    case "command":
      return Object.freeze({ kind: "command", command: grant.command.trim(), ...giver });
    case "domain":
      return Object.freeze({ kind: "domain", domain: normaliseDomain(grant.domain), ...giver });
    case "readonly_session":
      return Object.freeze({ kind: "readonly_session", ...giver });
    case "once":
      return Object.freeze({
        kind: "once",
        tool: grant.tool,
        args: grant.args,
        ...(grant.requester === undefined ? {} : { requester: grant.requester }),
        ...(grant.expiresAt === undefined ? {} : { expiresAt: grant.expiresAt }),
        ...giver,
      });
  }
}

function sameGrant(a: Grant, b: Grant): boolean {
  switch (a.kind) {
    case "tool":
      return b.kind === "tool" && a.tool === b.tool;
    case "command":
      return b.kind === "command" && a.command === b.command;
    case "domain":
      return b.kind === "domain" && a.domain === b.domain;
    case "readonly_session":
      return b.kind === "readonly_session";
    case "once":
      return (
        b.kind === "once" &&
        a.tool === b.tool &&
        a.args === b.args &&
        a.requester === b.requester &&
        a.expiresAt === b.expiresAt
      );
  }
}

/** The live grants of one session. */
export class GrantSet {
  private grants: readonly Grant[] = [];
  private readonly listeners = new Set<GrantListener>();

  /** Start from persisted grants (validated; throws a ZodError naming a bad entry). */
  constructor(initial: readonly Grant[] = []) {
    for (const grant of initial) this.insert(normalise(grantSchema.parse(grant)));
  }

  /** Add a grant; false when an identical one was already there. */
  add(grant: Grant): boolean {
    const added = this.insert(normalise(grantSchema.parse(grant)));
    if (added) this.notify();
    return added;
  }

  /** Remove the grant at `index`, or every grant matching `predicate`; returns how many went. */
  revoke(target: number | ((grant: Grant) => boolean)): number {
    const before = this.grants.length;
    this.grants = Object.freeze(
      typeof target === "number"
        ? this.grants.filter((_, i) => i !== target)
        : this.grants.filter((g) => !target(g)),
    );
    const removed = before - this.grants.length;
    if (removed > 0) this.notify();
    return removed;
  }

  /** The grants, in the order they were given. */
  list(): readonly Grant[] {
    return this.grants;
  }

  /** Whether the tool is always allowed. */
  hasTool(tool: string): boolean {
    return this.grants.some((g) => g.kind === "tool" && g.tool === tool);
  }

  /** Whether this exact command (whitespace-trimmed) is always allowed. */
  hasCommand(command: string): boolean {
    const wanted = command.trim();
    return this.grants.some((g) => g.kind === "command" && g.command === wanted);
  }

  /**
   * Whether requests to this host are always allowed: an exact match of the host, and of its port
   * when that is not the scheme's default ("example.com:8080": tools/web/grant-host.ts).
   */
  hasDomain(domain: string): boolean {
    const wanted = normaliseDomain(domain);
    return this.grants.some((g) => g.kind === "domain" && g.domain === wanted);
  }

  /** Whether read-only shell commands are allowed for the session. */
  hasReadonlySession(): boolean {
    return this.grants.some((g) => g.kind === "readonly_session");
  }

  /**
   * Use up the one-shot grant for this exact call by this requester; true when there was one
   * still usable at `now` (it is gone now). One-shot grants no longer usable are dropped with it.
   */
  consumeOnce(call: OnceCall, now: Date): boolean {
    const usable = (g: OnceGrant) => isBoundOnce(g) && Date.parse(g.expiresAt) > now.getTime();
    const matches = (g: OnceGrant) =>
      usable(g) && g.tool === call.tool && g.args === call.args && g.requester === call.requester;
    const found = this.grants.some((g) => g.kind === "once" && matches(g));
    this.revoke((g) => g.kind === "once" && (matches(g) || !usable(g)));
    return found;
  }

  /** Plain copies for persistence. */
  toJSON(): Grant[] {
    return this.grants.map((g) => ({ ...g }));
  }

  /** Hear every change; returns the unsubscribe function. */
  onChange(listener: GrantListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private insert(grant: Grant): boolean {
    if (this.grants.some((g) => sameGrant(g, grant))) return false;
    this.grants = Object.freeze([...this.grants, grant]);
    return true;
  }

  private notify(): void {
    for (const listener of this.listeners) listener(this.grants);
  }
}
