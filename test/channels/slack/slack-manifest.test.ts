import { readFile } from "node:fs/promises";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { SlackChannel } from "../../../src/channels/slack/slack-channel.js";
import { PERMISSION_MODES } from "../../../src/core/modes.js";
import {
  BOT_EVENTS,
  missingScopes,
  REQUIRED_BOT_SCOPES,
} from "../../../src/channels/slack/slack-requirements.js";
import { type FakeSlack, startFakeSlack } from "../../fakes/fake-slack/index.js";
import { FakeService } from "./fake-service.js";
import { fakeSlackChannelOptions } from "./support.js";

let fake: FakeSlack | undefined;
afterEach(async () => fake?.close());

describe("Slack app manifest", () => {
  it("grants exactly the scopes and events the adapter uses, with Socket Mode, interactivity and /coworker", async () => {
    const manifest = parse(
      await readFile(new URL("../../../config/slack-app-manifest.yaml", import.meta.url), "utf8"),
    );
    expect([...manifest.oauth_config.scopes.bot].sort()).toEqual([...REQUIRED_BOT_SCOPES].sort());
    expect([...manifest.settings.event_subscriptions.bot_events].sort()).toEqual([...BOT_EVENTS].sort());
    expect(manifest.settings.socket_mode_enabled).toBe(true);
    expect(manifest.settings.interactivity.is_enabled).toBe(true);
    expect(manifest.features.slash_commands.map((c: { command: string }) => c.command)).toEqual([
      "/coworker",
    ]);
    expect(manifest.features.slash_commands[0].usage_hint).toContain(`mode <${PERMISSION_MODES.join("|")}>`);
  });

  it("warns at start when the installed app lacks scopes", async () => {
    fake = await startFakeSlack();
    fake.state.scopes = REQUIRED_BOT_SCOPES.filter((s) => s !== "files:read");
    const lines: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => lines.push(line) });
    const channel = new SlackChannel(
      fakeSlackChannelOptions(fake, {
        fileMaxBytes: 1,
        workspaceRoot: "/tmp",
        service: new FakeService(),
        logger,
      }),
    );
    await channel.start();
    await channel.stop();
    const warning = lines.map((l) => JSON.parse(l)).find((l) => l.msg?.includes("lacks scopes"));
    expect(warning?.missing).toEqual(["files:read"]);
    expect(missingScopes(REQUIRED_BOT_SCOPES)).toEqual([]);
  });
});
