/**
 * Adapts the process's pino logger to the `Logger` interface the Slack SDK (Bolt, WebClient,
 * Socket Mode client) expects, so SDK messages land in the same structured log. The level stays
 * pino's: the SDK may ask to change it, but configuration owns it. A message below that level is
 * not even put together (the SDK logs a few debug lines for every call).
 */
import type { Logger as SdkLogger } from "@slack/bolt";
import type { Logger } from "pino";

type SdkLevel = ReturnType<SdkLogger["getLevel"]>;

function sdkLevelOf(logger: Logger): SdkLevel {
  const value = logger.levelVal;
  if (value <= 20) return "debug" as SdkLevel;
  if (value <= 30) return "info" as SdkLevel;
  if (value <= 40) return "warn" as SdkLevel;
  return "error" as SdkLevel;
}

function message(parts: unknown[]): string {
  return parts
    .map((part) =>
      typeof part === "string" ? part : part instanceof Error ? part.message : JSON.stringify(part),
    )
    .join(" ");
}

/** An SDK logger writing into `logger` under `component`. */
export function sdkLogger(logger: Logger, component: string): SdkLogger {
  let child = logger.child({ component });
  const at =
    (level: "debug" | "info" | "warn" | "error") =>
    (...parts: unknown[]): void => {
      if (child.isLevelEnabled(level)) child[level](message(parts));
    };
  return {
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    setLevel: () => undefined,
    getLevel: () => sdkLevelOf(logger),
    setName: (name: string) => {
      child = logger.child({ component: `${component}:${name}` });
    },
  };
}
