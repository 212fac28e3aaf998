/** The package version, read from package.json (two levels up from both src/cli and dist/cli). */
import { readFileSync } from "node:fs";

/** "0.1.0" */
export function packageVersion(): string {
  const raw: unknown = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  const version = (raw as { version?: unknown }).version;
  return typeof version === "string" ? version : "unknown";
}
