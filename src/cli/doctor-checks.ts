/**
 * The doctor's checks besides the chat platforms: configuration, model endpoint (model-check.ts),
 * store (write + read + delete a key); the workspace, Telegram access, skills and shell checks live
 * in their own files. `doctorChecks` assembles the full checklist with injectable fetch and store opener.
 */
import { randomUUID } from "node:crypto";
import { stat } from "node:fs/promises";
import type { LoadConfigResult } from "../config/load-config.js";
import type { CoworkerConfig } from "../config/schema.js";
import type { Store } from "../store/store.js";
import type { DoctorCheck } from "./doctor.js";
import { platformChecks } from "./doctor-platform-checks.js";
import { skillsCheck } from "./doctor-skills-check.js";
import { shellSandboxCheck } from "./doctor-shell-check.js";
import { telegramAccessCheck } from "./doctor-telegram-access-check.js";
import { workspaceCheck } from "./doctor-workspace-check.js";
import type { FetchLike } from "./http-probe.js";
import { modelCheck } from "./model-check.js";

export type StoreOpener = (config: CoworkerConfig) => Promise<Store>;

export interface DoctorDeps {
  readonly fetch: FetchLike;
  readonly openStore: StoreOpener;
}

/**
 * The config check: valid, or every problem listed. A valid one whose files (the config file,
 * `.env`) other users on the host may read is a warning: they hold the bot tokens and API keys.
 */
export function configCheck(loaded: LoadConfigResult): DoctorCheck {
  return {
    name: "configuration",
    async run() {
      const from = loaded.source ?? "defaults + environment (no config file)";
      if (loaded.ok) {
        const open = await readableByOthers(loaded.files);
        if (open.length === 0) return { status: "pass", summary: `valid (${from})` };
        return {
          status: "warn",
          summary: `valid (${from}), but other users of this host may read ${open.join(", ")}`,
          fix: `chmod 600 ${open.join(" ")} (they hold the bot tokens and API keys)`,
        };
      }
      return {
        status: "fail",
        summary: `${loaded.problems.length} problem(s) in ${from}`,
        notes: loaded.problems,
        fix: "correct the keys above (see config/coworker.example.yaml for every key)",
      };
    },
  };
}

/** Those of `files` whose mode lets the group or others read them. */
async function readableByOthers(files: readonly string[]): Promise<string[]> {
  const open: string[] = [];
  for (const file of files) {
    const mode = await stat(file).then(
      (s) => s.mode,
      () => 0,
    );
    if ((mode & 0o044) !== 0) open.push(file);
  }
  return open;
}

/** The store check: open, write, read back and delete a key. */
export function storeCheck(config: CoworkerConfig, openStore: StoreOpener): DoctorCheck {
  return {
    name: "store",
    async run() {
      let store: Store;
      try {
        store = await openStore(config);
      } catch (error) {
        return {
          status: "fail",
          summary: `cannot open: ${error instanceof Error ? error.message : String(error)}`,
          fix:
            config.store_url === undefined
              ? `make ${config.data_dir} writable (or set COWORKER_DATA_DIR)`
              : "check COWORKER_STORE_URL and that the server is up",
        };
      }
      try {
        const space = store.space("dedupe");
        const key = `doctor:${randomUUID()}`;
        const value = { at: new Date().toISOString() };
        await space.set(key, value, 60_000);
        const read = await space.get<typeof value>(key);
        await space.delete(key);
        if (read?.at !== value.at)
          return {
            status: "fail",
            summary: `${store.description}: a written key did not read back`,
            fix: "check the store backend's health",
          };
        return { status: "pass", summary: `${store.description} is writable` };
      } catch (error) {
        return {
          status: "fail",
          summary: `${store.description}: ${error instanceof Error ? error.message : String(error)}`,
          fix: "check permissions on the data directory or the store server",
        };
      } finally {
        await store.close();
      }
    },
  };
}

/** The whole checklist; with an invalid config only the config check runs (the rest depend on it). */
export function doctorChecks(loaded: LoadConfigResult, deps: DoctorDeps): DoctorCheck[] {
  if (!loaded.ok) return [configCheck(loaded)];
  const config = loaded.config;
  return [
    configCheck(loaded),
    modelCheck(config.model, deps.fetch),
    ...platformChecks(config, deps.fetch),
    telegramAccessCheck(config.telegram),
    storeCheck(config, deps.openStore),
    workspaceCheck(config.workspace),
    skillsCheck(config),
    shellSandboxCheck(config),
  ];
}
