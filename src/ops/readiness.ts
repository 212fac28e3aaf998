/**
 * Readiness: named checks (channel connected, store reachable, accepting work) that `/readyz`
 * evaluates together. Ready only when every registered check passes; a check that throws or
 * does not answer in time counts as failing, with the reason in its detail. Evaluations asked for
 * while one runs share it: `/readyz` needs no credentials, and each evaluation pings the store
 * (a Postgres one holds a pooled connection and takes a table lock for it), so a stranger sending
 * a thousand requests at once made a thousand pings, and the chats waited for the pool.
 */
import { settlesWithin } from "../core/settles-within.js";
import { scrubSecrets } from "../logging/redact.js";

export type CheckOutcome = boolean | { readonly ok: boolean; readonly detail?: string };
export type ReadinessCheck = () => CheckOutcome | Promise<CheckOutcome>;

export interface CheckReport {
  readonly name: string;
  readonly ok: boolean;
  readonly detail?: string;
}

export interface ReadinessReport {
  readonly ready: boolean;
  readonly checks: readonly CheckReport[];
}

/** How long one check may take before it is reported as failing. */
export const CHECK_TIMEOUT_MS = 3_000;

async function runCheck(name: string, check: ReadinessCheck, timeoutMs: number): Promise<CheckReport> {
  const run = (async (): Promise<CheckReport> => {
    try {
      const outcome = await check();
      if (typeof outcome === "boolean") return { name, ok: outcome };
      return outcome.detail === undefined
        ? { name, ok: outcome.ok }
        : { name, ok: outcome.ok, detail: scrubSecrets(outcome.detail) };
    } catch (error) {
      return {
        name,
        ok: false,
        detail: scrubSecrets(error instanceof Error ? error.message : String(error)),
      };
    }
  })();
  if (await settlesWithin(run, timeoutMs)) return run;
  return { name, ok: false, detail: `no answer within ${timeoutMs} ms` };
}

/** The set of readiness checks the app registers as its parts come up. */
export class Readiness {
  private readonly checks = new Map<string, ReadinessCheck>();
  /** The evaluation running now for each time limit, which later askers share. */
  private readonly running = new Map<number, Promise<ReadinessReport>>();

  /** Add (or replace) a named check; returns a function that removes it. */
  register(name: string, check: ReadinessCheck): () => void {
    this.checks.set(name, check);
    return () => {
      if (this.checks.get(name) === check) this.checks.delete(name);
    };
  }

  /** Run every check concurrently, or share the evaluation with this time limit already running. */
  evaluate(timeoutMs = CHECK_TIMEOUT_MS): Promise<ReadinessReport> {
    const running = this.running.get(timeoutMs);
    if (running) return running;
    const run = Promise.all([...this.checks].map(([name, check]) => runCheck(name, check, timeoutMs)))
      .then((checks) => ({ ready: checks.every((check) => check.ok), checks }))
      .finally(() => this.running.delete(timeoutMs));
    this.running.set(timeoutMs, run);
    return run;
  }
}
