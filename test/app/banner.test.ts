import { describe, expect, it } from "vitest";
import { formatBanner } from "../../src/app/banner.js";
import { configSchema } from "../../src/config/schema.js";

const facts = {
  version: "1.0.0",
  channels: ["console"],
  store: "memory:",
  opsUrl: undefined,
  configSource: undefined,
};

describe("startup banner", () => {
  it("does not show a secret carried in the model base URL's query string", () => {
    const config = configSchema.parse({
      model: { base_url: "https://gw.example.com/v1?api_key=gw-live-3f9a8b7c6d5e" },
    });
    const banner = formatBanner(config, facts);
    expect(banner).not.toContain("gw-live-3f9a8b7c6d5e");
    expect(banner).toContain("@ https://gw.example.com/v1?api_key=[redacted]");
  });

  it("shows an ordinary base URL as it is", () => {
    const config = configSchema.parse({ model: { base_url: "http://localhost:11434/v1?format=json" } });
    expect(formatBanner(config, facts)).toContain("@ http://localhost:11434/v1?format=json");
  });
});
