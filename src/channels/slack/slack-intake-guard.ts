/**
 * Intake guards for the two ways Slack reaches Bolt. Inbound data must be checked before Bolt
 * dereferences it (Bolt's HTTP receiver reads `body.ssl_check`, its listeners read the payload's
 * fields), or a malformed frame or body would throw outside any handler and end the process. A
 * Socket Mode frame is parsed and screened before it is handed to Bolt (the connection's thread
 * passes it on as text, slack-socket-thread.ts), an HTTP body (after Bolt's signature check)
 * before the receiver's request listener sees it. What does not pass is acknowledged (Slack then
 * stops redelivering it) and logged once with its kind.
 */
import { HTTPModuleFunctions, type HTTPReceiver } from "@slack/bolt";
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import type { IntakeLog } from "../intake-log.js";
import type { BodyKind, Screening } from "./slack-intake.js";

/** Screens one parsed body (see slack-intake.ts). */
export type Screen = (body: unknown) => Screening;

const ENVELOPE_TYPES = ["events_api", "interactive", "slash_commands"] as const;

/** The body each envelope type must carry. */
const ENVELOPE_BODY: Readonly<Record<(typeof ENVELOPE_TYPES)[number], BodyKind>> = {
  events_api: "event_callback",
  interactive: "block_actions",
  slash_commands: "command",
};

const frameSchema = z.looseObject({
  type: z.enum(ENVELOPE_TYPES),
  envelope_id: z.string().min(1).max(200),
  payload: z.unknown(),
  retry_attempt: z.number().int().nonnegative().optional(),
  retry_reason: z.string().optional(),
  accepts_response_payload: z.boolean().optional(),
});

/** An envelope that passed: what Bolt is handed. */
export type SocketEnvelope = Readonly<z.infer<typeof frameSchema>>;

/** Answers an envelope (`reply` as its text, for a slash command refused with one). */
export type SocketAck = (envelopeId: string, reply?: string) => void;

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/**
 * Screen one Socket Mode frame (text; `hello` and `disconnect` never come here, the connection's
 * thread handles those itself): an envelope whose payload passes, with the body its type
 * must carry, is returned for Bolt; the rest are acknowledged through `ack` when they carry an
 * envelope id, logged, and dropped.
 */
export function screenSocketFrame(
  text: string,
  screen: Screen,
  log: IntakeLog,
  ack: SocketAck,
): SocketEnvelope | undefined {
  const parsed = parseJson(text);
  if (!parsed.ok) {
    log.refused("socket_frame", { reason: "not JSON text" });
    return undefined;
  }
  const frame = frameSchema.safeParse(parsed.value);
  if (!frame.success) {
    const envelopeId = (parsed.value as { envelope_id?: unknown } | null)?.envelope_id;
    if (typeof envelopeId === "string" && envelopeId.length > 0 && envelopeId.length <= 200) ack(envelopeId);
    log.refused("socket_frame", { reason: "unexpected frame" });
    return undefined;
  }
  const envelope = frame.data;
  const verdict = screen(envelope.payload);
  if (verdict.pass && verdict.body === ENVELOPE_BODY[envelope.type]) return envelope;
  ack(envelope.envelope_id, verdict.pass ? undefined : verdict.reply);
  log.refused(verdict.pass ? "mismatched_envelope" : verdict.kind, {
    transport: "socket_mode",
    envelope: envelope.type,
  });
  return undefined;
}

/** Largest body read from Slack: its payloads are a few KB (Telegram's webhook uses the same). */
export const SLACK_BODY_LIMIT = 1024 * 1024;
/** Largest unsigned body read: only Slack's `ssl_check=1&token=…` probe is sent unsigned. */
const SSL_CHECK_BODY_LIMIT = 1024;
/** How far a request's timestamp may be from now (Slack's own rule is five minutes). */
const MAX_CLOCK_SKEW_S = 300;
const SIGNATURE = /^v0=[0-9a-f]{64}$/;
const TIMESTAMP = /^[0-9]{1,12}$/;
const FORM = "application/x-www-form-urlencoded";

/** What the HTTP guard needs to know about the endpoint. */
export interface HttpGuardOptions {
  readonly signingSecret: string;
  /** The path Slack posts to; a request to any other path is answered 404 unread. */
  readonly path: string;
  /** Largest body read before the signature is checked. */
  readonly bodyLimit: number;
}

