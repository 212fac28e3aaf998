/**
 * The bubblewrap (`bwrap`) sandbox for run_command, the default on Linux. Inside: the workspace
 * roots read-write at their real paths, except a masked folder (uploads/), empty and read-only
 * but for the folders bound back into it (the command's own conversation's), and the read-only
 * paths (the steering files: `.coworker/`, AGENTS.md) — with each folder holding a link on the way
 * to one, the workspace root too, read-only but for its files and folders, bound back
 * (steering-mounts.ts); /usr, /bin, /lib*, /sbin, /etc
 * read-only with every credential-like /etc entry covered; a private /tmp and HOME;
 * its own /proc, with the parts that change the host's kernel (/proc/sys, sysrq-trigger, irq,
 * bus, fs) read-only and the ones that show kernel memory or other users' keys covered (bwrap
 * makes /proc/sys read-only only where access(2) says it may write the folder — not for root, as
 * its mode is 0555 — and root in the sandbox could otherwise set kernel.core_pattern);
 * its own PID, IPC, UTS, cgroup and (unless `network`) network namespaces; nothing else of the
 * host — so the service's data folder, config file, .env and code are out of sight unless they
 * lie inside a bound folder, in which case they are covered too, and every folder between the
 * root and them is pinned (bound over itself: writable, but no command can rename or remove it
 * and so move them out from under their cover for the next command). bwrap is started with the
 * command's clean environment (its PID 1 shows that environment in /proc/1/environ), dies with
 * its parent, and its PID namespace ends every process the command started (setsid, nohup and
 * `&` included) when the command ends. Its options reach it NUL-separated on a pipe (`--args`),
 * not on its command line: its PID 1 is bwrap, and /proc/1/cmdline would show every one of them
 * to the command — the host paths of the data folder, the config file and the covered /etc files
 * among them. Memory a command can fill without a process owning it is
 * bounded: the only writable folders besides the workspace are /tmp, HOME and /dev/shm, each a
 * tmpfs of at most `scratchMb`; the sandbox's own root, /dev and the masked folder are read-only;
 * and where the kernel allows it, no further user namespace can be made inside (one would let a
 * command mount a tmpfs of its own, unbounded).
 */
