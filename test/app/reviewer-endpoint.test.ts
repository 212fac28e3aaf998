/**
 * The safety reviewer's endpoint and key, from configuration loaded as `start` loads it: the main
 * model's key goes only to the main model's endpoint. A reviewer on another host gets its own key
 * (reviewer.api_key, COWORKER_REVIEWER_API_KEY) or none — never the OpenAI key.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reviewerEndpoint } from "../../src/app/conversation-assembly.js";
import { loadConfig } from "../../src/config/load-config.js";

function endpointWith(env: Record<string, string>) {
  const result = loadConfig({ env, cwd: mkdtempSync(join(tmpdir(), "coworker-reviewer-")) });
  if (!result.ok) throw new Error(result.problems.join("\n"));
  return reviewerEndpoint(result.config);
}

const MAIN_KEY = "sk-main-openai-key-0123456789";

describe("reviewer endpoint", () => {
  it("uses the main endpoint and key when the reviewer names no endpoint of its own", () => {
    expect(endpointWith({ OPENAI_API_KEY: MAIN_KEY })).toEqual({ baseURL: undefined, apiKey: MAIN_KEY });
  });

  it("never sends the main key to a reviewer on another host", () => {
    const endpoint = endpointWith({
      OPENAI_API_KEY: MAIN_KEY,
      COWORKER_REVIEWER_BASE_URL: "https://reviewer.third-party.example/v1",
    });
    expect(endpoint).toEqual({ baseURL: "https://reviewer.third-party.example/v1", apiKey: undefined });
  });

  it("gives a reviewer on another host its own key, from COWORKER_REVIEWER_API_KEY", () => {
    const endpoint = endpointWith({
      OPENAI_API_KEY: MAIN_KEY,
      COWORKER_REVIEWER_BASE_URL: "https://reviewer.third-party.example/v1",
      COWORKER_REVIEWER_API_KEY: "rk-reviewer-key-0123456789",
    });
    expect(endpoint.apiKey).toBe("rk-reviewer-key-0123456789");
  });
});
