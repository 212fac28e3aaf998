/**
 * Probing bubblewrap: run it once with the sandbox's own options and a command that does nothing,
 * to learn whether this host lets it make its namespaces (and which setup it runs), and turn the
 * answer into the sandbox status people see (not installed, cannot make namespaces — each with
 * its fix — or sandboxed). Apart from bubblewrap-backend.ts, which builds the options it probes.
 */
import { spawn } from "node:child_process";
import type { SandboxStatus } from "./sandbox-backend.js";

/** How long one probe may run before it is killed. */
const PROBE_TIMEOUT_MS = 10_000;

/**
 * What one run of bwrap found: it works here (exited 0), it is not installed (not found to
 * start), or it is broken here, with the first line of what it said (or the error that kept it
 * from starting; empty when it said nothing, e.g. killed at the time limit).
 */
export type ProbeResult =
  | { readonly kind: "works" }
  | { readonly kind: "not-installed" }
  | { readonly kind: "broken"; readonly detail: string };

/** The probe's answer when bwrap is not found: in none of PATH's absolute entries, or gone when run. */
export const NOT_INSTALLED: ProbeResult = Object.freeze({ kind: "not-installed" });

const WORKS: ProbeResult = Object.freeze({ kind: "works" });

/** The first line of bwrap's stderr, else `fallback`: what a broken probe reports. */
function brokenWith(stderr: string, fallback: string): ProbeResult {
  return { kind: "broken", detail: (stderr.trim().split("\n")[0] ?? "").trim() || fallback };
}

/** Run bwrap (`file`) with `args` once, in a clean environment, within PROBE_TIMEOUT_MS. */
export function runProbe(file: string, args: readonly string[]): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, stdio: "pipe" });
    let stderr = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), PROBE_TIMEOUT_MS);
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.once("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(error.code === "ENOENT" ? NOT_INSTALLED : brokenWith(stderr, error.message));
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve(code === 0 ? WORKS : brokenWith(stderr, ""));
    });
  });
}

const OFF_HINT = "or set tools.shell.sandbox: off to run commands unsandboxed (not recommended)";

/** The sandbox status a probe's result means (`bwrap` as configured, for the message). */
export function probeStatus(result: ProbeResult, bwrap: string, network: boolean): SandboxStatus {
  switch (result.kind) {
    case "not-installed":
      return {
        kind: "unavailable",
        reason: `bubblewrap (${bwrap}) is not installed`,
        fix: `install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), ${OFF_HINT}`,
      };
    case "works":
      return {
        kind: "sandboxed",
        description: `bubblewrap sandbox, ${network ? "host network shared (tools.shell.network)" : "no network"}`,
      };
    case "broken":
      return {
        kind: "unavailable",
        reason: `bubblewrap cannot create its namespaces${result.detail ? ` (${result.detail})` : ""}`,
        fix:
          "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu " +
          "kernel.apparmor_restrict_unprivileged_userns=0), or in Docker run with --security-opt " +
          `seccomp=unconfined --security-opt apparmor=unconfined, ${OFF_HINT}`,
      };
  }
}
