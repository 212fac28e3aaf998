/**
 * Request parsing for the fake Bot API: Bot API methods arrive as JSON, query strings or
 * multipart/form-data (uploads); multipart fields are JSON-decoded where they hold JSON and
 * `attach://name` references are resolved to the uploaded part.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

/** An uploaded file as the fake saw it. */
export interface UploadedFile {
  readonly filename: string;
  readonly bytes: number;
  readonly content: Buffer;
}

/** Bot API parameters: loosely typed JSON, checked by each method like Telegram does. */
// biome-ignore lint/suspicious/noExplicitAny: method handlers validate these fields one by one
export type Params = Record<string, any>;

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function decodeField(value: string): unknown {
  if (/^[[{]|^-?\d+$|^(true|false)$/.test(value)) {
    try {
      return JSON.parse(value);
    } catch {
      return value;
    }
  }
  return value;
}

async function parseMultipart(body: Buffer, contentType: string): Promise<Params> {
  const form = await new Request("http://fake.invalid/", {
    method: "POST",
    headers: { "content-type": contentType },
    body,
  }).formData();
  const params: Params = {};
  const files = new Map<string, UploadedFile>();
  for (const [key, value] of form.entries()) {
    if (typeof value === "string") {
      params[key] = decodeField(value);
    } else {
      const content = Buffer.from(await value.arrayBuffer());
      files.set(key, { filename: value.name, bytes: content.length, content });
    }
  }
  for (const [key, value] of Object.entries(params)) {
    if (typeof value === "string" && value.startsWith("attach://")) {
      params[key] = files.get(value.slice("attach://".length)) ?? value;
    }
  }
  for (const [key, file] of files) if (!(key in params)) params[key] = file;
  return params;
}

/** Parse a Bot API request's parameters from its query string and body. */
export async function readParams(request: IncomingMessage, url: URL): Promise<Params> {
  const params: Params = {};
  for (const [key, value] of url.searchParams) params[key] = decodeField(value);
  if (request.method !== "POST") return params;
  const body = await readBody(request);
  if (body.length === 0) return params;
  const contentType = request.headers["content-type"] ?? "";
  if (contentType.startsWith("multipart/form-data"))
    return { ...params, ...(await parseMultipart(body, contentType)) };
  if (contentType.startsWith("application/x-www-form-urlencoded")) {
    for (const [key, value] of new URLSearchParams(body.toString("utf8"))) params[key] = decodeField(value);
    return params;
  }
  return { ...params, ...(JSON.parse(body.toString("utf8")) as Params) };
}

/** Write a Bot API JSON envelope. */
export function respond(response: ServerResponse, status: number, payload: unknown): void {
  if (response.writableEnded || response.destroyed) return;
  const body = JSON.stringify(payload);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
  });
  response.end(body);
}
