/**
 * `coworker doctor`: run the checklist against the real (or injected) fetch and store, with the
 * loaded configuration's secrets registered with the redactor first, so no check's output shows one.
 */
import { registerConfigSecrets } from "../config/config-secrets.js";
import { loadConfig } from "../config/load-config.js";
import { createStore } from "../store/create-store.js";
import type { CliIo } from "./cli-io.js";
import { runDoctor } from "./doctor.js";
import { type DoctorDeps, doctorChecks } from "./doctor-checks.js";

const realDeps: DoctorDeps = {
  fetch: (input, init) => fetch(input, init),
  openStore: (config) =>
    createStore({ url: config.store_url, dataDir: config.data_dir, keyPrefix: config.store_redis_prefix }),
};

/** Run `coworker doctor`; 0 only when every check passed (warnings and skips allowed). */
export async function doctorCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const loaded = loadConfig({ env: io.env, cwd: io.cwd, argv });
  if (loaded.ok) registerConfigSecrets(loaded.config);
  const deps: DoctorDeps = { ...realDeps, ...io.doctor };
  io.stdout.write("Coworker doctor\n\n");
  const report = await runDoctor(doctorChecks(loaded, deps), io.stdout);
  return report.ok ? 0 : 1;
}
