/**
 * A plain HTTP server on loopback for the tests of our HTTP clients: it records every request
 * whole (method, path, headers, body, and which connection carried it), then lets the test's
 * `answer` reply — or not, or drop the connection.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** One request as the server read it. */
export interface RecordedRequest {
  readonly method: string | undefined;
  readonly path: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** The connection it came on (one object per TCP connection). */
  readonly socket: Socket;
}

/** A running recording server. */
export interface RecordingHttpServer {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  readonly url: string;
  readonly received: RecordedRequest[];
  close(): Promise<void>;
}

/** Start a server that records each request, then hands it to `answer`. */
export async function startRecordingHttpServer(
  answer: (request: RecordedRequest, response: ServerResponse) => void,
): Promise<RecordingHttpServer> {
  const received: RecordedRequest[] = [];
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const recorded = {
      method: request.method,
      path: request.url,
      headers: request.headers,
      body: Buffer.concat(chunks).toString(),
      socket: request.socket,
    };
    received.push(recorded);
    answer(recorded, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
