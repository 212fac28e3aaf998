/**
 * The seam between run_command and whatever isolates it. A backend turns "run this argv in this
 * workspace with this environment" into the process to spawn (bubblewrap wraps it; the explicit
 * "off" backend runs it as is) and says, once, whether it can run here at all — so a missing
 * sandbox disables the shell instead of silently running commands unconfined.
 */

/** Whether commands can run, and how confined they are. */
export type SandboxStatus =
  | { readonly kind: "sandboxed"; readonly description: string }
  | { readonly kind: "unsandboxed"; readonly description: string }
  | { readonly kind: "unavailable"; readonly reason: string; readonly fix: string };

/**
 * A folder inside a root the command sees only in part: empty and read-only but for `keep`, the
 * real paths of folders directly in it, bound back read-write (the uploads of the command's own
 * conversation: conversation-uploads.ts).
 */
export interface MaskedFolder {
  /** Real path of the folder. */
  readonly path: string;
  readonly keep: readonly string[];
}

/**
 * Paths inside the roots a command may read but not change (the steering files:
 * steering-mounts.ts).
 */
export interface ReadOnlyPaths {
  /** Real paths, each shown read-only. */
  readonly paths: readonly string[];
  /**
   * Real folders above them, shallowest first, that stay writable but cannot be moved or removed,
   * so that no command can make a link to one of `paths` lead somewhere else.
   */
  readonly pinned: readonly string[];
  /**
   * Folders that hold a link on the way to one of `paths`, shallowest first, whose own entries no
   * command may add, remove or rename (a mount cannot cover a link, and a command could otherwise
   * replace the link with a file or folder of its own: steering-mounts.ts).
   */
  readonly locked?: readonly LockedFolder[];
}

/** A folder shown read-only, with `entries` (real paths of its files and folders) bound back writable. */
export interface LockedFolder {
  readonly path: string;
  readonly entries: readonly string[];
}

/** One command to start: the argv inside the sandbox and where it runs. */
export interface SandboxRequest {
  /** Program and arguments as they should run inside (argv[0] is looked up on PATH). */
  readonly argv: readonly string[];
  /** Working directory (a real path inside one of `roots`). */
  readonly cwd: string;
  /** The command's whole environment (already clean of the service's secrets). */
  readonly env: Readonly<Record<string, string>>;
  /** Real paths of the workspace roots: the only host folders the command may write. */
  readonly roots: readonly string[];
  /** A folder of the roots shown only in part; only a confining backend can honour it. */
  readonly masked?: MaskedFolder;
  /** Paths of the roots shown read-only; likewise honoured only by a confining backend. */
  readonly readOnly?: ReadOnlyPaths;
}

/** What to spawn on the host for one command. */
export interface SpawnPlan {
  readonly file: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /**
   * What the program reads on descriptor PLAN_INPUT_FD, a pipe the spawner writes it to and then
   * closes: bwrap's options (`--args`), which on its command line its PID 1 would show to the
   * command in /proc/1/cmdline. None when undefined (no descriptor is added).
   */
  readonly input?: string;
}

/** The descriptor a plan's `input` is passed on (the first after stdin, stdout and stderr). */
export const PLAN_INPUT_FD = 3;

/** An isolation backend for shell commands. */
export interface SandboxBackend {
  /** Whether (and how confined) commands can run; probed once, then remembered. */
  status(): Promise<SandboxStatus>;
  /** The host process for one command; call only when status() is not "unavailable". */
  plan(request: SandboxRequest): Promise<SpawnPlan>;
}

/** The explicit `tools.shell.sandbox: off` backend: commands run directly on the host. */
export function unsandboxedBackend(): SandboxBackend {
  const status: SandboxStatus = Object.freeze({
    kind: "unsandboxed",
    description: "unsandboxed (tools.shell.sandbox: off): commands see and reach everything this service can",
  });
  return Object.freeze({
    status: async () => status,
    plan: async (request: SandboxRequest): Promise<SpawnPlan> => ({
      file: request.argv[0] ?? "bash",
      args: request.argv.slice(1),
      cwd: request.cwd,
      env: request.env,
    }),
  });
}

/** One line for banners, logs and cards: "bubblewrap sandbox, no network" / "unsandboxed …" / "disabled: …". */
export function describeSandboxStatus(status: SandboxStatus): string {
  if (status.kind === "unavailable")
    return `disabled (shell unavailable: ${status.reason}; fix: ${status.fix})`;
  return status.description;
}
