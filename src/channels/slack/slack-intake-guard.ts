/**
 * Intake guards for the two ways Slack reaches Bolt. The SDKs dereference inbound data before
 * any handler of ours runs (the Socket Mode client reads `payload.event.type` of every
 * `events_api` frame, Bolt's HTTP receiver reads `body.ssl_check`), so a malformed frame or body
 * would throw outside any handler and end the process. The guards sit in front: a Socket Mode
 * frame is parsed and screened before the client's own message listener sees it, an HTTP body
 * (after Bolt's signature check) before the receiver's request listener does. What does not pass
 * is acknowledged (Slack then stops redelivering it) and logged once with its kind.
 */
import { HTTPModuleFunctions, type HTTPReceiver } from "@slack/bolt";
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import type { IntakeLog } from "../intake-log.js";
import type { BodyKind, Screening } from "./slack-intake.js";

/** Screens one parsed body (see slack-intake.ts). */
export type Screen = (body: unknown) => Screening;

const ENVELOPE_TYPES = ["events_api", "interactive", "slash_commands"] as const;

/** The body each envelope type must carry (the client reads `payload.event` of events_api). */
const ENVELOPE_BODY: Readonly<Record<(typeof ENVELOPE_TYPES)[number], BodyKind>> = {
  events_api: "event_callback",
  interactive: "block_actions",
  slash_commands: "command",
};

const frameSchema = z.union([
  z.looseObject({ type: z.enum(["hello", "disconnect"]) }),
  z.looseObject({
    type: z.enum(ENVELOPE_TYPES),
    envelope_id: z.string().min(1).max(200),
    payload: z.unknown(),
    retry_attempt: z.number().int().nonnegative().optional(),
    retry_reason: z.string().optional(),
    accepts_response_payload: z.boolean().optional(),
  }),
]);

type Listener = (...args: unknown[]) => unknown;

/** The parts of the SDK's SocketModeClient the guard uses (`send` is private in its typings). */
interface GuardedClient {
  listeners(event: string): Listener[];
  removeAllListeners(event: string): unknown;
  on(event: string, listener: Listener): unknown;
}
type Acker = { send(envelopeId: string, body?: Record<string, unknown>): Promise<void> };

function textOf(data: unknown): string | undefined {
  if (typeof data === "string") return data;
  if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) {
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(data as ArrayBuffer);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/**
 * Put the screen in front of the Socket Mode client's `ws_message` listener: only well-formed
 * frames whose payload passes reach the client; the rest are acknowledged here when they carry an
 * envelope id. A listener that still fails is logged, never left as an unhandled rejection.
 */
export function guardSocketMode(client: unknown, screen: Screen, log: IntakeLog): void {
  const guarded = client as GuardedClient;
  const acker = client as Partial<Acker>;
  const originals = guarded.listeners("ws_message");
  guarded.removeAllListeners("ws_message");
  const ack = (envelopeId: string, reply?: string) => {
    if (typeof acker.send !== "function") return;
    acker.send
      .call(client, envelopeId, reply === undefined ? {} : { text: reply })
      .catch((error: unknown) => log.refused("socket_ack_failed", { err: String(error) }));
  };
  const deliver = (data: unknown, isBinary: unknown) => {
    for (const listener of originals) {
      try {
        Promise.resolve(listener.call(client, data, isBinary)).catch((error: unknown) =>
          log.refused("socket_handler_failed", { err: String(error) }),
        );
      } catch (error) {
        log.refused("socket_handler_failed", { err: String(error) });
      }
    }
  };
  guarded.on("ws_message", (data: unknown, isBinary: unknown) => {
    if (isBinary === true) return log.refused("socket_frame", { reason: "binary" });
    const text = textOf(data);
    const parsed = text === undefined ? undefined : parseJson(text);
    if (!parsed?.ok) return log.refused("socket_frame", { reason: "not JSON text" });
    const frame = frameSchema.safeParse(parsed.value);
    if (!frame.success) {
      const envelopeId = (parsed.value as { envelope_id?: unknown } | null)?.envelope_id;
      if (typeof envelopeId === "string" && envelopeId.length > 0 && envelopeId.length <= 200)
        ack(envelopeId);
      return log.refused("socket_frame", { reason: "unexpected frame" });
    }
    if (frame.data.type === "hello" || frame.data.type === "disconnect") return deliver(text, false);
    const envelope = frame.data as {
      envelope_id: string;
      payload: unknown;
      type: keyof typeof ENVELOPE_BODY;
    };
    const verdict = screen(envelope.payload);
    if (verdict.pass && verdict.body === ENVELOPE_BODY[envelope.type]) return deliver(text, false);
    const kind = verdict.pass ? "mismatched_envelope" : verdict.kind;
    ack(envelope.envelope_id, verdict.pass ? undefined : verdict.reply);
    log.refused(kind, { transport: "socket_mode", envelope: envelope.type });
  });
}

/**
 * Put the screen in front of an HTTP receiver's request listener. The body is buffered once and
 * checked with Bolt's own signature verification first: an unsigned or unparsable request goes
 * on to Bolt unchanged (which answers 401 / 400), a signed one that does not pass the screen is
 * answered 200 here (with the reply as JSON text when there is one).
 */
export function guardHttpReceiver(
  receiver: HTTPReceiver,
  signingSecret: string,
  screen: Screen,
  log: IntakeLog,
): void {
  const original = receiver.requestListener;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== "POST") return original(req, res);
    const buffered = await HTTPModuleFunctions.bufferIncomingMessage(
      req,
      HTTPModuleFunctions.defaultBodyLimit,
    );
    let body: unknown;
    try {
      await HTTPModuleFunctions.parseAndVerifyHTTPRequest({ enabled: true, signingSecret }, buffered);
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
    handle(req, res).catch((error: unknown) => {
      log.refused("http_request_failed", { err: String(error) });
      if (!res.headersSent) res.writeHead(400).end();
    });
  };
}
