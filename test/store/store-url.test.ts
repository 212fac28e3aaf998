/** Store URL selection and credential-free descriptions. */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { describeStoreTarget, resolveStoreTarget } from "../../src/store/store-url.js";

describe("resolveStoreTarget", () => {
  it("defaults to <dataDir>/coworker.sqlite (absolute) when no URL or a blank one is given", () => {
    const expected = { kind: "sqlite", file: path.resolve("data", "coworker.sqlite") };
    expect(resolveStoreTarget(undefined, "data")).toEqual(expected);
    expect(resolveStoreTarget("   ", "./data")).toEqual(expected);
  });

  it.each([
    ["memory:", "memory"],
    ["redis://localhost:6379", "redis"],
    ["rediss://cache.example:6380/2", "redis"],
    ["REDIS://localhost", "redis"],
    ["postgres://db.example/coworker", "postgres"],
    ["postgresql://db.example:5433/coworker", "postgres"],
  ])("%s selects %s", (url, kind) => {
    expect(resolveStoreTarget(url, "/d").kind).toBe(kind);
  });

  it("rejects an unknown scheme, listing the supported ones, without echoing the URL", () => {
    const attempt = () => resolveStoreTarget("mysql://root:hunter2@db/coworker", "/d");
    expect(attempt).toThrow(
      'unsupported store URL scheme "mysql:"; supported: redis://…, rediss://…, postgres://…, postgresql://…, memory: — or no URL for the embedded SQLite file in the data dir',
    );
    expect(attempt).not.toThrow(/hunter2/);
    expect(() => resolveStoreTarget("/var/lib/coworker.sqlite", "/d")).toThrow(
      /has no scheme; supported: redis:\/\//,
    );
  });

  it("rejects a supported scheme with an unparsable URL", () => {
    expect(() => resolveStoreTarget("redis://user:pa ss@[bad", "/d")).toThrow(
      'store URL with scheme "redis:" is not a valid URL',
    );
  });
});

describe("describeStoreTarget", () => {
  it.each([
    ["redis://:s3cret@cache.internal:6379/1", "redis://cache.internal:6379/1"],
    ["rediss://default:s3cret@cache.internal", "rediss://cache.internal"],
    [
      "postgres://bot:s3cret@db.internal:5432/coworker?sslmode=require&password=s3cret",
      "postgres://db.internal:5432/coworker",
    ],
    ["postgresql://bot@db.internal/coworker", "postgresql://db.internal/coworker"],
  ])("%s is described as %s", (url, description) => {
    expect(describeStoreTarget(resolveStoreTarget(url, "/d"))).toBe(description);
  });

  it("names the SQLite file and the memory store", () => {
    expect(describeStoreTarget(resolveStoreTarget(undefined, "/srv/coworker"))).toBe(
      "sqlite:/srv/coworker/coworker.sqlite",
    );
    expect(describeStoreTarget(resolveStoreTarget("memory:", "/d"))).toBe("memory:");
  });
});
