/**
 * The console channel: a terminal chat with the agent for people who have only a model endpoint.
 * It sends typed lines to the ConversationService and implements ThreadOutput for the one local
 * thread. In a TTY it reads with readline (prompt, Ctrl-C stops a running turn); with piped stdin
 * each line waits until the agent is idle or a card asks for an answer, so scripts are replayable.
 * Control commands (stop, approve <id>, deny <id>) get through at any time, also while a
 * card asks for an answer; cards still pending from before a restart are shown again. It is the
 * smallest ChannelAdapter: one thread, which is the channel itself, no Messenger, no directory.
 */
import { randomUUID } from "node:crypto";
import { createInterface, type Interface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import type { Card, CardRef } from "../../core/card.js";
import type { ConversationService, ReceiveResult } from "../../sessions/contracts.js";
import type { PlatformUser, ThreadTarget } from "../../core/thread-target.js";
import type { PressResult } from "../../core/button-press.js";
import type { ThreadOutput, TurnRenderer } from "../../core/thread-output.js";
import { parseTextCommand } from "../../core/text-commands.js";
import type { ChannelAdapter, ChannelHealth } from "../channel-adapter.js";
import { formatOutcome } from "../../core/card.js";
import { CONSOLE_PLATFORM } from "../../core/console-platform.js";
import { parseCardAnswer, renderCard } from "./card-prompt.js";
import { ConsoleTurnRenderer } from "./console-renderer.js";
import { markdownToTerminalText } from "./console-text.js";
import { TerminalWriter } from "./terminal-writer.js";

/** The console's single conversation place. */
export const CONSOLE_TARGET: ThreadTarget = Object.freeze({
  platform: CONSOLE_PLATFORM,
  workspace: "local",
  channel: "console",
});

export interface ConsoleChannelOptions {
  readonly service: ConversationService;
  readonly input: Readable;
  readonly output: Writable;
  /** TTY behaviour (prompts, line editing, Ctrl-C); default: both streams are TTYs. */
  readonly interactive?: boolean;
  /** ANSI colours; default: interactive. */
  readonly color?: boolean;
  /** Who is typing; default `{ id: "local", name: "you" }`. */
  readonly user?: PlatformUser;
  /** Ctrl-C while no turn runs (interactive only); default: end the console. */
  readonly onInterrupt?: () => void;
}

interface PendingCard {
  card: Card;
  readonly ref: CardRef;
  /** prompting: the next line answers it · waiting: answered, the decision is on its way. */
  state: "prompting" | "waiting";
}

const QUIT_COMMANDS = new Set(["/quit", "/exit"]);
/** Commands that never wait: not for the agent to be idle, not behind a card's question. */
const CONTROL_COMMANDS = new Set(["stop", "approve", "deny"]);

/** Whether `line` is a complete control command ("stop", "/stop", "approve a1b2"). */
function isControl(line: string): boolean {
  const parsed = parseTextCommand(line);
  return parsed?.ok === true && CONTROL_COMMANDS.has(parsed.command.name);
}

/** A terminal chat bound to one ConversationService. */
export class ConsoleChannel implements ChannelAdapter, ThreadOutput {
  readonly platform = CONSOLE_PLATFORM;
  readonly description = "console";
  private readonly writer: TerminalWriter;
  private readonly interactive: boolean;
  private readonly user: PlatformUser;
  private readonly nonce = randomUUID().slice(0, 8);
  private readonly lines: string[] = [];
  private readonly cards: PendingCard[] = [];
  private readline: Interface | undefined;
  private sequence = 0;
  private cardCount = 0;
  private activeTurns = 0;
  /** Messages the service said it started a turn for, whose turn has not begun yet. */
  private awaitedTurns = 0;
  /** Turns that began with no awaited message (resumed or follow-up turns). */
  private unsolicitedTurns = 0;
  /** Messages handed to `receive` that it has not answered yet. */
  private inFlight = 0;
  /** Sends run one after another, without blocking the line loop (a card may need an answer). */
  private sendChain: Promise<void> = Promise.resolve();
  private busy = false;
  private ended = false;
  /** `finished` has resolved: said once, since every later print settles and checks again. */
  private done = false;
  private resolveFinished: () => void = () => undefined;
  /** Resolves when input has ended (EOF, /quit, stop) and nothing more can happen here. */
  readonly finished: Promise<void>;

  constructor(private readonly options: ConsoleChannelOptions) {
    const streamsAreTty =
      (options.input as { isTTY?: boolean }).isTTY === true &&
      (options.output as { isTTY?: boolean }).isTTY === true;
    this.interactive = options.interactive ?? streamsAreTty;
    this.writer = new TerminalWriter(options.output, options.color ?? this.interactive);
    this.user = options.user ?? { id: "local", name: "you" };
    this.finished = new Promise((resolve) => {
      this.resolveFinished = resolve;
    });
  }

  /** Start reading lines. */
  async start(): Promise<void> {
    const rl = createInterface({
      input: this.options.input,
      output: this.interactive ? this.options.output : undefined,
      terminal: this.interactive,
    });
    this.readline = rl;
    rl.on("line", (line) => {
      this.lines.push(line);
      void this.pump();
    });
    rl.on("close", () => this.endInput());
    if (this.interactive) {
      rl.setPrompt(this.writer.style("bold", "› "));
      rl.on("SIGINT", () => void this.interrupt());
      this.writer.line(
        this.writer.style("dim", "Coworker console — type a message; /stop, /new, /status; /quit to leave."),
      );
      rl.prompt();
    }
  }

  /** Stop reading input (shutdown); lines not yet handled are dropped. */
  async stop(): Promise<void> {
    this.lines.length = 0;
    this.readline?.close();
    this.endInput();
  }

  /** Always up: the terminal needs no connection. */
  health(): ChannelHealth {
    return { ready: true, state: "up" };
  }

  /** The console's one thread is the channel itself. */
  outputFor(_target: ThreadTarget): ThreadOutput {
    return this;
  }

  // ThreadOutput -----------------------------------------------------------------------------

  beginTurn(_info: { readonly sessionId: string; readonly turnId: string }): TurnRenderer {
    this.activeTurns++;
    if (this.awaitedTurns > 0) this.awaitedTurns--;
    else this.unsolicitedTurns++;
    return new ConsoleTurnRenderer(this.writer, () => {
      this.activeTurns--;
      this.settle();
    });
  }

  async postCard(card: Card): Promise<CardRef> {
    this.cardCount++;
    // The nonce keeps refs of this run apart from those a store kept from earlier runs.
    const ref: CardRef = { messageId: `card-${this.nonce}-${this.cardCount}` };
    renderCard(this.writer, card);
    if (card.buttons.length > 0) this.cards.push({ card, ref, state: "prompting" });
    this.settle();
    return ref;
  }

  /** A card pending from before a restart: shown again, and the next line may answer it. */
  async reshowCard(card: Card): Promise<CardRef> {
    this.writer.line(this.writer.style("dim", "(still waiting from before the restart)"));
    return this.postCard(card);
  }

  async updateCard(ref: CardRef, card: Card): Promise<void> {
    const index = this.cards.findIndex((pending) => pending.ref.messageId === ref.messageId);
    if (card.buttons.length === 0 || card.outcome !== undefined) {
      if (index >= 0) this.cards.splice(index, 1);
      // One local person: the console names who decided by name alone.
      const outcome =
        card.outcome &&
        formatOutcome(
          card.outcome,
          (text) => text,
          (by) => by.name,
        );
      this.writer.line(`  ${this.writer.style("dim", "→")} ${outcome ?? `${card.title}: closed`}`);
    } else {
      // Still open (one of several questions answered, or a card from before a restart): ask again.
      const pending = this.cards[index];
      if (pending !== undefined) {
        pending.card = card;
        pending.state = "prompting";
      } else {
        this.cards.push({ card, ref, state: "prompting" });
      }
      renderCard(this.writer, card);
    }
    this.settle();
  }

  async postText(text: string): Promise<void> {
    this.writer.line(markdownToTerminalText(text));
    this.settle();
  }

  // Input ------------------------------------------------------------------------------------

  private prompting(): PendingCard | undefined {
    return this.cards.find((pending) => pending.state === "prompting");
  }

  private idle(): boolean {
    return this.activeTurns === 0 && this.awaitedTurns === 0 && this.inFlight === 0;
  }

  /** Piped input waits for the agent; a person at a TTY may type (steer) at any time. */
  private canConsume(): boolean {
    return this.interactive || this.prompting() !== undefined || this.idle();
  }

  private async pump(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      while (this.lines.length > 0 && (this.canConsume() || isControl(this.lines[0] ?? ""))) {
        await this.handleLine(this.lines.shift() ?? "");
      }
    } finally {
      this.busy = false;
    }
    this.checkFinished();
  }

  /** Something changed (turn ended, card arrived): show a prompt and consume waiting lines. */
  private settle(): void {
    if (this.interactive && !this.ended && (this.idle() || this.prompting() !== undefined))
      this.readline?.prompt();
    void this.pump();
  }

  private endInput(): void {
    this.ended = true;
    void this.pump();
  }

  private checkFinished(): void {
    if (this.done || !this.ended || this.busy || this.lines.length > 0) return;
    const stuck = this.prompting();
    if (stuck !== undefined) {
      this.writer.line(this.writer.style("dim", `(input ended; "${stuck.card.title}" stays pending)`));
    } else if (!this.idle()) {
      return;
    }
    this.done = true;
    this.resolveFinished();
  }

  private async handleLine(raw: string): Promise<void> {
    const line = raw.trim();
    if (line === "") return;
    try {
      if (QUIT_COMMANDS.has(line)) {
        this.readline?.close();
        this.endInput();
      } else if (line.startsWith("/") || isControl(line)) {
        await this.runCommand(line);
      } else {
        const card = this.prompting();
        if (card !== undefined) await this.answerCard(card, line);
        else this.send(line);
      }
    } catch (error) {
      this.showError(error);
    }
  }

  private async runCommand(line: string): Promise<void> {
    const [name = "", ...args] = line.replace(/^\//, "").split(/\s+/);
    const reply = await this.options.service.command(CONSOLE_TARGET, this.user, name, args);
    this.writer.line(markdownToTerminalText(reply));
  }

  private async answerCard(pending: PendingCard, line: string): Promise<void> {
    const answer = parseCardAnswer(pending.card, line);
    if (answer.kind === "invalid") {
      this.writer.line(this.writer.style("yellow", answer.hint));
      return;
    }
    pending.state = "waiting";
    if (answer.kind === "reply") {
      this.send(answer.text);
      return;
    }
    const result = await this.options.service.press({
      kind: "card",
      platform: CONSOLE_PLATFORM,
      pendingId: pending.card.pendingId,
      action: answer.action,
      user: this.user,
      pressedIn: CONSOLE_TARGET,
    });
    this.showPress(pending, result);
  }

  /**
   * An accepted press prints nothing: the card's update shows the decision ("→ Approved by you"),
   * once. A refused press says why, and re-prompts only when the answer was invalid.
   */
  private showPress(pending: PendingCard, result: PressResult): void {
    if (result.status === "accepted") return;
    this.writer.line(this.writer.style("yellow", `  ${result.message}`));
    if (result.status === "invalid") pending.state = "prompting";
    else {
      const index = this.cards.indexOf(pending);
      if (index >= 0) this.cards.splice(index, 1);
    }
  }

  /** Queue `text` for the service; the agent counts as busy until `receive` has answered. */
  private send(text: string): void {
    this.sequence++;
    const message = {
      dedupeKeys: [`console:${this.nonce}:${this.sequence}`],
      target: CONSOLE_TARGET,
      user: this.user,
      text,
      files: [],
      sentAt: new Date().toISOString(),
    };
    this.inFlight++;
    this.sendChain = this.sendChain.then(async () => {
      try {
        this.noteReceive(await this.options.service.receive(message));
      } catch (error) {
        this.showError(error);
      } finally {
        this.inFlight--;
        this.settle();
      }
    });
  }

  private showError(error: unknown): void {
    this.writer.line(this.writer.style("red", `✗ ${error instanceof Error ? error.message : String(error)}`));
  }

  private noteReceive(result: ReceiveResult): void {
    switch (result.status) {
      case "started":
        if (this.unsolicitedTurns > 0) this.unsolicitedTurns--;
        else this.awaitedTurns++;
        return;
      case "queued":
        this.writer.line(this.writer.style("dim", "(queued for the running turn)"));
        return;
      case "ignored":
        this.writer.line(this.writer.style("yellow", `(ignored: ${result.reason})`));
        return;
      case "answered":
      case "command":
      case "duplicate":
        return;
    }
  }

  /** Ctrl-C: stop the running turn, or leave when idle. */
  private async interrupt(): Promise<void> {
    if (this.activeTurns > 0) {
      this.writer.line(this.writer.style("dim", "(stopping the turn — Ctrl-C again when idle to quit)"));
      const stop = { kind: "control", control: "stop", target: CONSOLE_TARGET, user: this.user } as const;
      await this.options.service.press(stop).then(
        (result) => this.writer.line(result.message),
        (error) => this.showError(error),
      );
      return;
    }
    if (this.options.onInterrupt !== undefined) this.options.onInterrupt();
    else await this.stop();
  }
}
