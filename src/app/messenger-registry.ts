/**
 * The Messengers of the running platforms. The engine factory asks it for a session's platform
 * when the session is built (messaging tools exist only where a Messenger does); channel starters
 * register theirs when their channel has started. One registry per assembled app.
 */
import type { Messenger } from "../tools/messaging/messenger.js";

/** Platform name → Messenger, filled by channel starters. */
export class MessengerRegistry {
  private readonly messengers = new Map<string, Messenger>();

  /** Make `messenger` the one for `platform` (a restarted channel replaces its old one). */
  register(platform: string, messenger: Messenger): void {
    this.messengers.set(platform, messenger);
  }

  /** The platform's Messenger, if its channel registered one. */
  messengerFor(platform: string): Messenger | undefined {
    return this.messengers.get(platform);
  }
}
