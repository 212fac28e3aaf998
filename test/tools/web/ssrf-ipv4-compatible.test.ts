/**
 * The SSRF guard refuses IPv4-compatible IPv6 addresses (::/96, deprecated): ipaddr.js calls them
 * unicast, yet ::7f00:1 is what the URL parser makes of http://[::127.0.0.1]/ and carries an
 * internal IPv4 address. Ordinary public IPv6 still passes; :: and ::1 keep their own refusals.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { addressRange, checkHost } from "../../../src/tools/web/ssrf-guard.js";
import { createWebFetchTool } from "../../../src/tools/web/web-fetch.js";
import { call, tempDir } from "../support/tool-context.js";
import { toolWorkspace } from "../support/tool-workspace.js";

let ws: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir: ws, cleanup } = await tempDir("web-v4compat-"));
});
afterEach(async () => {
  await cleanup();
});

const policy = { allowPrivate: false };
const refusal = /^refusing to fetch a deprecated IPv4-compatible IPv6 address/;

describe("IPv4-compatible IPv6 (::/96)", () => {
  it.each([
    ["::7f00:1", "ipv4Compatible"],
    ["::a9fe:a9fe", "ipv4Compatible"],
    ["::a00:1", "ipv4Compatible"],
    ["::808:808", "ipv4Compatible"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["2606:4700::1111", "unicast"],
  ])("%s is %s", (address, range) => {
    expect(addressRange(address)).toBe(range);
  });

  it("refuses them as literals and as a name's address; a public IPv6 address passes", async () => {
    await expect(checkHost("::7f00:1", 0, policy)).rejects.toThrow(refusal);
    await expect(checkHost("::a9fe:a9fe", 0, policy)).rejects.toThrow(refusal);
    await expect(checkHost("sneaky.test", 0, policy, async () => ["::7f00:1"])).rejects.toThrow(
      "refusing to fetch a deprecated IPv4-compatible IPv6 address (sneaky.test resolves to ::7f00:1)",
    );
    // A resolver may print it dotted (inet_ntop does); ipaddr.js reads that as IPv4-mapped, checked as IPv4.
    await expect(checkHost("dotted.test", 0, policy, async () => ["::127.0.0.1"])).rejects.toThrow(
      /^refusing to fetch a loopback address \(dotted\.test resolves to ::127\.0\.0\.1\)/,
    );
    await expect(checkHost("2606:4700::1111", 0, policy)).resolves.toEqual({
      address: "2606:4700::1111",
      family: 6,
    });
    await expect(checkHost("v6.test", 0, policy, async () => ["2606:4700::1111"])).resolves.toEqual({
      address: "2606:4700::1111",
      family: 6,
    });
    await expect(checkHost("::1", 0, policy)).rejects.toThrow(/^refusing to fetch a loopback address/);
    await expect(checkHost("::", 0, policy)).rejects.toThrow(/^refusing to fetch an unspecified address/);
  });

  it("web_fetch refuses such URLs without looking anything up or connecting", async () => {
    const asked: string[] = [];
    const tool = createWebFetchTool({
      workspace: toolWorkspace({ root: ws }),
      resolver: async (host) => {
        asked.push(host);
        return [];
      },
    });
    for (const url of [
      "http://[::127.0.0.1]/",
      "http://[::7f00:1]:8080/secret",
      "http://[::a9fe:a9fe]/latest/meta-data/",
    ]) {
      const result = await call(tool, { url });
      expect(result.ok, url).toBe(false);
      expect(result.output, url).toMatch(refusal);
    }
    expect(asked).toEqual([]);
  });
});
