/**
 * The model endpoint check (models list, else a one-token completion), run by `doctor` and by
 * `start` as its model phase. A module of its own so `start` does not load the rest of the doctor.
 */
import { z } from "zod";
import { modelBaseUrl, NO_MODEL_ENDPOINT_HELP } from "../config/model-endpoint.js";
import type { CoworkerConfig } from "../config/schema.js";
import type { CheckResult, DoctorCheck } from "./doctor.js";
import { type FetchLike, ProbeNetworkError, probe } from "./http-probe.js";

const modelList = z.object({ data: z.array(z.object({ id: z.string() })) });

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
