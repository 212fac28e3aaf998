/**
 * slackFetchWithin: Web API calls (text bodies) go through postText, uploads (FormData) through
 * Node's fetch, and a WebClient on it still reads answers and gives up on a call that hangs.
 */
import { webApi } from "@slack/bolt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { slackFetchWithin } from "../../../src/channels/slack/slack-fetch.js";
import { type RecordingHttpServer, startRecordingHttpServer } from "../../support/recording-http-server.js";

let server: RecordingHttpServer;
let url: string;
/** Requests to this path are never answered. */
const HANG = "/api/hang";

/** What the server read of each request: its type and body, and its User-Agent (node-fetch names itself, postText does not). */
const received = () =>
  server.received.map((r) => ({
    contentType: r.headers["content-type"],
    body: r.body,
    userAgent: r.headers["user-agent"],
  }));

beforeEach(async () => {
  server = await startRecordingHttpServer((request, response) => {
    if (request.path === HANG) return;
    response.writeHead(200, { "content-type": "application/json", "x-oauth-scopes": "chat:write" });
    response.end(JSON.stringify({ ok: true, ts: "1.2" }));
  });
  url = `${server.url}/api/`;
});

afterEach(() => server.close());

/** The fetch under a deadline far longer than any call here. */
const slackFetch = slackFetchWithin(30_000);

describe("slackFetchWithin", () => {
  it("sends a text body through postText, whose answer reads like a Response", async () => {
    const response = await slackFetch(`${url}chat.postMessage`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: "channel=C1&text=hi",
    });
    expect(response).not.toBeInstanceOf(Response);
    expect(response.status).toBe(200);
    expect(response.headers.get("x-oauth-scopes")).toBe("chat:write");
    expect(await response.json()).toEqual({ ok: true, ts: "1.2" });
    expect(received()).toEqual([
      { contentType: "application/x-www-form-urlencoded", body: "channel=C1&text=hi", userAgent: undefined },
    ]);
  });

  it("sends a FormData body (an upload) through Node's fetch, as multipart", async () => {
    const form = new FormData();
    form.append("file", new Blob([new Uint8Array([1, 2, 3])]), "a.bin");
    const response = await slackFetch(`${url}files.upload`, { method: "POST", body: form });
    expect(response).toBeInstanceOf(Response);
    expect(received()[0]?.contentType).toMatch(/^multipart\/form-data; boundary=/);
    expect(received()[0]?.body).toContain('filename="a.bin"');
  });

  it("serves a WebClient: a call returns Slack's answer", async () => {
    const client = new webApi.WebClient("xoxb-test", { slackApiUrl: url, fetch: slackFetch });
    const result = await client.chat.postMessage({ channel: "C1", text: "hello" });
    expect(result).toMatchObject({ ok: true, ts: "1.2" });
    expect(received()[0]?.body).toContain("text=hello");
  });

  it("gives up on a call that hangs after its deadline, in place of the WebClient's own timeout", async () => {
    const client = new webApi.WebClient("xoxb-test", {
      slackApiUrl: url,
      fetch: slackFetchWithin(100),
      timeout: 0,
      retryConfig: { retries: 0 },
      logLevel: webApi.LogLevel.ERROR,
    });
    await expect(client.apiCall("hang")).rejects.toMatchObject({
      code: "slack_webapi_request_error",
      original: { name: "TimeoutError" },
    });
    expect(received()).toHaveLength(1);
  });

  it("gives up on an upload (Node's fetch) that hangs after its deadline too", async () => {
    const form = new FormData();
    form.append("file", new Blob([new Uint8Array([1])]), "a.bin");
    await expect(slackFetchWithin(100)(`${url}hang`, { method: "POST", body: form })).rejects.toMatchObject({
      name: "TimeoutError",
    });
  });
});
