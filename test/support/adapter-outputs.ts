/**
 * What the app does for every ChannelAdapter before it starts (registerOutputs in
 * src/app/channel-starter.ts), for tests and benches that build a channel by hand.
 */
import { registerOutputs } from "../../src/app/channel-starter.js";
import type { ChannelAdapter } from "../../src/channels/channel-adapter.js";
import type { ConversationService } from "../../src/sessions/contracts.js";

/** Register `adapter`'s thread outputs with `service` as the app does; returns the adapter. */
export function withOutputs<T extends ChannelAdapter>(
  adapter: T,
  service: Pick<ConversationService, "registerOutput">,
): T {
  registerOutputs(adapter, service);
  return adapter;
}
