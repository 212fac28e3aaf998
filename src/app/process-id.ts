/**
 * Process id: the name one Coworker process goes by among several sharing a store — in its
 * session leases and control channel, its logs and the `process` label of its metrics. Host name
 * (a container's own in a replica set), pid and a random tail, so a restarted process is new.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";

/** This process's id: `<host>-<pid>-<random>` ("/" never appears: lease tokens use it). */
export function newProcessId(): string {
  return `${hostname().replaceAll("/", "-")}-${process.pid}-${randomBytes(3).toString("hex")}`;
}
