/**
 * Builders for the AgentEvents the rendering tests of every channel feed their renderers, so a
 * long event is written once.
 */
import { type AgentEvent, agentEvent } from "../../../src/core/events.js";

/** A write call that waits for a person's approval. */
export function permissionRequired(callId: string, tool = "write_file"): AgentEvent {
  return agentEvent({
    type: "permission-required",
    callId,
    tool,
    args: {},
    reason: "writes",
    category: "write",
    provenance: { kind: "user" },
    alwaysOptions: [],
  });
}
