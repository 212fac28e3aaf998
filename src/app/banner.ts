/**
 * The short startup banner: channels, model, store, workspace, mode, then any warning about the
 * setup (`! …` lines) — never a secret.
 */
import { modelBaseUrl } from "../config/model-endpoint.js";
import type { CoworkerConfig } from "../config/schema.js";
import { scrubSecrets } from "../logging/redact.js";

export interface BannerFacts {
  readonly version: string;
  readonly channels: readonly string[];
  readonly store: string;
  /** Undefined when the ops server is turned off. */
  readonly opsUrl: string | undefined;
  /** The config file read, if any. */
  readonly configSource: string | undefined;
  /** How run_command runs: sandboxed, unsandboxed or disabled (describeSandboxStatus). */
  readonly shell?: string;
  /** Warning lines about the setup (an unwritable workspace …), shown under the rows. */
  readonly warnings?: readonly string[];
}

/** Multi-line banner text (ends with a newline). */
export function formatBanner(config: CoworkerConfig, facts: BannerFacts): string {
  const rows: [string, string][] = [
    ["channels", facts.channels.join(", ")],
    ["model", `${config.model.name} @ ${modelBaseUrl(config.model) ?? "(none)"}`],
    ["store", facts.store],
    ["workspace", config.workspace.root],
    ["mode", config.agent.mode],
    [
      "ops",
      facts.opsUrl === undefined ? "off (ops.enabled: false)" : `${facts.opsUrl} (/healthz /readyz /metrics)`,
    ],
    ["config", facts.configSource ?? "defaults + environment"],
    ...(facts.shell === undefined ? [] : [["shell", facts.shell] as [string, string]]),
  ];
  const lines = rows.map(([label, value]) => `  ${label.padEnd(10)}${value}`);
  const warnings = (facts.warnings ?? []).map((line) => `  ${line}`);
  return scrubSecrets([`Coworker ${facts.version}`, ...lines, ...warnings, ""].join("\n"));
}
