/**
 * The doctor's shell check: can run_command's sandbox run on this machine? A missing bwrap or a
 * kernel that refuses namespaces fails with the fix; `tools.shell.sandbox: off` warns, because
 * every command then runs with the service's own rights.
 */
import type { CoworkerConfig } from "../config/schema.js";
import type { SandboxBackend } from "../tools/shell/sandbox-backend.js";
import { createShellSandbox } from "../tools/shell/shell-sandbox.js";
import type { DoctorCheck } from "./doctor.js";

/** The shell sandbox check (the backend is injectable for tests; default: from the config). */
export function shellSandboxCheck(config: CoworkerConfig, backend?: SandboxBackend): DoctorCheck {
  return {
    name: "shell sandbox",
    async run() {
      const sandbox = backend ?? createShellSandbox(config.tools.shell, { dataDir: config.data_dir });
      const status = await sandbox.status();
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
