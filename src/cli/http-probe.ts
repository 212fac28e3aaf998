/**
 * A small JSON HTTP client for doctor probes: one request with an abort signal, the status,
 * headers and parsed body, and network failures described without the URL (which can carry a
 * Telegram token).
 */

export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

export interface ProbeResponse {
  readonly status: number;
  readonly headers: Headers;
  /** Parsed JSON, or undefined when the body was not JSON. */
  readonly body: unknown;
}

/** Thrown when the server could not be reached at all. */
export class ProbeNetworkError extends Error {}

function networkReason(error: unknown): string {
  const cause = error instanceof Error ? (error as Error & { cause?: unknown }).cause : undefined;
  const code =
    cause instanceof Error ? ((cause as Error & { code?: string }).code ?? cause.message) : undefined;
  if (error instanceof Error && error.name === "AbortError") return "timed out";
  return code ?? (error instanceof Error ? error.message : String(error));
}

/** Send one request and parse its JSON answer. */
export async function probe(fetchImpl: FetchLike, url: URL, init: RequestInit): Promise<ProbeResponse> {
  let response: Response;
  try {
    response = await fetchImpl(url, init);
  } catch (error) {
    throw new ProbeNetworkError(`cannot reach ${url.origin}: ${networkReason(error)}`);
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, body };
}
