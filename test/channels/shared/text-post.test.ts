/**
 * postText against a real local server: it sends the body with its length, reads the whole answer
 * (status, repeated headers, body), reuses one connection, and rejects — never hangs — when the
 * call is aborted before or while waiting, the connection drops mid-answer, or the answer is
 * endless.
 */
import type { ServerResponse } from "node:http";
import { inspect } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_ANSWER_BYTES, postText } from "../../../src/channels/shared/text-post.js";
import {
  type RecordedRequest,
  type RecordingHttpServer,
  startRecordingHttpServer,
} from "../../support/recording-http-server.js";

let server: RecordingHttpServer;
let url: string;
let received: RecordedRequest[];

function answer(request: RecordedRequest, response: ServerResponse): void {
  if (request.path === "/hang") return;
  if (request.path?.startsWith("/cut")) {
    response.writeHead(200, { "content-type": "application/json", "content-length": "100" });
    response.write('{"ok":');
    setTimeout(() => request.socket.destroy(), 20);
    return;
  }
  if (request.path === "/pieces") {
    response.writeHead(200, { "content-type": "application/json" });
    response.write('{"ok":true,');
    setTimeout(() => response.end(`"result":"${"é".repeat(50_000)}"}`), 20);
    return;
  }
  if (request.path === "/endless") {
    response.writeHead(200, { "content-type": "application/json" });
    const chunk = Buffer.alloc(1_048_576, "x");
    const more = () => {
      while (!response.destroyed && response.write(chunk));
      if (!response.destroyed) response.once("drain", more);
    };
    more();
    return;
  }
  if (request.path?.startsWith("/html")) {
    response.writeHead(502, { "content-type": "text/html" });
    response.end("<html>Bad Gateway</html>");
    return;
  }
  response.writeHead(200, [
    ["content-type", "application/json"],
    ["set-cookie", "a=1"],
    ["set-cookie", "b=2"],
  ]);
  response.end(JSON.stringify({ ok: true, result: { echoed: request.body } }));
}

beforeEach(async () => {
  server = await startRecordingHttpServer(answer);
  ({ url, received } = server);
});

afterEach(() => server.close());

