/**
 * Test support for the engine assembly: temporary workspaces, request snapshots for a Slack
 * thread, an in-memory store for memories, and a collector for a turn's events.
 */
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { AgentEvent } from "../../src/engine/events.js";
import { createRequest, type RequestInput } from "../../src/engine/request.js";
import type { ThreadTarget } from "../../src/sessions/contracts.js";

/** The Slack thread the assembly tests talk in. */
export const TARGET: ThreadTarget = { platform: "slack", workspace: "T1", channel: "C42", thread: "1700.1" };

/** A fresh temporary directory (real path) and its removal. */
export async function tempDir(
  prefix = "coworker-assembly-",
): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), prefix)));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A request of Ana in TARGET, with overrides. */
export function request(overrides: Partial<RequestInput> = {}) {
  return createRequest({
    prompt: "hello",
    messages: [],
    sessionId: "s1",
    platform: "slack",
    model: "test-model",
    workspace: { root: "/ws", context: "" },
    requester: { userId: "U_ANA", displayName: "Ana" },
    mode: "interactive",
    surface: "thread",
    metadata: { target: TARGET },
    ...overrides,
  });
}

/** Drain a turn's events. */
export async function collect(events: AsyncIterable<AgentEvent>): Promise<AgentEvent[]> {
  const out: AgentEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}
