/**
 * The doctor's checklist framework: named checks run one after another (each with a time limit),
 * printed as ✓ / ! / ✗ / – lines with a fix under every failure. The run passes only when no
 * check failed; warnings and skips do not fail it. Checks are injected, so tests use fakes.
 */
import { scrubSecrets } from "../logging/redact.js";

export type CheckStatus = "pass" | "warn" | "fail" | "skip";

export interface CheckResult {
  readonly status: CheckStatus;
  /** One line: what was found. */
  readonly summary: string;
  /** For failures (and warnings): what to do about it. */
  readonly fix?: string;
  /** Extra lines worth knowing even when the check passed. */
  readonly notes?: readonly string[];
}

export interface DoctorCheck {
  readonly name: string;
  /** `signal` aborts when the check's time is up. */
  run(signal: AbortSignal): Promise<CheckResult>;
}

export interface DoctorReport {
  readonly ok: boolean;
  readonly results: readonly { readonly name: string; readonly result: CheckResult }[];
}

export interface Writer {
  write(text: string): unknown;
}

const MARKS: Readonly<Record<CheckStatus, string>> = { pass: "✓", warn: "!", fail: "✗", skip: "–" };

/** Default time one check may take. */
export const CHECK_TIME_LIMIT_MS = 15_000;

async function runOne(check: DoctorCheck, timeLimitMs: number): Promise<CheckResult> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new Error(`no answer within ${timeLimitMs / 1000} s`)),
    timeLimitMs,
  );
  try {
    return await check.run(controller.signal);
  } catch (error) {
    const reason = controller.signal.aborted ? controller.signal.reason : error;
    return {
      status: "fail",
      summary: `check crashed: ${reason instanceof Error ? reason.message : String(reason)}`,
    };
  } finally {
    clearTimeout(timer);
  }
}

/** Format one result as checklist lines. */
export function formatResult(name: string, result: CheckResult): string {
  const lines = [`${MARKS[result.status]} ${name}: ${result.summary}`];
  for (const note of result.notes ?? []) lines.push(`    note: ${note}`);
  if (result.fix !== undefined && result.status !== "pass") lines.push(`    fix:  ${result.fix}`);
  return scrubSecrets(`${lines.join("\n")}\n`);
}

/** Run every check in order, printing each line as it completes. */
export async function runDoctor(
  checks: readonly DoctorCheck[],
  out: Writer,
  timeLimitMs = CHECK_TIME_LIMIT_MS,
): Promise<DoctorReport> {
  const results: { name: string; result: CheckResult }[] = [];
  for (const check of checks) {
    const result = await runOne(check, timeLimitMs);
    results.push({ name: check.name, result });
    out.write(formatResult(check.name, result));
  }
  const failed = results.filter(({ result }) => result.status === "fail").length;
  out.write(
    failed === 0 ? "\nAll checks passed.\n" : `\n${failed} check${failed === 1 ? "" : "s"} failed.\n`,
  );
  return { ok: failed === 0, results };
}
