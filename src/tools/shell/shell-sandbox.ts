/**
 * Picks run_command's sandbox from the shell settings (config: tools.shell): bubblewrap unless
 * the configuration says `sandbox: off` in so many words. The paths the sandbox must never show
 * — the data folder, the config file, the service's .env and its own folder — are gathered here
 * so every caller (the engine's tool set, the banner, doctor) hides the same things.
 */
import path from "node:path";
import { SERVICE_DIR } from "../../core/service-dir.js";
import { bubblewrapBackend } from "./bubblewrap-backend.js";
import { type SandboxBackend, unsandboxedBackend } from "./sandbox-backend.js";

/** The sandbox part of tools.shell. */
export interface ShellSandboxSettings {
  readonly sandbox: "bubblewrap" | "off";
  readonly network: boolean;
  /** tools.shell.limits: the file-size limit also sizes each private scratch folder (/tmp, HOME). */
  readonly limits?: { readonly file_size_mb: number };
}

/** What the service keeps next to the workspace and must stay out of the command's sight. */
export interface ServicePaths {
  readonly dataDir: string;
  /** The config file read, when there is one. */
  readonly configFile?: string | undefined;
}

/** Every host path a sandboxed command must not see. */
export function hiddenServicePaths(service: ServicePaths): string[] {
  const cwd = process.cwd();
  const hidden = [path.resolve(service.dataDir), path.join(cwd, ".env"), SERVICE_DIR, cwd];
  if (service.configFile !== undefined) hidden.push(path.resolve(service.configFile));
  return [...new Set(hidden)];
}

/** The backend the settings ask for. */
export function createShellSandbox(settings: ShellSandboxSettings, service: ServicePaths): SandboxBackend {
  if (settings.sandbox === "off") return unsandboxedBackend();
  return bubblewrapBackend({
    network: settings.network,
    hidden: hiddenServicePaths(service),
    ...(settings.limits ? { scratchMb: settings.limits.file_size_mb } : {}),
  });
}
