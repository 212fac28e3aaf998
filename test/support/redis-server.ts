/**
 * Test support: starts Debian's `redis-server` on a free loopback port for contract tests and
 * stops it afterwards. When the binary is missing it throws a message saying how to install it,
 * so a Redis test fails loudly rather than passing without Redis.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

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
  const child = spawn(
    binary,
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<never>((_, reject) => {
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      reject(new Error(`redis-server exited early (code ${code}, signal ${signal}):\n${output}`));
    });
  });
  exited.catch(() => undefined);
  const stop = async (): Promise<void> => {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.race([waitForPong(port), exited]);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `redis://127.0.0.1:${port}`, port, stop };
}

/** A port that was free a moment ago: bind port 0 on loopback, read it, release it. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Retry PING until the server answers +PONG or the startup deadline passes. */
async function waitForPong(port: number): Promise<void> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      if (await pingOnce(port)) return;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(
    `redis-server on port ${port} did not answer PING within ${STARTUP_TIMEOUT_MS} ms: ${lastError}`,
  );
}

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

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  await exited;
}
