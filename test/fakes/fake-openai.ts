/**
 * A local fake OpenAI-compatible HTTP server for tests: `POST /v1/chat/completions` (SSE when
 * `stream: true`, one JSON completion otherwise), `POST /v1/audio/transcriptions` (multipart
 * `file` + `model`, answered with `transcript(...)`) and `GET /v1/models`, on 127.0.0.1 port 0.
 *
 * Each request's parsed body is recorded; a handler decides the reply (text chunks, reasoning,
 * tool calls streamed as real-shaped fragments split across chunks, finish reason, usage, an
 * HTTP error, delays, a hang or a dropped connection). A client that closes the connection before the reply ended is
 * recorded in `aborted`, so tests can prove an abort reached the server.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { readParams, type UploadedFile } from "./fake-telegram/http-body.js";

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface FakeReply {
  /** The answer text; an array is sent as one chunk per element. */
  text?: string | string[];
  /** Reasoning chunks, sent as `delta.reasoning_content` before the text. */
  reasoning?: string[];
  /** Tool calls; arguments are streamed in several fragments. Ids default to `call_fake_<req>_<n>`. */
  toolCalls?: { id?: string; name: string; arguments: string }[];
  /** Defaults to "tool_calls" when there are tool calls, else "stop"; null sends no finish reason. */
  finishReason?: "stop" | "tool_calls" | "length" | null;
  /** Reported when the request asks for usage (or always, without streaming). Estimated if absent. */
  usage?: FakeUsage;
  /** An HTTP status ≥ 400 answers with `errorBody` (an OpenAI-shaped error by default). */
  status?: number;
  errorBody?: unknown;
  /** Extra response headers (e.g. `retry-after`). */
  headers?: Record<string, string>;
  /** Delay before each streamed chunk. */
  chunkDelayMs?: number;
  /** Send only this many SSE events, then keep the connection open without a word. */
  hangAfterChunks?: number;
  /** Send only this many SSE events (flushed), then destroy the connection (a server or proxy dying). */
  dropAfterChunks?: number;
}

/** A parsed JSON request body: arbitrary JSON that tests inspect freely. */
// biome-ignore lint/suspicious/noExplicitAny: arbitrary JSON, read by tests without ceremony
export type FakeBody = any;

export type FakeHandler = (request: { body: FakeBody; index: number }) => FakeReply | Promise<FakeReply>;

export interface FakeOpenAI {
  /** `http://127.0.0.1:<port>/v1` */
  readonly baseURL: string;
  /** Parsed bodies of every chat-completions request, in arrival order (aborted ones included). */
  readonly requests: FakeBody[];
  /** Indexes (into `requests`) whose client closed the connection before the reply ended. */
  readonly aborted: number[];
  /** Resolves once the request with this index has been aborted by its client. */
  waitForAbort(index: number): Promise<void>;
  setHandler(handler: FakeHandler): void;
  /** Every transcription request: the model, the uploaded file's name and bytes. */
  readonly transcriptions: { model: string; filename: string; content: Buffer }[];
  /** What a transcription request is answered with (default: "transcript of <filename>"). */
  setTranscript(answer: (file: { filename: string; content: Buffer }) => string): void;
  /** Stop listening and cut open connections; calling it again is a no-op. */
  close(): Promise<void>;
}

const MODEL_ID = "fake-model";
/** Responses the fake itself cut off (`dropAfterChunks`), which are not client aborts. */
const droppedByServer = new WeakSet<ServerResponse>();

/** The default reply: a short answer quoting the last user message. */
export const echoHandler: FakeHandler = ({ body }) => {
  const messages: FakeBody[] = Array.isArray(body?.messages) ? body.messages : [];
  const lastUser = [...messages].reverse().find((m) => m?.role === "user");
  return { text: ["You said: ", `"${contentText(lastUser?.content)}"`] };
};

