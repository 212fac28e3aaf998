/**
 * The doctor's checks besides the chat platforms: configuration, model endpoint (models list, else
 * a one-token completion), store (write + read + delete a key) and workspace directories.
 * `doctorChecks` assembles the full checklist with injectable fetch and store opener.
 */
import { randomUUID } from "node:crypto";
import { access, constants, stat } from "node:fs/promises";
import { z } from "zod";
import type { LoadConfigResult } from "../config/load-config.js";
import { modelBaseUrl, NO_MODEL_ENDPOINT_HELP } from "../config/model-endpoint.js";
import type { CoworkerConfig } from "../config/schema.js";
import type { Store } from "../store/store.js";
import type { CheckResult, DoctorCheck } from "./doctor.js";
import { platformChecks } from "./doctor-platform-checks.js";
import { skillsCheck } from "./doctor-skills-check.js";
import { shellSandboxCheck } from "./doctor-shell-check.js";
import { type FetchLike, ProbeNetworkError, probe } from "./http-probe.js";

export type StoreOpener = (config: CoworkerConfig) => Promise<Store>;

export interface DoctorDeps {
  readonly fetch: FetchLike;
  readonly openStore: StoreOpener;
}

const modelList = z.object({ data: z.array(z.object({ id: z.string() })) });

/** The config check: valid, or every problem listed. */
export function configCheck(loaded: LoadConfigResult): DoctorCheck {
  return {
    name: "configuration",
    async run() {
      const from = loaded.source ?? "defaults + environment (no config file)";
      if (loaded.ok) return { status: "pass", summary: `valid (${from})` };
      return {
        status: "fail",
        summary: `${loaded.problems.length} problem(s) in ${from}`,
        notes: loaded.problems,
        fix: "correct the keys above (see config/coworker.example.yaml for every key)",
      };
    },
  };
}

/** An HTTP failure of the model endpoint, worded by kind: rejected, rate-limited or misconfigured. */
function modelFailure(status: number, base: string): CheckResult {
  if (status === 401 || status === 403) {
    return {
      status: "fail",
      summary: `${base} rejected the API key (HTTP ${status})`,
      fix: "set a valid OPENAI_API_KEY for this endpoint",
    };
  }
  if (status === 429) {
    return {
      status: "warn",
      summary: `${base} is rate-limiting us (HTTP 429)`,
      fix: "wait, or raise the account's rate limits; Coworker retries model calls",
    };
  }
  if (status >= 500) {
    return {
      status: "fail",
      summary: `${base} is failing (HTTP ${status})`,
      fix: "check the model server's own logs; it may still be loading the model",
    };
  }
  return {
    status: "fail",
    summary: `${base} answered HTTP ${status}`,
    fix: "check OPENAI_BASE_URL (it usually ends in /v1)",
  };
}

async function oneTokenCompletion(
  fetchImpl: FetchLike,
  base: string,
  model: CoworkerConfig["model"],
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<CheckResult> {
  const response = await probe(fetchImpl, new URL("chat/completions", `${base}/`), {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify({ model: model.name, messages: [{ role: "user", content: "ping" }], max_tokens: 1 }),
    signal,
  });
  if (response.status === 200)
    return { status: "pass", summary: `${model.name} answered a one-token completion at ${base}` };
  if (response.status === 404) {
    return {
      status: "fail",
      summary: `${base} does not know model "${model.name}"`,
      fix: "set COWORKER_MODEL to a model the endpoint serves",
    };
  }
  return modelFailure(response.status, base);
}

/** The model endpoint check. */
export function modelCheck(model: CoworkerConfig["model"], fetchImpl: FetchLike): DoctorCheck {
  return {
    name: "model endpoint",
    async run(signal) {
      const base = modelBaseUrl(model)?.replace(/\/+$/, "");
      if (base === undefined)
        return { status: "fail", summary: "not configured", fix: NO_MODEL_ENDPOINT_HELP };
      const headers: Record<string, string> = model.api_key
        ? { authorization: `Bearer ${model.api_key}` }
        : {};
      try {
        const response = await probe(fetchImpl, new URL("models", `${base}/`), { headers, signal });
        if (response.status === 404 || response.status === 405) {
          return await oneTokenCompletion(fetchImpl, base, model, headers, signal);
        }
        if (response.status !== 200) return modelFailure(response.status, base);
        const parsed = modelList.safeParse(response.body);
        if (!parsed.success) return await oneTokenCompletion(fetchImpl, base, model, headers, signal);
        const ids = parsed.data.data.map((entry) => entry.id);
        if (ids.includes(model.name)) return { status: "pass", summary: `${base} serves ${model.name}` };
        return {
          status: "warn",
          summary: `${base} answered, but "${model.name}" is not in its list of ${ids.length} model(s)`,
          fix: `set COWORKER_MODEL to one of: ${ids.slice(0, 8).join(", ")}${ids.length > 8 ? ", …" : ""}`,
        };
      } catch (error) {
        if (!(error instanceof ProbeNetworkError)) throw error;
        return {
          status: "fail",
          summary: `unreachable: ${error.message}`,
          fix: "start the model server (e.g. `ollama serve`) or correct OPENAI_BASE_URL",
        };
      }
    },
  };
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

async function directoryProblem(path: string): Promise<string | undefined> {
  try {
    if (!(await stat(path)).isDirectory()) return `${path} is not a directory`;
    await access(path, constants.R_OK | constants.W_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT"
      ? `${path} does not exist`
      : `${path} is not readable and writable (${code ?? "error"})`;
  }
}

/** The workspace check: the root and every extra root are readable, writable directories. */
export function workspaceCheck(workspace: CoworkerConfig["workspace"]): DoctorCheck {
  return {
    name: "workspace",
    async run() {
      const roots = [workspace.root, ...workspace.extra_roots];
      const problems = (await Promise.all(roots.map(directoryProblem))).filter((p) => p !== undefined);
      if (problems.length === 0) return { status: "pass", summary: roots.join(", ") };
      return {
        status: "fail",
        summary: problems.join("; "),
        fix: `create it (mkdir -p ${workspace.root}; \`coworker start\` creates the root itself) and make it writable for this user, or set COWORKER_WORKSPACE`,
      };
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
    storeCheck(config, deps.openStore),
    workspaceCheck(config.workspace),
    skillsCheck(config),
    shellSandboxCheck(config),
  ];
}
