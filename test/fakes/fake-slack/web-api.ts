/**
 * The fake Slack's HTTP side on 127.0.0.1: `POST /api/<method>` (form-encoded or JSON bodies,
 * bot or app token in the Authorization header), file downloads at `/files/<id>` that need the
 * bot token — without it they answer Slack's login page as HTML, like the real thing — file
 * uploads at `/upload/<id>` (from files.getUploadURLExternal; the bytes are kept) and response_url posts at
 * `/respond/<id>`. Configured rate limits answer 429 with Retry-After;
 * every call is recorded with its outcome. A client may prefix every path with `/c/<label>`
 * (one label per process under test): its calls are recorded with `via: label` and the Socket Mode
 * URL it gets from apps.connections.open carries the label, so each connection is known by it.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { type MethodContext, runMethod, SlackFailure } from "./methods.js";
import type { FakeSlackState } from "./state.js";

/** Arguments Slack clients send JSON-encoded inside form bodies. */
const JSON_ARGS = new Set(["blocks", "chunks", "attachments", "metadata", "loading_messages"]);

const LOGIN_PAGE =
  "<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in to Slack</body></html>";

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString("utf8");
}

function parseArgs(raw: string, contentType: string | undefined): Record<string, unknown> {
  if (raw.length === 0) return {};
  if (contentType?.includes("application/json")) return JSON.parse(raw) as Record<string, unknown>;
  const args: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    if (JSON_ARGS.has(key)) {
      try {
        args[key] = JSON.parse(value);
      } catch {
        args[key] = value;
      }
    } else args[key] = value;
  }
  return args;
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
  res.end(JSON.stringify(body));
}

function bearer(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  return header?.startsWith("Bearer ") ? header.slice("Bearer ".length) : undefined;
}

async function handleApi(
  state: FakeSlackState,
  method: string,
  req: IncomingMessage,
  res: ServerResponse,
  context: MethodContext,
  via: string | undefined,
): Promise<void> {
  const args = parseArgs(await readBody(req), req.headers["content-type"]);
  const token = bearer(req) ?? (typeof args.token === "string" ? args.token : undefined);
  const record = (status: number, error?: string) => {
    const { token: _token, ...visible } = args;
    const call = {
      method,
      args: visible,
      at: Date.now(),
      status,
      ...(error ? { error } : {}),
      ...(via ? { via } : {}),
    };
    state.calls.push(call);
    state.emit("call", call);
    state.changed();
  };
  if (state.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, state.latencyMs));
  const expected = method === "apps.connections.open" ? state.appToken : state.botToken;
  if (token === undefined) {
    record(200, "not_authed");
    return send(res, 200, { ok: false, error: "not_authed" });
  }
  if (token !== expected) {
    record(200, "invalid_auth");
    return send(res, 200, { ok: false, error: "invalid_auth" });
  }
  const drops = state.drops.get(method) ?? 0;
  if (drops > 0) {
    state.drops.set(method, drops - 1);
    record(0, "connection dropped");
    req.socket.destroy();
    return;
  }
  const limit = state.rateLimits.get(method);
  if (limit && limit.remaining > 0) {
    limit.remaining -= 1;
    record(429, "ratelimited");
    return send(res, 429, { ok: false, error: "ratelimited" }, { "retry-after": String(limit.retryAfterS) });
  }
  const injected = state.failures.get(method);
  if (injected && injected.length > 0) {
    const code = injected.shift() as string;
    record(200, code);
    return send(res, 200, { ok: false, error: code });
  }
  try {
    const labelled: MethodContext = via
      ? { ...context, socketUrl: () => `${context.socketUrl()}?label=${encodeURIComponent(via)}` }
      : context;
    const result = runMethod(state, method, args, labelled);
    record(200);
    send(res, 200, { ok: true, ...result }, { "x-oauth-scopes": state.scopes.join(",") });
  } catch (error) {
    if (!(error instanceof SlackFailure)) throw error;
    record(200, error.code);
    send(res, 200, { ok: false, error: error.code });
  }
}

function handleFile(state: FakeSlackState, id: string, req: IncomingMessage, res: ServerResponse): void {
  const file = state.files.get(id);
  const authorized = bearer(req) === state.botToken;
  state.fileDownloads.push({ id, authorized });
  state.changed();
  if (!file) {
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not found");
    return;
  }
  if (!authorized || file.loginPageOnly) {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(LOGIN_PAGE);
    return;
  }
  res.writeHead(200, { "content-type": file.mimetype, "content-length": String(file.content.length) });
  res.end(file.content);
}

async function handleResponseUrl(
  state: FakeSlackState,
  id: string,
  req: IncomingMessage,
  res: ServerResponse,
) {
  const body = parseArgs(await readBody(req), req.headers["content-type"] ?? "application/json");
  state.responses.push({ id, body });
  state.changed();
  send(res, 200, { ok: true });
}

/** The file's bytes in an upload's body: the body itself, or its file part when sent as a form. */
async function uploadedBytes(body: Buffer, contentType: string): Promise<Buffer> {
  if (!contentType.startsWith("multipart/form-data")) return body;
  const form = await new Response(body, { headers: { "content-type": contentType } }).formData();
  for (const value of form.values())
    if (typeof value !== "string") return Buffer.from(await value.arrayBuffer());
  return Buffer.alloc(0);
}

async function handleUpload(state: FakeSlackState, id: string, req: IncomingMessage, res: ServerResponse) {
  const upload = state.uploads.get(id);
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  if (!upload) {
    res.writeHead(404);
    res.end();
    return;
  }
  upload.content = await uploadedBytes(Buffer.concat(parts), req.headers["content-type"] ?? "");
  upload.received = upload.content.length;
  state.changed();
  res.writeHead(200, { "content-type": "text/plain" });
  res.end(`OK - ${upload.received}`);
}

/** The request listener of the fake's HTTP server. */
export function webApiListener(state: FakeSlackState, context: MethodContext) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const prefixed = /^\/c\/([^/]+)(\/.*)$/.exec(url.pathname);
    const via = prefixed ? decodeURIComponent(prefixed[1] ?? "") : undefined;
    const path = prefixed ? (prefixed[2] ?? "/") : url.pathname;
    const done = (work: Promise<void>) =>
      work.catch((error: unknown) => {
        if (!res.headersSent) send(res, 500, { ok: false, error: String(error) });
      });
    if (req.method === "POST" && path.startsWith("/api/")) {
      done(handleApi(state, path.slice("/api/".length), req, res, context, via));
    } else if (req.method === "GET" && path.startsWith("/files/")) {
      handleFile(state, decodeURIComponent(path.slice("/files/".length).split("/")[0] ?? ""), req, res);
    } else if (req.method === "POST" && path.startsWith("/upload/")) {
      done(handleUpload(state, path.slice("/upload/".length), req, res));
    } else if (req.method === "POST" && path.startsWith("/respond/")) {
      done(handleResponseUrl(state, path.slice("/respond/".length), req, res));
    } else {
      res.writeHead(404);
      res.end();
    }
  };
}
