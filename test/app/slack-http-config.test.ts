/**
 * `slack.http.host` is the interface the Slack HTTP events server listens on: read from the config
 * and handed to the channel; unset, the server listens on all interfaces as before.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { httpOptions } from "../../src/app/slack-starter.js";
import { loadConfig } from "../../src/config/load-config.js";

function project(yaml: string): string {
  const cwd = mkdtempSync(join(tmpdir(), "slack-http-config-"));
  mkdirSync(join(cwd, "config"));
  writeFileSync(join(cwd, "config/coworker.yaml"), yaml);
  return cwd;
}

describe("slack.http.host", () => {
  it("is read from the config and handed to the channel", () => {
    const loaded = loadConfig({ env: {}, cwd: project("slack:\n  http: { host: 127.0.0.1 }\n") });
    if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
    expect(loaded.config.slack.http.host).toBe("127.0.0.1");
    expect(httpOptions(loaded.config.slack.http)).toEqual({
      port: 3000,
      path: "/slack/events",
      host: "127.0.0.1",
    });
  });

  it("is unset by default: all interfaces, since Slack must reach the server", () => {
    const loaded = loadConfig({ env: {}, cwd: project("slack:\n  http: { port: 3001 }\n") });
    if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
    expect(httpOptions(loaded.config.slack.http)).not.toHaveProperty("host");
  });
});
