/**
 * Per-command resource limits (config: tools.shell.limits): CPU time, largest file written,
 * number of processes and address space, set with bash's `ulimit` (hard and soft, so the command
 * cannot raise them) in a tiny wrapper that then execs the command's own bash. A fork bomb or a
 * 50 GB file hits a limit instead of the host. The kernel exempts root from the process-count
 * limit, so that one only holds when the service runs as an ordinary user.
 */

/** The limits one command runs under. */
export interface ResourceLimits {
  /** CPU seconds per process. */
  readonly cpuSeconds: number;
  /** Largest file a process may write, in MiB. */
  readonly fileSizeMb: number;
  /** Processes of the service's user, counted by the kernel (RLIMIT_NPROC). */
  readonly processes: number;
  /** Address space per process, in MiB. */
  readonly memoryMb: number;
}

/** Defaults: generous for builds and test runs, small enough to stop runaways. */
export const DEFAULT_RESOURCE_LIMITS: ResourceLimits = Object.freeze({
  cpuSeconds: 600,
  fileSizeMb: 1024,
  processes: 1024,
  memoryMb: 8192,
});

/** The name the wrapper gives itself ($0), visible in `ps` inside the sandbox. */
const WRAPPER_NAME = "coworker-limits";

/**
 * The argv running `command` with bash under `limits`: `bash -c 'ulimit …; exec bash -c "$1"'`.
 * The command is passed as an argument, never spliced into the wrapper's text.
 */
export function limitedBashArgv(command: string, limits: ResourceLimits): string[] {
  const set = [
    `-t ${Math.ceil(limits.cpuSeconds)}`,
    `-f ${Math.ceil(limits.fileSizeMb * 1024)}`,
    `-u ${Math.ceil(limits.processes)}`,
    `-v ${Math.ceil(limits.memoryMb * 1024)}`,
  ].join(" ");
  const script = `ulimit ${set} || exit 126; exec bash -c "$1"`;
  return ["bash", "-c", script, WRAPPER_NAME, command];
}
