/**
 * Test support: starts Debian's `redis-server` on a free loopback port for contract tests and
 * stops it afterwards. When the binary is missing it throws a message saying how to install it,
 * so a Redis test fails loudly rather than passing without Redis.
 */
import { accessSync, constants, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { freePort, spawnServer, stopChild, waitUntil } from "./loopback-server.js";

/** A running redis-server owned by the test. */
export interface RedisServer {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

const STARTUP_TIMEOUT_MS = 10_000;

/** Absolute path of `redis-server` on PATH, or undefined. */
export function findRedisServer(): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (dir === "") continue;
    const candidate = path.join(dir, "redis-server");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

/** Start redis-server on 127.0.0.1 with persistence off; resolves once it answers PING. */
export async function startRedisServer(): Promise<RedisServer> {
  const binary = findRedisServer();
  if (!binary) {
    throw new Error(
      "redis-server is not installed, so the Redis store contract tests cannot run. " +
        "Install it with `apt-get install -y redis-server` (Debian/Ubuntu) and run the tests again.",
    );
  }
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), "coworker-redis-"));
  const child = spawnServer(binary, [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
    "--dir",
    dir,
  ]);
  const stop = async (): Promise<void> => {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntil(
      () => pingOnce(port),
      child,
      STARTUP_TIMEOUT_MS,
      () => `redis-server on port ${port}:\n${child.output()}`,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `redis://127.0.0.1:${port}`, port, stop };
}

/** One PING on a fresh connection: true when the answer is +PONG. */
function pingOnce(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    let reply = "";
    socket.setTimeout(1_000, () => socket.destroy(new Error("PING timed out")));
    socket.once("error", reject);
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk) => {
      reply += chunk.toString();
      if (reply.includes("\r\n")) {
        socket.end();
        resolve(reply.startsWith("+PONG"));
      }
    });
  });
}
