/**
 * What the app does for every ChannelAdapter before it starts (src/app/channel-starter.ts),
 * for tests and benches that build a channel by hand: its thread outputs become the session
 * layer's factory for its platform.
 */
import type { ChannelAdapter } from "../../src/channels/channel-adapter.js";
import type { ConversationService } from "../../src/sessions/contracts.js";

/** Register `adapter`'s thread outputs with `service`; returns the adapter. */
export function withOutputs<T extends ChannelAdapter>(
  adapter: T,
  service: Pick<ConversationService, "registerOutput">,
): T {
  service.registerOutput(adapter.platform, (target) => adapter.outputFor(target));
  return adapter;
}
