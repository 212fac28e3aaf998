/**
 * Which channels `start` runs for a configuration: its own module because start-up (start-app.ts,
 * the start command's banner) and session assembly (who may approve beside the console) both
 * decide from it, and session assembly must not pull in the start-up machinery.
 */
import type { CoworkerConfig } from "../config/schema.js";
import { CONSOLE_PLATFORM } from "../core/console-platform.js";
import type { ChannelStarter } from "./app-parts.js";

/**
 * The channels `start` will run: those with credentials, plus the console when `console.enabled`
 * is true, or "auto" and no platform is configured. The console has no access checks (whoever
 * types is its session's owner), so a team deployment never gets it beside Slack or Telegram just
 * because it was started in a terminal (docker run -it, tmux): only when set to true.
 */
export function planChannels(config: CoworkerConfig, starters: readonly ChannelStarter[]): readonly string[] {
  const configured = starters.filter((starter) => starter.hasCredentials(config)).map((s) => s.platform);
  const mode = config.console.enabled;
  const console = mode === true || (mode === "auto" && configured.length === 0);
  return console ? [...configured, CONSOLE_PLATFORM] : configured;
}