describe("postText", () => {
  it("posts the body with its headers and length, and hands back the whole answer", async () => {
    const body = JSON.stringify({ text: "héllo 👋" });
    const response = await postText(`${url}/call`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    expect(received[0]?.method).toBe("POST");
    expect(received[0]?.headers["content-type"]).toBe("application/json");
    expect(received[0]?.headers["content-length"]).toBe(String(Buffer.byteLength(body)));
    expect(received[0]?.body).toBe(body);
    expect(response.status).toBe(200);
    // No URL on the answer: a parse error would quote it, and a Bot API URL holds the token.
    expect(response.url).toBe("");
    expect(response.ok).toBe(true);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(await response.json()).toEqual({ ok: true, result: { echoed: body } });
    expect(await response.text()).toBe(JSON.stringify({ ok: true, result: { echoed: body } }));
    expect(new TextDecoder().decode(await response.arrayBuffer())).toBe(await response.text());
  });

  it("takes headers given as a Headers object", async () => {
    await postText(`${url}/call`, { headers: new Headers({ "x-token": "t" }), body: "a=1" });
    expect(received[0]?.headers["x-token"]).toBe("t");
  });

  it("posts each URL to its own path and query, the same URL again to the same", async () => {
    for (const path of ["/a", "/b?x=1", "/a", "/b?x=2", "/a"])
      await postText(`${url}${path}`, { body: "{}" });
    expect(received.map((r) => r.path)).toEqual(["/a", "/b?x=1", "/a", "/b?x=2", "/a"]);
  });

  it("posts to each of more URLs than it keeps parsed, and to the first again, at its own path", async () => {
    const paths = Array.from({ length: 1_005 }, (_, i) => `/u${i}`);
    for (const path of [...paths, "/u0"]) await postText(`${url}${path}`, { body: "{}" });
    expect(received.map((r) => r.path)).toEqual([...paths, "/u0"]);
  });

  it("hands back an answer that came in several pieces whole", async () => {
    const response = await postText(`${url}/pieces`, { body: "{}" });
    expect(await response.json()).toEqual({ ok: true, result: "é".repeat(50_000) });
  });

  it("keeps the connection for the next call", async () => {
    for (let i = 0; i < 3; i++) await (await postText(`${url}/call`, { body: "{}" })).json();
    expect(new Set(received.map((r) => r.socket)).size).toBe(1);
  });

  it("sends the Host, and Basic credentials given in the URL", async () => {
    await postText(`${url}/call`, { body: "{}" });
    await postText(url.replace("http://", "http://us%20er:p%40ss@") + "/call", { body: "{}" });
    expect(received[0]?.headers.host).toBe(new URL(url).host);
    expect(received[0]?.headers.authorization).toBeUndefined();
    expect(received[1]?.headers.authorization).toBe(`Basic ${Buffer.from("us er:p@ss").toString("base64")}`);
  });

  it("sends a caller's own Host and Authorization instead of the URL's, and the body's length instead of theirs", async () => {
    const credentialed = `${url.replace("http://", "http://user:pw@")}/call`;
    const headers = { Host: "api.example", Authorization: "Bearer t", "Content-Length": "999" };
    await postText(credentialed, { headers, body: "{}" });
    await postText(credentialed, { headers: new Headers(headers), body: "{}" });
    // A frozen object is merged once per URL: its Host and Authorization still win, every time.
    for (let i = 0; i < 2; i++) await postText(credentialed, { headers: Object.freeze(headers), body: "{}" });
    for (const request of received) {
      expect(request.headers.host).toBe("api.example");
      expect(request.headers.authorization).toBe("Bearer t");
      expect(request.headers["content-length"]).toBe("2");
      expect(request.body).toBe("{}");
    }
    expect(received).toHaveLength(4);
  });

  it("sends a frozen headers object with each URL's own Host and credentials, and each body's length", async () => {
    const headers = Object.freeze({ "content-type": "application/json" });
    const credentialed = `${url.replace("http://", "http://user:pw@")}/call`;
    await postText(`${url}/call`, { headers, body: "{}" });
    await postText(credentialed, { headers, body: '{"a":1}' });
    await postText(`${url}/call`, { headers, body: "[1]" });
    expect(received.map((r) => r.headers.authorization)).toEqual([
      undefined,
      `Basic ${Buffer.from("user:pw").toString("base64")}`,
      undefined,
    ]);
    expect(received.map((r) => r.headers["content-length"])).toEqual(["2", "7", "3"]);
    expect(received.map((r) => r.headers["content-type"])).toEqual(Array(3).fill("application/json"));
    expect(received.every((r) => r.headers.host === new URL(url).host)).toBe(true);
  });

  it("reads a frozen Headers again at every call: it can still change", async () => {
    const headers = Object.freeze(new Headers({ "x-token": "a" }));
    await postText(`${url}/call`, { headers, body: "{}" });
    headers.set("x-token", "b");
    await postText(`${url}/call`, { headers, body: "{}" });
    expect(received.map((r) => r.headers["x-token"])).toEqual(["a", "b"]);
  });

  it("rejects a header that would break the request's head, or has no value, sending nothing", async () => {
    const headers = { "x-note": "a\r\nx-injected: 1" };
    await expect(postText(`${url}/call`, { headers, body: "{}" })).rejects.toMatchObject({
      code: "ERR_INVALID_CHAR",
    });
    await expect(
      postText(`${url}/call`, { headers: { "x-note": undefined }, body: "{}" }),
    ).rejects.toMatchObject({
      code: "ERR_HTTP_INVALID_HEADER_VALUE",
    });
    // A frozen object is checked at every call, not only when first merged.
    for (let i = 0; i < 2; i++)
      await expect(
        postText(`${url}/call`, { headers: Object.freeze(headers), body: "{}" }),
      ).rejects.toMatchObject({
        code: "ERR_INVALID_CHAR",
      });
    expect(received).toEqual([]);
  });

  it("does not fail a call on a kept connection the server closed while it was idle", async () => {
    await postText(`${url}/call`, { body: "{}" });
    const first = received[0]?.socket;
    first?.end();
    await new Promise((resolve) => first?.once("close", resolve));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const again = await postText(`${url}/call`, { body: "{}" });
    expect(again.status).toBe(200);
    expect(received[1]?.socket).not.toBe(first);
  });

  it("hands back an answer that is not JSON as it is, and its json() rejects without quoting the URL", async () => {
    const response = await postText(`${url}/html/bot123:SECRET/sendMessage`, { body: "{}" });
    expect(response.status).toBe(502);
    expect(response.ok).toBe(false);
    const failure = await response.json().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(SyntaxError);
    expect((failure as Error).message).not.toContain("SECRET");
  });

  it("rejects a URL that is not http(s), or not a URL, without quoting it", async () => {
    for (const bad of ["ftp://127.0.0.1/bot123:SECRET/getMe", "not a url /bot123:SECRET/getMe"]) {
      const failure = await postText(bad, { body: "{}" }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(TypeError);
      expect(`${(failure as Error).message} ${JSON.stringify(failure)}`).not.toContain("SECRET");
    }
    expect(received).toEqual([]);
  });

  it("rejects a call aborted while it waits, and one aborted before it starts", async () => {
    const controller = new AbortController();
    const call = postText(`${url}/hang`, { body: "{}", signal: controller.signal });
    await expect.poll(() => received.length).toBe(1);
    controller.abort();
    await expect(call).rejects.toMatchObject({ name: "AbortError" });
    await expect(postText(`${url}/call`, { body: "{}", signal: controller.signal })).rejects.toMatchObject({
      name: "AbortError",
    });
    expect(received).toHaveLength(1);
  });

  it("gives up after timeoutMs, and a call that settles in time leaves no timer behind", async () => {
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;
    await expect(postText(`${url}/hang`, { body: "{}", timeoutMs: 50 })).rejects.toMatchObject({
      name: "TimeoutError",
    });
    const before = timers();
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => postText(`${url}/call`, { body: "{}", timeoutMs: 60_000 })),
    );
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    expect(timers()).toBe(before);
  });

  it("rejects when the connection drops before the answer ends", async () => {
    await expect(postText(`${url}/cut`, { body: "{}" })).rejects.toThrow();
  });

  it("gives up on an answer past MAX_ANSWER_BYTES instead of holding it all", async () => {
    await expect(postText(`${url}/endless`, { body: "{}" })).rejects.toThrow(
      `the answer is over ${MAX_ANSWER_BYTES} bytes`,
    );
  });

  it("never quotes the URL when the connection drops or nothing listens", async () => {
    const secret = (path: string) => `${url}/${path}/bot123:SECRET/sendMessage`;
    const cut = await postText(secret("cut"), { body: "{}" }).then(
      () => undefined,
      (error: unknown) => error,
    );
    await server.close();
    const refused = await postText(secret("call"), { body: "{}" }).then(
      () => undefined,
      (error: unknown) => error,
    );
    for (const failure of [cut, refused]) {
      expect(failure).toBeInstanceOf(Error);
      expect(`${String(failure)} ${inspect(failure, { depth: 5 })}`).not.toContain("SECRET");
    }
  });

  it("rejects with the network's error code when nothing listens", async () => {
    await server.close();
    await expect(postText(`${url}/call`, { body: "{}" })).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });
});
