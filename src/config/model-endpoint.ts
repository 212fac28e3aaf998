/** Where the model lives: the configured base URL, or OpenAI's when only an API key is set. */
import type { CoworkerConfig } from "./schema.js";

/** OpenAI's API, used when only an API key is configured. */
export const OPENAI_BASE_URL = "https://api.openai.com/v1";

/** The endpoint's base URL, or undefined when neither a key nor a base URL is configured. */
export function modelBaseUrl(model: CoworkerConfig["model"]): string | undefined {
  return model.base_url ?? (model.api_key !== undefined ? OPENAI_BASE_URL : undefined);
}

/** What to tell someone who has not configured a model endpoint yet. */
export const NO_MODEL_ENDPOINT_HELP = [
  "No model endpoint is configured. Point Coworker at one of:",
  "  OpenAI:          OPENAI_API_KEY=sk-...",
  "  Ollama (local):  OPENAI_BASE_URL=http://localhost:11434/v1  COWORKER_MODEL=llama3.1",
  "  vLLM:            OPENAI_BASE_URL=http://localhost:8000/v1   COWORKER_MODEL=<served model>",
  "  OpenRouter:      OPENAI_BASE_URL=https://openrouter.ai/api/v1  OPENAI_API_KEY=sk-or-...",
  "Put them in .env or the environment, or set model.base_url / model.api_key in config/coworker.yaml.",
].join("\n");
