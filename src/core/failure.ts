/**
 * Classified failures of the outside services Coworker depends on (Slack, Telegram, the model
 * endpoint, the store, the ops port). Each says which of four things went wrong — unreachable,
 * rejected, rate-limited, misconfigured — in its own words with its own fix, so an operator is
 * never told "the token was rejected" when the network is down. Retrying helps only the first
 * and third kind; start-up retries those and waits for a fix on the others.
 */

export type FailureKind = "unreachable" | "rejected" | "rate-limited" | "misconfigured";

/** A failure with its kind, a one-line reason and what to do about it. */
export class ServiceFailure extends Error {
  constructor(
    /** "Slack", "Telegram", "the model endpoint", "the store", "the ops server". */
    readonly service: string,
    readonly kind: FailureKind,
    /** What happened, one line, no secrets. */
    readonly reason: string,
    /** What to do about it. */
    readonly fix: string,
    options?: { readonly cause?: unknown },
  ) {
    super(`${service} ${KIND_WORDS[kind]}: ${reason}`, options);
    this.name = "ServiceFailure";
  }

  /** Whether trying again later can succeed without anyone changing anything. */
  get retryable(): boolean {
    return this.kind === "unreachable" || this.kind === "rate-limited";
  }

  /** "Slack is unreachable: … — fix: …" */
  line(): string {
    return `${this.message} — fix: ${this.fix}`;
  }
}

/**
 * A chat platform that cannot be reached from this machine: the network, a proxy or the
 * configured API address, never the credentials. `host` and `setting` name where to look.
 */
export function platformUnreachable(
  service: string,
  reason: string,
  where: { readonly host: string; readonly setting: string },
  cause: { readonly cause?: unknown },
): ServiceFailure {
  const fix = `check this machine's network access to ${where.host} (proxy, firewall, DNS) or ${where.setting}; Coworker retries`;
  return new ServiceFailure(service, "unreachable", reason, fix, cause);
}

const KIND_WORDS: Readonly<Record<FailureKind, string>> = {
  unreachable: "is unreachable",
  rejected: "rejected the credentials",
  "rate-limited": "is rate-limiting us",
  misconfigured: "is misconfigured",
};

/**
 * The errno-style code of a network failure (`ECONNREFUSED`, `ENOTFOUND`, …) anywhere in the
 * chain of wrapped errors: `cause`, grammY's `error`, the Slack SDK's `original`.
 */
export function networkCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current instanceof Error; depth++) {
    const wrapped = current as Error & {
      code?: unknown;
      cause?: unknown;
      error?: unknown;
      original?: unknown;
    };
    if (typeof wrapped.code === "string" && NETWORK_CODES.has(wrapped.code)) return wrapped.code;
    current = wrapped.cause ?? wrapped.error ?? wrapped.original;
  }
  return undefined;
}

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_SOCKET",
  "UND_ERR_HEADERS_TIMEOUT",
]);

/** The message of anything thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
