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

/** How one run of bwrap ended: its exit code, or the error that kept it from starting, and its stderr. */
export interface ProbeResult {
  readonly code: number | null;
  readonly error?: NodeJS.ErrnoException;
  readonly stderr: string;
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
      resolve({ code: null, error, stderr });
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

/** The probe's answer when `bwrap` is in none of PATH's absolute entries: not installed. */
export function notFound(bwrap: string): ProbeResult {
  return {
    code: null,
    error: Object.assign(new Error(`${bwrap} is not in PATH`), { code: "ENOENT" }),
    stderr: "",
  };
}

const OFF_HINT = "or set tools.shell.sandbox: off to run commands unsandboxed (not recommended)";

/** The sandbox status a probe's result means (`bwrap` as configured, for the message). */
export function probeStatus(result: ProbeResult, bwrap: string, network: boolean): SandboxStatus {
  if (result.error?.code === "ENOENT")
    return {
      kind: "unavailable",
      reason: `bubblewrap (${bwrap}) is not installed`,
      fix: `install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), ${OFF_HINT}`,
    };
  if (result.code === 0)
    return {
      kind: "sandboxed",
      description: `bubblewrap sandbox, ${network ? "host network shared (tools.shell.network)" : "no network"}`,
    };
  const detail = (result.stderr.trim().split("\n")[0] ?? "").trim() || (result.error?.message ?? "");
  return {
    kind: "unavailable",
    reason: `bubblewrap cannot create its namespaces${detail ? ` (${detail})` : ""}`,
    fix:
      "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu " +
      "kernel.apparmor_restrict_unprivileged_userns=0), or in Docker run with --security-opt " +
      `seccomp=unconfined --security-opt apparmor=unconfined, ${OFF_HINT}`,
  };
}
