/**
 * The line a /coworker answer opens with, naming the thread it acted on: its start time as a Slack
 * date token (with a UTC fallback), and a link from chat.getPermalink when Slack gives an https one
 * that cannot break out of the mrkdwn link; without one, the start time alone.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createClients } from "../../../src/channels/slack/slack-api.js";
import { threadNameLine } from "../../../src/channels/slack/slack-thread-name.js";
import { type RecordingHttpServer, startRecordingHttpServer } from "../../support/recording-http-server.js";
import { silentLogger } from "./support.js";

const TS = "1700000000.000100";
const STARTED = "started <!date^1700000000^{date_short_pretty} at {time}|2023-11-14 22:13 UTC>";

let server: RecordingHttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The line, from a Web API that answers chat.getPermalink with `answer`. */
async function lineWith(answer: Record<string, unknown>): Promise<string> {
  server = await startRecordingHttpServer((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify(answer));
  });
  const { api } = createClients({
    token: "xoxb-test",
    slackApiUrl: `${server.url}/api/`,
    logger: silentLogger,
  });
  return threadNameLine(api, "C1", TS, silentLogger);
}

describe("threadNameLine", () => {
  it("links the thread when Slack gives its permalink", async () => {
    const permalink = "https://acme.slack.com/archives/C1/p1700000000000100";
    expect(await lineWith({ ok: true, permalink })).toBe(
      `_In your latest thread here, ${STARTED} (<${permalink}|open it>):_`,
    );
    expect(server?.received[0]?.path).toBe("/api/chat.getPermalink");
    expect(server?.received[0]?.body).toContain(`message_ts=${TS}`);
  });

  it.each([
    ["Slack refuses", { ok: false, error: "message_not_found" }],
    [
      "a link that would break out of the mrkdwn link",
      { ok: true, permalink: "https://x.slack.com/a|<!channel>" },
    ],
    ["a link that is not https", { ok: true, permalink: "javascript:alert(1)" }],
  ])("names it by its start alone when %s", async (_case, answer) => {
    expect(await lineWith(answer)).toBe(`_In your latest thread here, ${STARTED}:_`);
  });
});
