/**
 * Test support: starts Debian's PostgreSQL server (`initdb` + `postgres`) in a fresh data folder on
 * a free loopback port for the store's contract tests, and stops it afterwards. PostgreSQL refuses
 * to run as root, so as root initdb and the server run as the `postgres` user the Debian package
 * creates (spawned with its uid and gid, so signals reach the server itself).
 * When the binaries are missing it throws a message saying how to install them, so a Postgres test
 * fails loudly rather than passing without Postgres.
 */
import { execFile, execFileSync } from "node:child_process";
import { accessSync, chownSync, constants, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll } from "vitest";
import { freePort, spawnServer, stopChild, waitUntil } from "./loopback-server.js";

/** A running PostgreSQL server owned by the test. */
export interface PostgresServer {
  /** `postgres://coworker@127.0.0.1:<port>/postgres` (trust authentication on loopback). */
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

const STARTUP_TIMEOUT_MS = 20_000;
/** initdb and the server's start took 17 s on a loaded host: the default hook bound (30 s) was too close. */
const SUITE_START_TIMEOUT_MS = 120_000;
const DEBIAN_BIN_ROOT = "/usr/lib/postgresql";

/** The folder holding `initdb` and `postgres`: on PATH, else Debian's newest versioned folder. */
export function findPostgresBin(): string | undefined {
  const candidates = (process.env.PATH ?? "").split(path.delimiter).filter((dir) => dir !== "");
  try {
    const versions = readdirSync(DEBIAN_BIN_ROOT).sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((version) => path.join(DEBIAN_BIN_ROOT, version, "bin")));
  } catch {
    // no Debian package folder
  }
  return candidates.find(
    (dir) => isExecutable(path.join(dir, "initdb")) && isExecutable(path.join(dir, "postgres")),
  );
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Initialise a throwaway cluster and start it on 127.0.0.1; resolves once it accepts connections. */
export async function startPostgresServer(): Promise<PostgresServer> {
  const bin = findPostgresBin();
  if (!bin) {
    throw new Error(
      "PostgreSQL is not installed, so the Postgres store contract tests cannot run. " +
        "Install it with `apt-get install -y postgresql` (Debian/Ubuntu) and run the tests again.",
    );
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), "coworker-postgres-"));
  const user: { uid?: number; gid?: number } = process.getuid?.() === 0 ? postgresUser() : {};
  if (user.uid !== undefined && user.gid !== undefined) chownSync(dir, user.uid, user.gid);
  const dataDir = path.join(dir, "data");
  await promisify(execFile)(
    path.join(bin, "initdb"),
    ["-D", dataDir, "-U", "coworker", "--auth=trust", "--no-sync", "-E", "UTF8"],
    { ...user, cwd: dir },
  );
  const port = await freePort();
  const settings = ["fsync=off", "synchronous_commit=off", "full_page_writes=off"].flatMap((s) => ["-c", s]);
  const child = spawnServer(
    path.join(bin, "postgres"),
    ["-D", dataDir, "-p", String(port), "-h", "127.0.0.1", "-k", dir, ...settings],
    { ...user, cwd: dir },
  );
  const stop = async (): Promise<void> => {
    await stopChild(child, "SIGINT");
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntil(
      () => child.output().includes("ready to accept connections"),
      child,
      STARTUP_TIMEOUT_MS,
      () => `postgres on port ${port}:\n${child.output()}`,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `postgres://coworker@127.0.0.1:${port}/postgres`, port, stop };
}

/** The uid and gid of Debian's `postgres` user. */
function postgresUser(): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
  return { uid: id("-u"), gid: id("-g") };
}

/**
 * A PostgreSQL server for the enclosing suite (a file, or the describe it is called in): started
 * before its tests and stopped after them. Read its `url` / `port` inside the tests.
 */
export function postgresForSuite(): PostgresServer {
  let server: PostgresServer | undefined;
  beforeAll(async () => {
    server = await startPostgresServer();
  }, SUITE_START_TIMEOUT_MS);
  afterAll(async () => {
    await server?.stop();
  });
  const running = (): PostgresServer => {
    if (!server) throw new Error("the suite's PostgreSQL server has not started");
    return server;
  };
  return {
    get url() {
      return running().url;
    },
    get port() {
      return running().port;
    },
    stop: () => running().stop(),
  };
}
