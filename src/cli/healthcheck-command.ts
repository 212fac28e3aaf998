/**
 * `coworker healthcheck`: the container's health probe. It finds the ops server the way `start`
 * does — the same config resolution (`--config`, COWORKER_CONFIG, config/coworker.yaml, `.env`,
 * then COWORKER_OPS_PORT and the other overrides) — so an `ops.port` set only in a mounted config
 * file is the port asked. It asks `/healthz` on that port (on loopback when the server listens on
 * every interface) and exits 0 when it answers 200, else 1 with one line saying why.
 */
import { loadConfig } from "../config/load-config.js";
import type { CoworkerConfig } from "../config/schema.js";
import { messageOf } from "../core/failure.js";
import type { CliIo } from "./cli-io.js";
import { probe } from "./http-probe.js";

/** How long the probe waits for `/healthz` (Docker's own timeout for it is 5 s). */
const PROBE_TIMEOUT_MS = 4_000;

/** The address a local probe reaches the ops server on: loopback for a wildcard listen address. */
function probeHost(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return host.includes(":") ? `[${host}]` : host;
}

/** Where `/healthz` is, or why there is nothing to ask. */
function healthzUrl(ops: CoworkerConfig["ops"]): URL | string {
  if (!ops.enabled) return "the ops server is off (ops.enabled: false): nothing to probe";
  if (ops.port === 0) return "ops.port is 0 (any free port): set a fixed port for the healthcheck to ask";
  return new URL(`http://${probeHost(ops.host)}:${ops.port}/healthz`);
}

/** Run `coworker healthcheck`; resolves with the exit code (0 healthy, 1 not). */
export async function healthcheckCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const loaded = loadConfig({ env: io.env, cwd: io.cwd, argv });
  if (!loaded.ok) {
    io.stderr.write(`unhealthy: the configuration does not load: ${loaded.problems.join("; ")}\n`);
    return 1;
  }
  const url = healthzUrl(loaded.config.ops);
  if (typeof url === "string") {
    io.stderr.write(`unhealthy: ${url}\n`);
    return 1;
  }
  try {
    const answer = await probe(fetch, url, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    if (answer.status === 200) {
      io.stdout.write(`healthy: ${url.href}\n`);
      return 0;
    }
    io.stderr.write(`unhealthy: ${url.href} answered ${answer.status} ${JSON.stringify(answer.body)}\n`);
    return 1;
  } catch (error) {
    io.stderr.write(`unhealthy: ${messageOf(error)}\n`);
    return 1;
  }
}
