/**
 * Per-command resource limits (config: tools.shell.limits): CPU time, largest file written,
 * number of processes, memory (RLIMIT_DATA) and address space (RLIMIT_AS), set with bash's
 * `ulimit` (hard and soft, so the command cannot raise them) in a tiny wrapper that then execs the
 * command's own bash. A fork bomb, a 50 GB file or a runaway allocation hits a limit instead of
 * the host. Memory is capped by RLIMIT_DATA (the heap and private writable mappings: what
 * malloc, Python, Node's heap and `tail`'s line buffer use), not by a tight RLIMIT_AS: runtimes
 * that reserve large virtual ranges up front (Node, Java, Go, WebAssembly) do not even start
 * under an address-space limit of a few GiB, while RLIMIT_DATA counts only memory they make
 * writable. The looser address-space limit stays as a backstop for what RLIMIT_DATA does not
 * count (shared anonymous mappings, thread and main stacks). The kernel exempts host uid 0 from
 * the process-count limit, also inside the sandbox's user namespace, so that one only holds when
 * the service runs as an ordinary user. The wrapper also closes every descriptor above stderr
 * before the exec: Node's spawn and bwrap pass on whatever the service holds without
 * close-on-exec, and a command must not write to (or read from) any of them.
 */

/** The limits one command runs under. */
export interface ResourceLimits {
  /** CPU seconds per process. */
  readonly cpuSeconds: number;
  /** Largest file a process may write, in MiB. */
  readonly fileSizeMb: number;
  /** Processes of the service's user, counted by the kernel (RLIMIT_NPROC). */
  readonly processes: number;
  /** Memory per process (RLIMIT_DATA: heap and private writable mappings), in MiB. */
  readonly memoryMb: number;
  /** Address space per process (RLIMIT_AS), in MiB: the backstop for shared mappings and stacks. */
  readonly addressSpaceMb: number;
}

/** Defaults: generous for builds and test runs, small enough to stop runaways. */
export const DEFAULT_RESOURCE_LIMITS: ResourceLimits = Object.freeze({
  cpuSeconds: 600,
  fileSizeMb: 1024,
  processes: 1024,
  memoryMb: 1024,
  addressSpaceMb: 8192,
});

/** The name the wrapper gives itself ($0), visible in `ps` inside the sandbox. */
const WRAPPER_NAME = "coworker-limits";

/**
 * Closes each descriptor above 2 that bash holds, listed from /proc/self/fd (the glob is bash's
 * own; where there is no /proc it stays unexpanded and closes nothing). `{n}>&-` closes the
 * descriptor numbered by $n; the one the glob listed the folder with is closed already, hence the
 * silenced error.
 */
const CLOSE_INHERITED_FDS = `for f in /proc/self/fd/*; do n=\${f##*/}; if [ "$n" -gt 2 ] 2>/dev/null; then { exec {n}>&-; } 2>/dev/null; fi; done`;

/**
 * The argv running `command` with bash under `limits`, with only stdin, stdout and stderr open:
 * `bash -c '<close fds>; ulimit …; exec bash -c "$1"'`. The command is passed as an argument,
 * never spliced into the wrapper's text.
 */
export function limitedBashArgv(command: string, limits: ResourceLimits): string[] {
  const set = [
    `-t ${Math.ceil(limits.cpuSeconds)}`,
    `-f ${Math.ceil(limits.fileSizeMb * 1024)}`,
    `-u ${Math.ceil(limits.processes)}`,
    `-d ${Math.ceil(limits.memoryMb * 1024)}`,
    `-v ${Math.ceil(limits.addressSpaceMb * 1024)}`,
  ].join(" ");
  const script = `${CLOSE_INHERITED_FDS}; ulimit ${set} || exit 126; exec bash -c "$1"`;
  return ["bash", "-c", script, WRAPPER_NAME, command];
}