/** Start the fake on 127.0.0.1 with an OS-assigned port. */
export async function startFakeOpenAI(handler: FakeHandler = echoHandler): Promise<FakeOpenAI> {
  let current = handler;
  const requests: FakeBody[] = [];
  const aborted: number[] = [];
  const abortWaiters = new Map<number, Array<() => void>>();
  const transcriptions: { model: string; filename: string; content: Buffer }[] = [];
  let transcript = (file: { filename: string; content: Buffer }): string => `transcript of ${file.filename}`;

  const markAborted = (index: number): void => {
    aborted.push(index);
    for (const resolve of abortWaiters.get(index) ?? []) resolve();
    abortWaiters.delete(index);
  };

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, errorPayload(500, `fake handler failed: ${String(error)}`));
      else res.destroy();
    });
  });

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "").split("?")[0];
    if (req.method === "GET" && path === "/v1/models") {
      sendJson(res, 200, {
        object: "list",
        data: [{ id: MODEL_ID, object: "model", created: 0, owned_by: "fake" }],
      });
      return;
    }
    if (req.method === "POST" && path === "/v1/audio/transcriptions") {
      const form = await readParams(req, new URL(req.url ?? "/", "http://fake"));
      const file = form.file as UploadedFile | undefined;
      if (!file?.content) {
        sendJson(res, 400, errorPayload(400, "file is required"));
        return;
      }
      transcriptions.push({
        model: String(form.model ?? ""),
        filename: file.filename,
        content: file.content,
      });
      sendJson(res, 200, { text: transcript(file) });
      return;
    }
    if (req.method !== "POST" || path !== "/v1/chat/completions") {
      sendJson(res, 404, errorPayload(404, `no route for ${req.method} ${path}`));
      return;
    }
    let body: FakeBody;
    try {
      body = JSON.parse(await readBody(req));
    } catch (error) {
      sendJson(res, 400, errorPayload(400, `request body is not JSON: ${String(error)}`));
      return;
    }
    const index = requests.push(body) - 1;
    res.on("close", () => {
      if (!res.writableEnded && !droppedByServer.has(res)) markAborted(index);
    });
    const reply = await current({ body, index });
    if (reply.status !== undefined && reply.status >= 400) {
      sendJson(res, reply.status, reply.errorBody ?? errorPayload(reply.status), reply.headers);
      return;
    }
    const model = typeof body?.model === "string" ? body.model : MODEL_ID;
    if (body?.stream === true) {
      await streamReply(res, reply, { body, index, model });
    } else {
      sendJson(res, 200, completion(reply, { body, index, model }), reply.headers);
    }
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    aborted,
    waitForAbort(index) {
      if (aborted.includes(index)) return Promise.resolve();
      return new Promise((resolve) => abortWaiters.set(index, [...(abortWaiters.get(index) ?? []), resolve]));
    },
    setHandler(next) {
      current = next;
    },
    transcriptions,
    setTranscript(answer) {
      transcript = answer;
    },
    close() {
      if (!server.listening) return Promise.resolve();
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

interface ReplyContext {
  readonly body: FakeBody;
  readonly index: number;
  readonly model: string;
}

async function streamReply(res: ServerResponse, reply: FakeReply, ctx: ReplyContext): Promise<void> {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
    ...reply.headers,
  });
  res.flushHeaders();
  const events = [...streamChunks(reply, ctx).map((c) => JSON.stringify(c)), "[DONE]"];
  for (const [i, data] of events.entries()) {
    if (i === reply.dropAfterChunks) {
      droppedByServer.add(res);
      res.destroy();
      return;
    }
    if (i === reply.hangAfterChunks) return; // leave the connection open until the client or close() ends it
    if (reply.chunkDelayMs) await delay(reply.chunkDelayMs);
    if (res.destroyed) return;
    await new Promise<void>((resolve) => res.write(`data: ${data}\n\n`, () => resolve()));
  }
  res.end();
}

