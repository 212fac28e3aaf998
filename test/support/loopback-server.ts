/**
 * Test support shared by the servers the tests start themselves (redis-server, PostgreSQL): a free
 * loopback port, waiting for a child to become ready (or fail early), and stopping it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import net from "node:net";

/** A port that was free a moment ago: bind port 0 on loopback, read it, release it. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A spawned server child that keeps what it printed (stdout and stderr), for error messages. */
export type ServerChild = ChildProcess & { output(): string };

/** Spawn a server with stdin closed, collecting its output. */
export function spawnServer(
  command: string,
  args: readonly string[],
  options: { uid?: number; gid?: number; cwd?: string } = {},
): ServerChild {
  const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  return Object.assign(child, { output: () => output });
}

/**
 * Poll `ready` (sync or async) every 25 ms until it holds; fail when `child` exits first or the
 * timeout passes, with `describe()` (the child's output so far) in the message.
 */
export async function waitUntil(
  ready: () => boolean | Promise<boolean>,
  child: ChildProcess,
  timeoutMs: number,
  describe: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`exited early (code ${child.exitCode}, signal ${child.signalCode}): ${describe()}`);
    }
    try {
      if (await ready()) return;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`not ready within ${timeoutMs} ms (${String(lastError ?? "no answer")}): ${describe()}`);
}

/** Stop a child with `signal` and wait for it to exit; a child that already exited is left alone. */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill(signal);
  await exited;
}
