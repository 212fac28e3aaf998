/**
 * The instant subjects of the channel benchmarks, so a run measures our code rather than a model:
 * a model that answers every prompt at once, a session layer that answers every message at once
 * (what a channel alone costs), and the real session stack (SessionManager → TurnEngine) on that
 * model.
 */
import path from "node:path";
import { agentEvent } from "../../src/core/events.js";
import type { ModelMessage } from "../../src/core/messages.js";
import type {
  ProviderClient,
  ProviderRequest,
  ProviderStreamEvent,
} from "../../src/engine/provider/provider.js";
import type { ConversationService, ReceiveResult } from "../../src/sessions/contracts.js";
import type { InboundMessage } from "../../src/core/inbound-message.js";
import type { PressResult } from "../../src/core/button-press.js";
import type { ThreadOutputFactory } from "../../src/core/thread-output.js";
import type { SessionManager } from "../../src/sessions/session-manager.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { buildSessionManager, engineFactory } from "../../test/support/session-stack.js";

/** Answers every prompt at once with one short text step (finding the prompt costs no copy of the history). */
export class InstantModel implements ProviderClient {
  async *stream(request: ProviderRequest): AsyncGenerator<ProviderStreamEvent> {
    const last = request.messages.findLast((m: ModelMessage) => m.role === "user");
    const text = `You said: ${typeof last?.content === "string" ? last.content : "…"}`;
    yield { type: "text-delta", delta: text };
    yield { type: "step-finished", text, toolCalls: [], finishReason: "stop", usage: undefined };
  }
}

/** The session layer reduced to nothing: every message is answered at once (the channel's own cost). */
export class InstantService implements ConversationService {
  private factory: ThreadOutputFactory | undefined;

  registerOutput(_platform: string, factory: ThreadOutputFactory): void {
    this.factory = factory;
  }

  async receive(message: InboundMessage): Promise<ReceiveResult> {
    const renderer = this.factory!(message.target).beginTurn({
      sessionId: message.target.channel,
      turnId: message.dedupeKeys[0]!,
    });
    const text = `You said: ${message.text}`;
    void (async () => {
      await renderer.handle(agentEvent({ type: "text-delta", delta: text }));
      await renderer.handle(
        agentEvent({
          type: "turn-completed",
          status: "completed",
          iterations: 1,
          finalText: text,
          usage: undefined,
        }),
      );
      await renderer.close();
    })();
    return { status: "started" };
  }

  async press(): Promise<PressResult> {
    return { status: "invalid", message: "no buttons in the benchmark" };
  }

  async command(): Promise<string> {
    return "no commands in the benchmark";
  }

  async firstDelivery(): Promise<boolean> {
    return true;
  }
}

/** A started-to-be session stack on the instant model. */
export interface InstantStack {
  readonly store: Store;
  readonly manager: SessionManager;
}

/**
 * The session stack on the instant model (or `model`), no tools: its store at `storeUrl`
 * (undefined = the default SQLite file, "memory:" to leave the database out) in `dataDir`, the
 * workspace below it; `wrap` may decorate the store (e.g. to count its calls).
 */
export async function instantStack(
  storeUrl: string | undefined,
  dataDir: string,
  wrap: (store: Store) => Store = (store) => store,
  model: ProviderClient = new InstantModel(),
  maxSessionsInMemory = 1_000,
): Promise<InstantStack> {
  const store = wrap(await createStore({ url: storeUrl, dataDir }));
  const manager = buildSessionManager({
    store,
    createEngine: engineFactory(model, new ToolRegistry()),
    dataDir,
    workspaceRoot: path.join(dataDir, "workspace"),
    model: "instant",
    provider: "instant",
    maxSteps: 5,
    maxSessionsInMemory,
  });
  return { store, manager };
}