import { lstat, readlink, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { hostProgram } from "../../core/host-program.js";
import { isWithin } from "../../core/real-paths.js";
import { NOT_INSTALLED, type ProbeResult, probeStatus, runProbe } from "./bubblewrap-probe.js";
import { credentialLikeEntries, type MaskedEntry } from "./etc-secrets.js";
import { foldersAbove, seen } from "./steering-mounts.js";
import {
  type LockedFolder,
  type MaskedFolder,
  PLAN_INPUT_FD,
  type ReadOnlyPaths,
  type SandboxBackend,
  type SandboxRequest,
  type SpawnPlan,
} from "./sandbox-backend.js";

/** Settings of the bubblewrap backend. */
export interface BubblewrapOptions {
  /** The bwrap executable (default "bwrap", looked up in PATH's absolute entries). */
  readonly bwrap?: string;
  /** Share the host network (tools.shell.network); default: loopback only. */
  readonly network?: boolean;
  /** Host paths never to show (data folder, config file, .env, the service's own folder). */
  readonly hidden?: readonly string[];
  /** Size of each private scratch folder (/tmp, HOME, /dev/shm), in MiB (default 1024). */
  readonly scratchMb?: number;
}

const DEFAULT_SCRATCH_MB = 1024;

/**
 * How the sandbox's user namespace is set up: "sealed" makes one and forbids nested ones (bwrap
 * 0.8+, and a kernel that lets bwrap make user namespaces); "plain" is bwrap's best effort, for
 * hosts where only that runs (bwrap as root in a container without user namespaces).
 */
type UserNamespace = "sealed" | "plain";

/** The private HOME inside the sandbox. */
export const SANDBOX_HOME = "/home/coworker";
const SYSTEM_DIRS = ["/usr", "/etc"] as const;
const SYSTEM_LINKS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"] as const;

async function kindOf(file: string): Promise<"dir" | "file" | undefined> {
  const info = await stat(file).catch(() => undefined);
  if (info === undefined) return undefined;
  return info.isDirectory() ? "dir" : "file";
}

/** Cover one entry: a folder by an empty read-only one, a file by /dev/null. */
function maskArgs(entry: MaskedEntry): string[] {
  return entry.directory
    ? ["--tmpfs", entry.path, "--remount-ro", entry.path]
    : ["--ro-bind", "/dev/null", entry.path];
}

/**
 * Parts of /proc that change the host's kernel, shown read-only (as container runtimes do); bwrap
 * binds them from the host's /proc, the same kernel tables (what is per namespace follows the
 * process reading it, not the mount).
 */
const PROC_READ_ONLY = ["/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"] as const;
/** Parts of /proc that show kernel memory, keys or timing of the host, covered where present. */
const PROC_HIDDEN = [
  "/proc/kcore",
  "/proc/keys",
  "/proc/timer_list",
  "/proc/sched_debug",
  "/proc/latency_stats",
  "/proc/acpi",
  "/proc/scsi",
] as const;

/** The host layout parts that do not change between commands, computed once. */
interface Layout {
  readonly systemArgs: readonly string[];
  /** Mounts over the sandbox's /proc; they go after `--proc`. */
  readonly procArgs: readonly string[];
  readonly hidden: readonly MaskedEntry[];
}

async function systemArgs(): Promise<string[]> {
  const args: string[] = [];
  for (const dir of SYSTEM_LINKS) {
    const info = await lstat(dir).catch(() => undefined);
    if (info === undefined) continue;
    if (info.isSymbolicLink()) args.push("--symlink", await readlink(dir), dir);
    else if (info.isDirectory()) args.push("--ro-bind", dir, dir);
  }
  for (const dir of SYSTEM_DIRS) args.push("--ro-bind", dir, dir);
  for (const entry of await credentialLikeEntries()) args.push(...maskArgs(entry));
  return args;
}

/**
 * The read-only binds and covers over the sandbox's /proc, for the entries this kernel has (a
 * mount needs its mount point, and none can be made in /proc).
 */
async function procArgs(): Promise<string[]> {
  const args: string[] = [];
  for (const file of PROC_READ_ONLY) {
    if ((await kindOf(file)) !== undefined) args.push("--ro-bind-try", file, file);
  }
  for (const file of PROC_HIDDEN) {
    const kind = await kindOf(file);
    if (kind !== undefined) args.push(...maskArgs({ path: file, directory: kind === "dir" }));
  }
  return args;
}

async function hiddenEntries(paths: readonly string[]): Promise<MaskedEntry[]> {
  const out: MaskedEntry[] = [];
  for (const candidate of paths) {
    const real = await realpath(candidate).catch(() => undefined);
    const kind = real === undefined ? undefined : await kindOf(real);
    if (real !== undefined && kind !== undefined) out.push({ path: real, directory: kind === "dir" });
  }
  return out;
}

/** The fixed bwrap options: namespaces, lifetime, system folders, private /tmp and HOME. */
function baseArgs(
  layout: Layout,
  network: boolean,
  userNamespace: UserNamespace,
  scratchMb: number,
): string[] {
  const scratch = ["--size", String(scratchMb * 1_048_576), "--tmpfs"];
  return [
    "--unshare-all",
    ...(userNamespace === "sealed" ? ["--unshare-user", "--disable-userns"] : []),
    ...(network ? ["--share-net"] : []),
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--hostname",
    "coworker-sandbox",
    ...layout.systemArgs,
    "--proc",
    "/proc",
    ...layout.procArgs,
    "--dev",
    "/dev",
    ...scratch,
    "/dev/shm",
    "--remount-ro",
    "/dev",
    ...scratch,
    "/tmp",
    ...scratch,
    SANDBOX_HOME,
  ];
}

/**
 * Cover a masked folder with an empty tmpfs, bind its kept folders back (bwrap makes their mount
 * points while the tmpfs is writable), then make the tmpfs read-only: not recursively, so the
 * kept folders stay writable, and nothing can be added beside them.
 */
function maskedArgs(masked: MaskedFolder | undefined): string[] {
  if (masked === undefined) return [];
  const keep = masked.keep.flatMap((folder) => ["--bind", folder, folder]);
  return ["--tmpfs", masked.path, ...keep, "--remount-ro", masked.path];
}

/**
 * Lock a folder: read-only, with each of its entries bound back over itself read-write, so nothing
 * can be added to, removed from or renamed in the folder itself, and everything below is writable.
 * `--bind-try` skips an entry removed since it was listed.
 */
function lockArgs(folder: LockedFolder): string[] {
  return [
    "--ro-bind",
    folder.path,
    folder.path,
    ...folder.entries.flatMap((entry) => ["--bind-try", entry, entry]),
  ];
}

/**
 * Pin and lock the folders of `readOnly` that `where` picks (each pinned one bound over itself: a
 * mount point cannot be moved or removed; a locked one is a mount point too), shallowest first, so
 * that none covers one made before it; then bind each of its read-only paths that `where` picks
 * over itself.
 */
function readOnlyArgs(readOnly: ReadOnlyPaths | undefined, where: (file: string) => boolean): string[] {
  if (readOnly === undefined) return [];
  const locked = (readOnly.locked ?? []).filter((folder) => where(folder.path));
  const lockedPaths = new Set(locked.map((folder) => folder.path));
  const folders = [
    ...readOnly.pinned
      .filter((folder) => where(folder) && !lockedPaths.has(folder))
      .map((folder) => ({ path: folder, args: ["--bind", folder, folder] })),
    ...locked.map((folder) => ({ path: folder.path, args: lockArgs(folder) })),
  ].sort((a, b) => a.path.split(path.sep).length - b.path.split(path.sep).length);
  return [
    ...folders.flatMap((folder) => folder.args),
    ...readOnly.paths.filter(where).flatMap((file) => ["--ro-bind", file, file]),
  ];
}

/** Closes the sandbox's own root folder once every mount point in it exists. */
const SEAL_ROOT = ["--remount-ro", "/"] as const;

/** The hidden paths that a bound folder would show (never one that contains a root itself). */
function shownHidden(hidden: readonly MaskedEntry[], roots: readonly string[]): MaskedEntry[] {
  const visible = [...SYSTEM_DIRS, ...roots];
  return hidden
    .filter((entry) => visible.some((dir) => isWithin(entry.path, dir)))
    .filter((entry) => !roots.some((root) => isWithin(root, entry.path)));
}

/** Cover the hidden paths that a bound folder would show (`shown`, from `shownHidden`). */
function hiddenArgs(shown: readonly MaskedEntry[]): string[] {
  return shown.flatMap(maskArgs);
}

/**
 * The request's read-only paths, with every folder between a root and a hidden path in it pinned
 * too (bound over itself: writable, but no command can rename or remove it). A hidden path is
 * covered where it was when the command started; without the pins, a command could move a
 * folder above it away, and the next command would find it uncovered at its new place. Left out:
 * folders the command does not see (in the masked folder outside its kept folders) and folders
 * inside a hidden path (covered anyway). `shown` is `shownHidden` of the hidden paths.
 */
function withHiddenPins(
  readOnly: ReadOnlyPaths | undefined,
  shown: readonly MaskedEntry[],
  roots: readonly string[],
  masked: MaskedFolder | undefined,
): ReadOnlyPaths | undefined {
  const pins = shown
    .flatMap((entry) => foldersAbove(entry.path, roots))
    .filter((folder) => seen(folder, roots, masked))
    .filter((folder) => !shown.some((entry) => isWithin(folder, entry.path)));
  if (pins.length === 0) return readOnly;
  const pinned = [...new Set([...(readOnly?.pinned ?? []), ...pins])].sort(
    (a, b) => a.split(path.sep).length - b.split(path.sep).length,
  );
  return { ...(readOnly ?? { paths: [] }), pinned };
}

/** What probing found: the namespace setup this host runs, bwrap's path, and the probe's result. */
interface Probed {
  readonly userNamespace: UserNamespace;
  readonly file: string;
  readonly result: ProbeResult;
}

/** Build the bubblewrap backend; nothing runs until status() or plan() is called. */
export function bubblewrapBackend(options: BubblewrapOptions = {}): SandboxBackend {
  const bwrap = options.bwrap ?? "bwrap";
  const network = options.network ?? false;
  const scratchMb = options.scratchMb ?? DEFAULT_SCRATCH_MB;
  let layout: Promise<Layout> | undefined;
  let probed: Promise<Probed> | undefined;
  const getLayout = () => {
    layout ??= Promise.all([systemArgs(), procArgs(), hiddenEntries(options.hidden ?? [])]).then(
      ([args, proc, hidden]) => ({ systemArgs: args, procArgs: proc, hidden }),
    );
    return layout;
  };
  /** The sealed namespace setup when this host runs it, else the plain one (see UserNamespace). */
  const probe = () => {
    // By absolute path: a plan starts it in the workspace (host-program.ts).
    probed ??= Promise.all([getLayout(), hostProgram(bwrap)]).then(async ([fixed, file]) => {
      if (file === undefined) return { userNamespace: "sealed", file: bwrap, result: NOT_INSTALLED };
      const tryWith = (userNamespace: UserNamespace) =>
        runProbe(file, [
          ...baseArgs(fixed, network, userNamespace, scratchMb),
          ...SEAL_ROOT,
          "--chdir",
          "/",
          "--",
          "true",
        ]);
      const sealed = await tryWith("sealed");
      if (sealed.kind !== "broken") return { userNamespace: "sealed", file, result: sealed };
      return { userNamespace: "plain", file, result: await tryWith("plain") };
    });
    return probed;
  };
  return Object.freeze({
    async status() {
      return probeStatus((await probe()).result, bwrap, network);
    },
    async plan(request: SandboxRequest): Promise<SpawnPlan> {
      const [fixed, { userNamespace, file }] = await Promise.all([getLayout(), probe()]);
      const binds = request.roots.flatMap((root) => ["--bind", root, root]);
      const { masked } = request;
      const shown = shownHidden(fixed.hidden, request.roots);
      const readOnly = withHiddenPins(request.readOnly, shown, request.roots, masked);
      const inMasked = (file: string) => masked !== undefined && isWithin(file, masked.path);
      // Read-only paths outside the masked folder go before it (a read-only folder holding it
      // would show it again), those in a folder bound back into it after it (that bind would
      // make them writable again); the pins above hidden paths go with the read-only paths'
      // pins, shallowest first and before any read-only path (a writable pin after one would
      // make it writable again); the hidden paths come last, so that none is shown again.
      const setup = [
        ...baseArgs(fixed, network, userNamespace, scratchMb),
        ...binds,
        ...readOnlyArgs(readOnly, (file) => !inMasked(file)),
        ...maskedArgs(masked),
        ...readOnlyArgs(readOnly, inMasked),
        ...hiddenArgs(shown),
        ...SEAL_ROOT,
        "--chdir",
        request.cwd,
      ];
      // Only the command is on bwrap's command line (its PID 1 shows it in /proc/1/cmdline).
      const args = ["--args", String(PLAN_INPUT_FD), "--", ...request.argv];
      const input = setup.map((option) => `${option}\0`).join("");
      // bwrap's own environment is the command's clean one: its PID 1 shows it in /proc/1/environ.
      const env = { ...request.env, HOME: SANDBOX_HOME, TMPDIR: "/tmp" };
      return { file, args, cwd: request.cwd, env, input };
    },
  });
}
