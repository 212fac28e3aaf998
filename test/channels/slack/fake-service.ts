/**
 * An in-test ConversationService: records what the channel hands it and answers with
 * configurable results, so the Slack adapter can be tested without the session layer.
 */
import type {
  ButtonPress,
  ConversationService,
  InboundMessage,
  PlatformUser,
  PressResult,
  ReceiveResult,
  ThreadOutputFactory,
  ThreadTarget,
} from "../../../src/sessions/contracts.js";

export class FakeService implements ConversationService {
  readonly received: InboundMessage[] = [];
  readonly presses: ButtonPress[] = [];
  readonly commands: { target: ThreadTarget; user: PlatformUser; name: string; args: readonly string[] }[] =
    [];
  readonly factories = new Map<string, ThreadOutputFactory>();
  private readonly seen = new Set<string>();
  pressResult: PressResult = { status: "accepted", message: "ok" };
  commandReply = "done";
  /** Sessions known to `hasSession` (session keys). */
  readonly sessions = new Set<string>();
  private readonly waiters: (() => void)[] = [];

  registerOutput(platform: string, factory: ThreadOutputFactory): void {
    this.factories.set(platform, factory);
  }

  async receive(message: InboundMessage): Promise<ReceiveResult> {
    const duplicate = message.dedupeKeys.some((key) => this.seen.has(key));
    for (const key of message.dedupeKeys) this.seen.add(key);
    if (duplicate) return { status: "duplicate" };
    this.received.push(message);
    this.notify();
    return { status: "started" };
  }

  async press(press: ButtonPress): Promise<PressResult> {
    this.presses.push(press);
    this.notify();
    return this.pressResult;
  }

  async command(
    target: ThreadTarget,
    user: PlatformUser,
    name: string,
    args: readonly string[],
  ): Promise<string> {
    this.commands.push({ target, user, name, args });
    this.notify();
    return this.commandReply;
  }

  async hasSession(target: ThreadTarget): Promise<boolean> {
    return this.sessions.has(`${target.channel}:${target.thread}`);
  }

  /** Resolve once the predicate holds (checked after every recorded call). */
  waitFor(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("fake service: timed out")), timeoutMs);
      const check = () => {
        if (!predicate()) return false;
        clearTimeout(timer);
        resolve();
        return true;
      };
      if (!check()) this.waiters.push(() => void check());
    });
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}
