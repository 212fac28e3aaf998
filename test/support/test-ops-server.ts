/**
 * An ops server for tests: on loopback, on the port given (a free one by default), with fresh
 * metrics and readiness and a silent logger unless the test passes its own; the tests of the ops
 * server and of `coworker healthcheck` start theirs this way.
 */
import { createLogger } from "../../src/logging/logger.js";
import { createMetrics } from "../../src/ops/metrics.js";
import { type OpsServer, type OpsServerOptions, startOpsServer } from "../../src/ops/ops-server.js";
import { Readiness } from "../../src/ops/readiness.js";

/** Starts an ops server on 127.0.0.1; `options` replaces any of the defaults. */
export function startTestOpsServer(options: Partial<OpsServerOptions> = {}): Promise<OpsServer> {
  return startOpsServer({
    host: "127.0.0.1",
    port: 0,
    metrics: createMetrics({ processMetrics: false }),
    readiness: new Readiness(),
    logger: createLogger({ level: "silent" }),
    ...options,
  });
}
