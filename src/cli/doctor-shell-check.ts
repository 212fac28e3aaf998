/**
 * The doctor's shell check: can run_command's sandbox run on this machine? A missing bwrap or a
 * kernel that refuses namespaces fails with the fix; `tools.shell.sandbox: off` warns, because
 * every command then runs with the service's own rights. Run as root, a working sandbox also
 * warns: the kernel exempts host uid 0 from RLIMIT_NPROC, also inside the sandbox's user
 * namespace with every capability dropped, so tools.shell.limits.processes does not hold. A
 * link on the way to a steering file (`.coworker` or AGENTS.md at the workspace root being one)
 * warns too: the sandbox then keeps the folder holding it read-only for commands
 * (tools/shell/steering-mounts.ts).
 */
import path from "node:path";
import type { CoworkerConfig } from "../config/schema.js";
import type { SandboxBackend } from "../tools/shell/sandbox-backend.js";
import { createShellSandbox } from "../tools/shell/shell-sandbox.js";
import { linkLockWarning } from "../tools/shell/steering-link-locks.js";
import type { DoctorCheck } from "./doctor.js";

/**
 * The shell sandbox check (the backend and the service's uid are injectable for tests; default:
 * from the config, and this process's uid).
 */
export function shellSandboxCheck(
  config: CoworkerConfig,
  backend?: SandboxBackend,
  uid: number | undefined = process.getuid?.(),
): DoctorCheck {
  return {
    name: "shell sandbox",
    async run() {
      const sandbox = backend ?? createShellSandbox(config.tools.shell, { dataDir: config.data_dir });
      const status = await sandbox.status();
      if (status.kind === "sandboxed") {
        const warnings: { summary: string; fix: string }[] = [];
        if (uid === 0)
          warnings.push({
            summary: "running as root, so the process limit (tools.shell.limits.processes) does not hold",
            fix: "run Coworker as an ordinary user, or cap its processes from outside (systemd TasksMax=, docker run --pids-limit)",
          });
        const locked = await linkLockWarning(path.resolve(config.workspace.root));
        if (locked !== undefined) warnings.push(locked);
        if (warnings.length === 0) return { status: "pass", summary: status.description };
        return {
          status: "warn",
          summary: [status.description, ...warnings.map((w) => w.summary)].join("; "),
          fix: warnings.map((w) => w.fix).join("; "),
        };
      }
      if (status.kind === "unsandboxed")
        return {
          status: "warn",
          summary: status.description,
          fix: "install bubblewrap and remove tools.shell.sandbox: off to run commands sandboxed",
        };
      return { status: "fail", summary: `run_command is disabled: ${status.reason}`, fix: status.fix };
    },
  };
}
