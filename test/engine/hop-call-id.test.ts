/**
 * A hop's card (a redirect to another host, asked under `<call id>~<hop>`) is the person's answer
 * for that hop alone: a model that names a later call after the hop's card must be asked again,
 * not handed the hop's "once" approval. Call ids with "~" are re-issued (history-calls.ts).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ToolRegistry } from "../../src/tools/registry.js";
import { interactiveTools } from "../../src/tools/interactive-tools.js";
import { createWebFetchTool } from "../../src/tools/web/web-fetch.js";
import { RecordingOutputs } from "../support/recording-output.js";
import { cardPress } from "../support/card-press.js";
import { ScriptedProvider, textStep, toolStep } from "../support/scripted-provider.js";
import { buildSessionManager, engineFactory } from "../support/session-stack.js";
import { toolWorkspace } from "../tools/support/tool-workspace.js";
import { ANA, message, openStore, tempDir, thread } from "../sessions/helpers/harness.js";

let server: Server | undefined;
afterEach(() => server?.close());

describe("a redirect hop's approval", () => {
  it("is not replayed for a later call the model names after the hop's card", async () => {
    const hits: string[] = [];
    server = createServer((req, res) => {
      hits.push(`${req.headers.host}${req.url}`);
      if (req.url === "/start") {
        res.writeHead(302, {
          location: `http://localhost:${(server!.address() as AddressInfo).port}/trigger`,
        });
        res.end();
      } else {
        res.writeHead(200, { "content-type": "text/plain" });
        res.end("triggered");
      }
    });
    await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    const dataDir = tempDir();
    const registry = new ToolRegistry();
    for (const t of interactiveTools) registry.register(t);
    registry.register(
      createWebFetchTool({
        workspace: toolWorkspace({ root: dataDir }),
        allowPrivate: true,
        resolver: async () => ["127.0.0.1"],
      }),
    );
    const hopUrl = `http://localhost:${port}/trigger`;
    const provider = new ScriptedProvider([
      toolStep(["c1", "web_fetch", { url: `http://127.0.0.1:${port}/start` }]),
      // Prompt-injected model: replays the hop under the hop card's own id.
      toolStep(["c1~redirect-1", "web_fetch", { url: hopUrl }]),
      textStep("done"),
    ]);
    const store = await openStore();
    const manager = buildSessionManager({
      store,
      createEngine: engineFactory(provider, registry),
      dataDir,
      model: "m",
      provider: "scripted",
      maxSessionsInMemory: 10,
    });
    const outputs = new RecordingOutputs();
    manager.registerOutput("slack", outputs.factory);
    const out = outputs.for(thread());
    const press = (pendingId: string) => manager.press(cardPress(thread(), pendingId, "once", ANA));

    await manager.receive(message("fetch it"));
    const first = await outputs.until(
      () => out.latestCards.find((c) => c.kind === "approval" && c.buttons.length > 0),
      "first card",
    );
    await press(first.pendingId);
    const second = await outputs.until(
      () =>
        out.latestCards.find(
          (c) => c.kind === "approval" && c.buttons.length > 0 && c.pendingId !== first.pendingId,
        ),
      "hop card",
    );
    await press(second.pendingId); // "once": the person approves the redirect hop one time
    // The model's replay under the hop card's id is a new call, with a card of its own.
    const third = await outputs.until(
      () =>
        out.latestCards.find(
          (c) =>
            c.kind === "approval" &&
            c.buttons.length > 0 &&
            c.pendingId !== first.pendingId &&
            c.pendingId !== second.pendingId,
        ),
      "a card for the replayed call",
    );
    expect(hits.filter((h) => h.endsWith("/trigger"))).toHaveLength(1);
    await manager.press(cardPress(thread(), third.pendingId, "deny", ANA));
    await manager.idle();
    expect(hits.filter((h) => h.endsWith("/trigger"))).toHaveLength(1);
    const ids = provider.requests
      .at(-1)!
      .messages.flatMap((m) => ("tool_calls" in m ? (m.tool_calls ?? []).map((c) => c.id) : []));
    expect(ids).not.toContain("c1~redirect-1");
    await manager.drain(1000);
    await store.close();
  });
});
