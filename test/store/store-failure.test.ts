/** Store failures are told apart: unreachable server, rejected credentials, misconfigured directory. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createStore } from "../../src/store/create-store.js";
import { storeFailure } from "../../src/store/store-failure.js";

function withCode(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

describe("storeFailure", () => {
  it("calls a refused Redis connection unreachable, with the server fix", () => {
    const cause = withCode("connect ECONNREFUSED 127.0.0.1:6390", "ECONNREFUSED");
    const failure = storeFailure(
      new Error("cannot connect to the Redis store at redis://127.0.0.1:6390/0", { cause }),
      true,
      "/data",
    );
    expect(failure.kind).toBe("unreachable");
    expect(failure.fix).toContain("start the Redis / Postgres server");
  });

  it("tells a Postgres table locked by another client apart from a server that is down", () => {
    for (const code of ["55P03", "57014"]) {
      const cause = withCode("canceling statement due to lock timeout", code);
      const failure = storeFailure(
        new Error("cannot reach the Postgres store at postgres://127.0.0.1:5432/coworker: lock timeout", {
          cause,
        }),
        true,
        "/data",
      );
      expect(failure.retryable).toBe(true);
      expect(failure.fix).toContain("another client holds a lock on the store's table");
      expect(failure.fix).not.toContain("start the Redis / Postgres server");
    }
  });

  it("calls a wrong password rejected", () => {
    const failure = storeFailure(new Error("WRONGPASS invalid username-password pair"), true, "/data");
    expect(failure.kind).toBe("rejected");
    expect(failure.line()).toContain("the store rejected the credentials");
  });

  it("calls a data directory that cannot be created misconfigured, naming the directory", async () => {
    const dir = mkdtempSync(join(tmpdir(), "coworker-store-failure-"));
    const file = join(dir, "not-a-dir");
    writeFileSync(file, "");
    const dataDir = join(file, "data");
    const error = await createStore({ dataDir }).catch((caught: unknown) => caught);
    const failure = storeFailure(error, false, dataDir);
    expect(failure.kind).toBe("misconfigured");
    expect(failure.fix).toContain(`make ${dataDir} writable`);
    expect(failure.retryable).toBe(false);
  });
});
