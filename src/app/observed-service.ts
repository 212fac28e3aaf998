/**
 * A ConversationService decorator for metrics: every output factory a channel registers is
 * wrapped by `observeOutputs` (turns, tool calls, approvals, errors), and every inbound message is
 * counted by platform and what became of it. Everything else is passed through unchanged.
 */
import type { Metrics } from "../ops/metrics.js";
import type { ConversationService } from "../sessions/contracts.js";
import { observeOutputs } from "./observed-output.js";
import type { Clock } from "./provider-metrics.js";

/** Wrap `inner` so channels registering on it are observed into `metrics`. */
export function observeService(
  inner: ConversationService,
  metrics: Metrics,
  clock?: Clock,
): ConversationService {
  const hasSession = inner.hasSession?.bind(inner);
  return {
    registerOutput: (platform, factory) =>
      inner.registerOutput(platform, observeOutputs(platform, factory, metrics, clock)),
    receive: async (message) => {
      const result = await inner.receive(message);
      // The inner service validates the message; a malformed one may lack its target.
      const platform = (message.target as { platform?: unknown } | undefined)?.platform;
      metrics.messageReceived(typeof platform === "string" ? platform : "unknown", result.status);
      return result;
    },
    press: (press) => inner.press(press),
    command: (target, user, name, args, options) => inner.command(target, user, name, args, options),
    firstDelivery: (keys) => inner.firstDelivery(keys),
    ...(hasSession ? { hasSession } : {}),
  };
}
