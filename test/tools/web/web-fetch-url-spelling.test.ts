/**
 * web_fetch's url is judged as the URL parser reads it. The parser drops tabs and line breaks
 * anywhere and decodes a host's percent-escapes, so a spelling such as "https://docs.company.com
 * <line breaks>.evil.example/" is a fetch of docs.company.com.evil.example: the card, the
 * hard-deny patterns and the domain a grant names must all see that URL, never the spelling.
 */
import { describe, expect, it } from "vitest";
import { GrantSet } from "../../../src/engine/permissions/grants.js";
import { PermissionEngine } from "../../../src/engine/permissions/permission-engine.js";
import { createWebFetchTool } from "../../../src/tools/web/web-fetch.js";
import { makeContext } from "../support/tool-context.js";
import { toolWorkspace } from "../support/tool-workspace.js";

const webFetch = () => createWebFetchTool({ workspace: toolWorkspace({ root: "/nonexistent-ws" }) });

/** The arguments as the registry hands them on: parsed by the tool's schema. */
const parsed = (url: string) => webFetch().inputSchema.parse({ url });

describe("web_fetch's url as the parser reads it", () => {
  it("shows the card the URL that is fetched, not a spelling split over lines", async () => {
    const tool = webFetch();
    const args = parsed("https://docs.company.com\n\n\n\n.evil.example/report");
    const preview = await tool.preview?.(args, makeContext());
    expect(preview?.detail).toEqual({ kind: "url", text: "https://docs.company.com.evil.example/report" });
  });

  it("is refused by a hard-deny pattern however the host is spelled", () => {
    const permissions = new PermissionEngine({
      allowedCommandPrefixes: [],
      hardDenyPatterns: ["pastebin\\.com"],
    });
    const decide = (url: string) =>
      permissions.decide(webFetch(), parsed(url), {
        mode: "auto",
        grants: new GrantSet([]),
        facts: { downloadedFiles: new Set<string>() },
        provenance: { kind: "user" },
      }).action;
    expect(decide("https://pastebin.com/raw/x")).toBe("deny");
    expect(decide("https://paste\nbin.com/raw/x")).toBe("deny");
    expect(decide("https://paste\tbin%2ecom/raw/x")).toBe("deny");
    expect(decide("https://PASTEBIN%2Ecom/raw/x")).toBe("deny");
  });

  it("leaves a text that is no URL as written, for the call to refuse", () => {
    expect(parsed("not a url").url).toBe("not a url");
  });
});
