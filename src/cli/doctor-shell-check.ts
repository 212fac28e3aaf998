/**
 * The doctor's shell check: can run_command's sandbox run on this machine? A missing bwrap or a
 * kernel that refuses namespaces fails with the fix; `tools.shell.sandbox: off` warns, because
 * every command then runs with the service's own rights. Run as root, a working sandbox also
 * warns: the kernel exempts host uid 0 from RLIMIT_NPROC, also inside the sandbox's user
 * namespace with every capability dropped, so tools.shell.limits.processes does not hold.
 */
import type { CoworkerConfig } from "../config/schema.js";
import type { SandboxBackend } from "../tools/shell/sandbox-backend.js";
import { createShellSandbox } from "../tools/shell/shell-sandbox.js";
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
      if (status.kind === "sandboxed" && uid === 0)
        return {
          status: "warn",
          summary: `${status.description}; running as root, so the process limit (tools.shell.limits.processes) does not hold`,
          fix: "run Coworker as an ordinary user, or cap its processes from outside (systemd TasksMax=, docker run --pids-limit)",
        };
      if (status.kind === "sandboxed") return { status: "pass", summary: status.description };
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
