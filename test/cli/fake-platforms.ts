/**
 * One local HTTP server faking the three outside services doctor talks to: Slack Web API
 * (auth.test, apps.connections.open), Telegram Bot API (getMe) and an OpenAI-compatible model
 * endpoint (/v1/models, /v1/chat/completions). Listens on 127.0.0.1:0.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export const GOOD = {
  slackBot: "xoxb-1111111111-2222222222-GoodGoodGood",
  slackApp: "xapp-1-A0001-3333333333-goodgoodgood",
  telegram: "123456789:AAGoodTokenGoodTokenGoodTokenGood01",
  openai: "sk-good-0123456789abcdefghij",
} as const;

export const ALL_SCOPES =
  "app_mentions:read,channels:history,groups:history,im:history,mpim:history,chat:write,files:read,users:read,commands";

export interface FakeOptions {
  scopes?: string;
  models?: string[] | "missing";
  privacyOff?: boolean;
}

export interface FakePlatforms {
  readonly url: string;
  readonly requests: string[];
  close(): Promise<void>;
}

function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

function bearer(req: IncomingMessage): string | undefined {
  return req.headers.authorization?.replace(/^Bearer /, "");
}

/** Start the fake; `options` shapes its answers. */
export async function startFakePlatforms(options: FakeOptions = {}): Promise<FakePlatforms> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://fake").pathname;
    requests.push(`${req.method} ${path.replace(/bot[^/]+/, "bot<token>")}`);
    req.resume();
    if (path === "/api/auth.test") {
      if (bearer(req) !== GOOD.slackBot) return json(res, 200, { ok: false, error: "invalid_auth" });
      return json(
        res,
        200,
        { ok: true, user: "coworker", team: "Acme", team_id: "T0001" },
        {
          "x-oauth-scopes": options.scopes ?? ALL_SCOPES,
        },
      );
    }
    if (path === "/api/apps.connections.open") {
      if (bearer(req) !== GOOD.slackApp) return json(res, 200, { ok: false, error: "invalid_auth" });
      return json(res, 200, { ok: true, url: "wss://fake/link" });
    }
    if (path.startsWith("/bot") && path.endsWith("/getMe")) {
      if (path !== `/bot${GOOD.telegram}/getMe`)
        return json(res, 401, { ok: false, error_code: 401, description: "Unauthorized" });
      return json(res, 200, {
        ok: true,
        result: {
          id: 1,
          is_bot: true,
          username: "cowork_bot",
          can_read_all_group_messages: options.privacyOff === true,
        },
      });
    }
    if (path === "/v1/models") {
      if (bearer(req) !== GOOD.openai)
        return json(res, 401, { error: { message: "Incorrect API key provided" } });
      if (options.models === "missing") return json(res, 404, { error: "not found" });
      return json(res, 200, {
        object: "list",
        data: (options.models ?? ["gpt-4o-mini", "gpt-4o"]).map((id) => ({ id })),
      });
    }
    if (path === "/v1/chat/completions") {
      if (bearer(req) !== GOOD.openai)
        return json(res, 401, { error: { message: "Incorrect API key provided" } });
      return json(res, 200, {
        choices: [{ index: 0, message: { role: "assistant", content: "p" }, finish_reason: "length" }],
      });
    }
    json(res, 404, { error: "no such route" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
