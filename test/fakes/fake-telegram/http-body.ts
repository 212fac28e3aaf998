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

function dispositionValue(header: string, key: string): string | undefined {
  const match = new RegExp(`(?:^|;)\\s*${key}=(?:"([^"]*)"|([^;]*))`, "i").exec(header);
  return match ? (match[1] ?? match[2]?.trim()) : undefined;
}

/** A tolerant multipart/form-data parser (grammY writes `name=x;filename=y` without quotes or spaces). */
function parseMultipart(body: Buffer, contentType: string): Params {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  const delimiter = Buffer.from(`--${boundary?.[1] ?? boundary?.[2]?.trim() ?? ""}`);
  const params: Params = {};
  const files = new Map<string, UploadedFile>();
  let start = body.indexOf(delimiter);
  while (start !== -1) {
    const next = body.indexOf(delimiter, start + delimiter.length);
    if (next === -1) break;
    const part = body.subarray(start + delimiter.length + 2, next - 2);
    const split = part.indexOf("\r\n\r\n");
    const headers = part.subarray(0, split).toString("utf8");
    const content = part.subarray(split + 4);
    const disposition = /content-disposition:([^\r\n]*)/i.exec(headers)?.[1] ?? "";
    const name = dispositionValue(disposition, "name");
    const filename = dispositionValue(disposition, "filename");
    if (name !== undefined) {
      if (filename !== undefined)
        files.set(name, { filename, bytes: content.length, content: Buffer.from(content) });
      else params[name] = decodeField(content.toString("utf8"));
    }
    start = next;
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
    return { ...params, ...parseMultipart(body, contentType) };
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