function streamChunks(reply: FakeReply, ctx: ReplyContext): object[] {
  const base = {
    id: `chatcmpl-fake-${ctx.index}`,
    object: "chat.completion.chunk",
    created: 0,
    model: ctx.model,
  };
  const chunk = (delta: object, finishReason: string | null = null): object => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  });
  const chunks: object[] = [chunk({ role: "assistant", content: "" })];
  for (const piece of reply.reasoning ?? []) chunks.push(chunk({ reasoning_content: piece }));
  for (const piece of textPieces(reply.text)) chunks.push(chunk({ content: piece }));
  toolCallsOf(reply, ctx.index).forEach((call, index) => {
    chunks.push(
      chunk({
        tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }],
      }),
    );
    for (const fragment of splitFragments(call.arguments)) {
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: fragment } }] }));
    }
  });
  const finishReason = finishReasonOf(reply);
  if (finishReason !== null) chunks.push(chunk({}, finishReason));
  if (ctx.body?.stream_options?.include_usage === true) {
    chunks.push({ ...base, choices: [], usage: usageOf(reply, ctx.body) });
  }
  return chunks;
}

function completion(reply: FakeReply, ctx: ReplyContext): object {
  const text = textPieces(reply.text).join("");
  const toolCalls = toolCallsOf(reply, ctx.index);
  const message: Record<string, unknown> = { role: "assistant", content: text === "" ? null : text };
  if (reply.reasoning) message.reasoning_content = reply.reasoning.join("");
  if (toolCalls.length > 0) {
    message.tool_calls = toolCalls.map((c) => ({
      id: c.id,
      type: "function",
      function: { name: c.name, arguments: c.arguments },
    }));
  }
  return {
    id: `chatcmpl-fake-${ctx.index}`,
    object: "chat.completion",
    created: 0,
    model: ctx.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReasonOf(reply) }],
    usage: usageOf(reply, ctx.body),
  };
}

function toolCallsOf(
  reply: FakeReply,
  requestIndex: number,
): { id: string; name: string; arguments: string }[] {
  return (reply.toolCalls ?? []).map((c, n) => ({ ...c, id: c.id ?? `call_fake_${requestIndex}_${n}` }));
}

function finishReasonOf(reply: FakeReply): string | null {
  if (reply.finishReason !== undefined) return reply.finishReason;
  return reply.toolCalls && reply.toolCalls.length > 0 ? "tool_calls" : "stop";
}

function textPieces(text: string | string[] | undefined): string[] {
  if (text === undefined) return [];
  return typeof text === "string" ? [text] : text;
}

/** Split argument text into up to three fragments, as real servers do mid-token. */
function splitFragments(text: string): string[] {
  if (text.length < 3) return [text];
  const a = Math.floor(text.length / 3);
  const b = Math.floor((2 * text.length) / 3);
  return [text.slice(0, a), text.slice(a, b), text.slice(b)];
}

function usageOf(reply: FakeReply, body: FakeBody): FakeUsage {
  if (reply.usage) return reply.usage;
  const prompt = Math.ceil(JSON.stringify(body?.messages ?? []).length / 4);
  const output = [
    ...textPieces(reply.text),
    ...(reply.reasoning ?? []),
    ...(reply.toolCalls ?? []).map((c) => c.arguments),
  ];
  const completionTokens = Math.ceil(output.join("").length / 4);
  return {
    prompt_tokens: prompt,
    completion_tokens: completionTokens,
    total_tokens: prompt + completionTokens,
  };
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((p) => (typeof p?.text === "string" ? p.text : "")).join("");
  }
  return "";
}

function errorPayload(status: number, message = `fake error ${status}`): object {
  const type = status === 429 ? "rate_limit_error" : status >= 500 ? "server_error" : "invalid_request_error";
  return { error: { message, type, param: null, code: null } };
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers?: Record<string, string>,
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
