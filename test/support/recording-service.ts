/**
 * The recording half of the in-test ConversationServices the channel tests run against: the
 * registered outputs by platform, and every received message, button press and thread command, in
 * order. Like the session layer, a message or interaction that repeats a known dedupe key is a
 * duplicate, and all of its keys are remembered either way. Subclasses decide what a turn, a press
 * and a command do.
 */
import type { ButtonPress, PressResult } from "../../src/core/button-press.js";
import type { ConversationService, ReceiveResult } from "../../src/sessions/contracts.js";
import type { InboundMessage } from "../../src/core/inbound-message.js";
import type { PlatformUser, ThreadTarget } from "../../src/core/thread-target.js";
import type { ThreadOutput, ThreadOutputFactory } from "../../src/core/thread-output.js";

/** A thread command as the channel handed it over. */
export interface RecordedCommand {
  readonly target: ThreadTarget;
  readonly user: PlatformUser;
  readonly name: string;
  readonly args: readonly string[];
}

/** Records what a channel hands the session layer; `handle`, `decide` and `reply` answer it. */
export abstract class RecordingService implements ConversationService {
  readonly factories = new Map<string, ThreadOutputFactory>();
  readonly received: InboundMessage[] = [];
  readonly presses: ButtonPress[] = [];
  readonly commands: RecordedCommand[] = [];
  private readonly seen = new Set<string>();
  private readonly waiters: (() => void)[] = [];

  /** What a new (not duplicate) message starts. */
  protected abstract handle(message: InboundMessage): ReceiveResult | Promise<ReceiveResult>;
  /** The answer to a press. */
  protected abstract decide(press: ButtonPress): PressResult | Promise<PressResult>;
  /** The reply to a command. */
  protected abstract reply(command: RecordedCommand): string;

  registerOutput(platform: string, factory: ThreadOutputFactory): void {
    this.factories.set(platform, factory);
  }

  /** The output the channel registered for the target's platform. */
  output(target: ThreadTarget): ThreadOutput {
    const factory = this.factories.get(target.platform);
    if (!factory) throw new Error(`no output for ${target.platform}`);
    return factory(target);
  }

  async receive(message: InboundMessage): Promise<ReceiveResult> {
    if (!(await this.firstDelivery(message.dedupeKeys))) return { status: "duplicate" };
    this.received.push(message);
    this.notify();
    return this.handle(message);
  }

  async firstDelivery(keys: readonly string[]): Promise<boolean> {
    const fresh = !keys.some((key) => this.seen.has(key));
    for (const key of keys) this.seen.add(key);
    return fresh;
  }

  async press(press: ButtonPress): Promise<PressResult> {
    this.presses.push(press);
    this.notify();
    return this.decide(press);
  }

  async command(
    target: ThreadTarget,
    user: PlatformUser,
    name: string,
    args: readonly string[],
  ): Promise<string> {
    const command: RecordedCommand = { target, user, name, args };
    this.commands.push(command);
    this.notify();
    return this.reply(command);
  }

  /** Resolve once the predicate holds (checked now and after every recorded call). */
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
