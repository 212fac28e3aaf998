import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { configSchema } from "../../src/config/schema.js";

function load(env: Record<string, string>) {
  const result = loadConfig({ env, cwd: "/srv/app" });
  if (!result.ok) throw new Error(result.problems.join("\n"));
  return result.config;
}

describe("attachments, transcription and model.vision config", () => {
  it("defaults: vision auto, caps set, no transcription", () => {
    const config = load({});
    expect(config.model.vision).toBe("auto");
    expect(config.attachments).toMatchObject({ max_files: 10, pdf_max_pages: 50, image_detail: "auto" });
    expect(config.transcription).toBeUndefined();
  });

  it("COWORKER_MODEL_VISION forces vision on or off; the transcription variables create the section", () => {
    expect(load({ COWORKER_MODEL_VISION: "false" }).model.vision).toBe(false);
    expect(load({ COWORKER_MODEL_VISION: "true" }).model.vision).toBe(true);
    const config = load({
      COWORKER_TRANSCRIPTION_MODEL: "whisper-large-v3",
      COWORKER_TRANSCRIPTION_BASE_URL: "https://api.groq.com/openai/v1",
      COWORKER_TRANSCRIPTION_API_KEY: "gsk_x",
    });
    expect(config.transcription).toEqual({
      model: "whisper-large-v3",
      base_url: "https://api.groq.com/openai/v1",
      api_key: "gsk_x",
      timeout_s: 120,
      max_duration_s: 1800,
      max_per_hour: 30,
    });
  });

  it("rejects a vision value that is not auto, true or false", () => {
    const result = loadConfig({ env: { COWORKER_MODEL_VISION: "maybe" }, cwd: "/srv/app" });
    expect(result.ok).toBe(false);
  });

  it("disk budget for uploads: 500 MB per person per day and a 1 GiB free-space floor by default; validated", () => {
    expect(load({}).attachments).toMatchObject({
      daily_upload_bytes_per_person: 500 * 1024 * 1024,
      min_free_disk_bytes: 1024 * 1024 * 1024,
    });
    const parse = (attachments: Record<string, unknown>) => configSchema.safeParse({ attachments }).success;
    expect(parse({ daily_upload_bytes_per_person: 1_000, min_free_disk_bytes: 0 })).toBe(true);
    expect(parse({ daily_upload_bytes_per_person: 0 })).toBe(false);
    expect(parse({ daily_upload_bytes_per_person: 1.5 })).toBe(false);
    expect(parse({ min_free_disk_bytes: -1 })).toBe(false);
    expect(parse({ min_free_disk_bytes: "1G" })).toBe(false);
  });
});