function isEndpoint(req: IncomingMessage, path: string): boolean {
  if (req.method !== "POST") return false;
  try {
    return new URL(req.url ?? "/", "http://localhost").pathname === path;
  } catch {
    return false;
  }
}

/** Whether the headers carry a well-formed signature with a timestamp near now. */
function looksSigned(req: IncomingMessage): boolean {
  const signature = req.headers["x-slack-signature"];
  const timestamp = req.headers["x-slack-request-timestamp"];
  if (typeof signature !== "string" || !SIGNATURE.test(signature)) return false;
  if (typeof timestamp !== "string" || !TIMESTAMP.test(timestamp)) return false;
  return Math.abs(Number(timestamp) - Math.floor(Date.now() / 1000)) <= MAX_CLOCK_SKEW_S;
}

/** Reads a small unsigned form body; true when it is Slack's ssl_check probe. */
async function isSslCheck(req: IncomingMessage): Promise<boolean> {
  if (req.headers["content-type"] !== FORM) return false;
  try {
    const buffered = await HTTPModuleFunctions.bufferIncomingMessage(req, SSL_CHECK_BODY_LIMIT);
    return new URLSearchParams(buffered.rawBody.toString()).get("ssl_check") === "1";
  } catch {
    return false;
  }
}

/** Answers with no body and closes the connection (the rest of the request is not read). */
function refuse(res: ServerResponse, status: number): void {
  if (!res.headersSent) res.writeHead(status, { connection: "close" }).end();
}

/**
 * Put the screen in front of an HTTP receiver's request listener. Anything but a POST to the
 * endpoint is answered 404 here, unread, and logged through the throttled intake log (Bolt would
 * log an info line for each, so anyone reaching the port could flood the log). Before any body is
 * read the signature headers must be well formed and the timestamp within five minutes of now
 * (else 401; only Slack's unsigned ssl_check probe, at most 1 KB, is read and passed on). The
 * body is then read up to the limit (413 beyond it, or when Content-Length says so) and verified
 * with Bolt's own check (a failure is 401 here, logged through the throttled intake log). A
 * verified body that does not pass the screen is answered 200 here (with the reply as JSON text
 * when there is one); the rest go on to Bolt. Every refusal closes the connection.
 */
export function guardHttpReceiver(
  receiver: HTTPReceiver,
  options: HttpGuardOptions,
  screen: Screen,
  log: IntakeLog,
): void {
  const original = receiver.requestListener;
  const { signingSecret, path, bodyLimit } = options;
  const tooLarge = (res: ServerResponse): void => {
    log.refused("too_large", { transport: "http", limit: bodyLimit });
    refuse(res, 413);
  };
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!looksSigned(req)) {
      if (await isSslCheck(req)) return original(req, res);
      log.refused("unsigned", { transport: "http" });
      return refuse(res, 401);
    }
    if (Number(req.headers["content-length"] ?? 0) > bodyLimit) return tooLarge(res);
    const buffered = await HTTPModuleFunctions.bufferIncomingMessage(req, bodyLimit);
    try {
      await HTTPModuleFunctions.parseAndVerifyHTTPRequest({ enabled: true, signingSecret }, buffered);
    } catch {
      log.refused("bad_signature", { transport: "http" });
      return refuse(res, 401);
    }
    let body: unknown;
    try {
      body = HTTPModuleFunctions.parseHTTPRequestBody(buffered);
    } catch {
      return original(buffered, res);
    }
    if ((body as { ssl_check?: unknown } | null)?.ssl_check === "1") return original(buffered, res);
    const verdict = screen(body);
    if (verdict.pass) return original(buffered, res);
    log.refused(verdict.kind, { transport: "http" });
    if (verdict.reply === undefined) res.writeHead(200).end();
    else
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ response_type: "ephemeral", text: verdict.reply }));
  };
  receiver.requestListener = (req, res) => {
    if (!isEndpoint(req, path)) {
      log.refused("not_the_endpoint", { transport: "http", method: req.method });
      return refuse(res, 404);
    }
    handle(req, res).catch((error: unknown) => {
      if (HTTPModuleFunctions.isRawBodyError(error) && error.statusCode === 413) return tooLarge(res);
      log.refused("http_request_failed", { transport: "http", err: String(error) });
      refuse(res, 400);
    });
  };
}
