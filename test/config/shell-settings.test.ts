import { describe, expect, it } from "vitest";
import { formatBanner } from "../../src/app/banner.js";
import { applyEnvOverrides } from "../../src/config/env-overrides.js";
import { configSchema } from "../../src/config/schema.js";
import { shellLimitsFromConfig } from "../../src/app/engine-config.js";
import { describeSandboxStatus } from "../../src/tools/shell/sandbox-backend.js";
import { createShellSandbox, hiddenServicePaths } from "../../src/tools/shell/shell-sandbox.js";

describe("tools.shell settings", () => {
  it("default to the bubblewrap sandbox without network and with resource limits", () => {
    const config = configSchema.parse({});
    expect(config.tools.shell).toEqual({
      sandbox: "bubblewrap",
      network: false,
      limits: { cpu_s: 600, file_size_mb: 1024, processes: 1024, memory_mb: 1024, address_space_mb: 8192 },
    });
    expect(shellLimitsFromConfig(config.tools.shell.limits)).toEqual({
      cpuSeconds: 600,
      fileSizeMb: 1024,
      processes: 1024,
      memoryMb: 1024,
      addressSpaceMb: 8192,
    });
    expect(configSchema.safeParse({ tools: { shell: { sandbox: "none" } } }).success).toBe(false);
  });

  it("COWORKER_SHELL_NETWORK and COWORKER_SHELL_SANDBOX override the file", () => {
    const raw = { tools: { shell: { network: false } } };
    const on = configSchema.parse(applyEnvOverrides(raw, { COWORKER_SHELL_NETWORK: "1" }).raw);
    expect(on.tools.shell.network).toBe(true);
    const off = configSchema.parse(applyEnvOverrides({}, { COWORKER_SHELL_NETWORK: "false" }).raw);
    expect(off.tools.shell.network).toBe(false);
    expect(
      configSchema.safeParse(applyEnvOverrides({}, { COWORKER_SHELL_NETWORK: "maybe" }).raw).success,
    ).toBe(false);
    const unsandboxed = configSchema.parse(applyEnvOverrides({}, { COWORKER_SHELL_SANDBOX: "off" }).raw);
    expect(unsandboxed.tools.shell.sandbox).toBe("off");
  });

  it("the sandbox is bubblewrap unless the settings say off, and hides the service's own paths", async () => {
    const service = { dataDir: "./data", configFile: "config/coworker.yaml" };
    expect((await createShellSandbox({ sandbox: "off", network: false }, service).status()).kind).toBe(
      "unsandboxed",
    );
    expect(await createShellSandbox({ sandbox: "bubblewrap", network: true }, service).status()).toEqual({
      kind: "sandboxed",
      description: "bubblewrap sandbox, host network shared (tools.shell.network)",
    });
    expect(hiddenServicePaths(service)).toEqual(
      expect.arrayContaining([
        `${process.cwd()}/data`,
        `${process.cwd()}/.env`,
        `${process.cwd()}/config/coworker.yaml`,
        process.cwd(),
      ]),
    );
  });

  it("the banner says how the shell runs, and names a disabled one with its fix", () => {
    const config = configSchema.parse({});
    const facts = {
      version: "1",
      channels: ["console"],
      store: "sqlite",
      opsUrl: "http://x",
      configSource: undefined,
    };
    const disabled = describeSandboxStatus({
      kind: "unavailable",
      reason: "bwrap is not installed",
      fix: "apt-get install bubblewrap",
    });
    expect(formatBanner(config, { ...facts, shell: disabled })).toContain(
      "shell     disabled (shell unavailable: bwrap is not installed; fix: apt-get install bubblewrap)",
    );
    const off = describeSandboxStatus({
      kind: "unsandboxed",
      description: "unsandboxed (tools.shell.sandbox: off)",
    });
    expect(formatBanner(config, { ...facts, shell: off })).toContain("shell     unsandboxed");
  });
});
