/**
 * Turn controls: messages one process sends to the process holding a session, over that
 * process's own pub/sub channel — "input is queued for the session", "a pending item of the
 * session was settled" (a press or typed answer taken elsewhere), a retry button pressed elsewhere,
 * thread commands (stop, mode changes, …) to run where the turn runs, and "Allow anyway" grants to
 * add there. A control reaches its receiver or says it did not: `send` is false when the
 * receiver no longer listens (it died), and the sender decides what then (TurnControlDispatch).
 * A receiver alive but not listening (its Redis subscription lost) keeps renewing its leases, so a
 * sender's retries give up in the end: it checks that it still listens, and says when it does
 * again (ListeningWatch), so what it may have missed is looked at again where it is held.
 */
import type { Logger } from "pino";
import { z } from "zod";
import type { Clock } from "../core/clock.js";
import { MODEL_NAME } from "../core/model-name.js";
import { permissionModeSchema } from "../core/modes.js";
import { type PlatformUser, type ThreadTarget, threadTargetSchema } from "../core/thread-target.js";
import { type Grant, grantSchema } from "../engine/permissions/grants.js";
import type { Coordination, Unsubscribe } from "../store/coordination/coordination.js";
import { PeriodicTask } from "../core/periodic-task.js";
import { platformUserSchema } from "./inbound-schema.js";
import type { ThreadCommand } from "../core/text-commands.js";

/** One control, addressed to a session. */
export type TurnControl =
  | { readonly kind: "input"; readonly sessionId: string }
  | { readonly kind: "settled"; readonly sessionId: string }
  | { readonly kind: "retry"; readonly sessionId: string; readonly user: PlatformUser }
  | {
      readonly kind: "command";
      readonly sessionId: string;
      readonly target: ThreadTarget;
      readonly user: PlatformUser;
      readonly command: ThreadCommand;
    }
  | { readonly kind: "grant"; readonly sessionId: string; readonly grant: Grant };

/**
 * A thread command as a control carries it: one that acts on a session (approve and deny decide an
 * item where they are typed, and are never passed on), with the arguments parseCommand lets
 * through. The receiver runs it as it comes, so a control of another version, or a garbled one,
 * must not set a mode or a model no command could (a record with a mode no version knows fails to
 * load), nor run as a command it does not know.
 */
const commandSchema = z.discriminatedUnion("name", [
  z.object({ name: z.literal("stop") }),
  z.object({ name: z.literal("new") }),
  z.object({ name: z.literal("status") }),
  z.object({ name: z.literal("grants") }),
  z.object({ name: z.literal("reviewer") }),
  z.object({ name: z.literal("mode"), mode: permissionModeSchema }),
  z.object({ name: z.literal("model"), model: z.string().regex(MODEL_NAME) }),
  z.object({ name: z.literal("grants-revoke"), index: z.number().int().positive().optional() }),
]);

const controlSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("input"), sessionId: z.string().min(1) }),
  z.object({ kind: z.literal("settled"), sessionId: z.string().min(1) }),
  z.object({ kind: z.literal("retry"), sessionId: z.string().min(1), user: platformUserSchema }),
  z.object({
    kind: z.literal("command"),
    sessionId: z.string().min(1),
    target: threadTargetSchema,
    user: platformUserSchema,
    command: commandSchema,
  }),
  z.object({ kind: z.literal("grant"), sessionId: z.string().min(1), grant: grantSchema }),
]);

/** Channel name of a process's controls. */
export const controlChannel = (processId: string) => `controls:${processId}`;

/** What a process publishes on its own channel to learn whether it listens there (never a control). */
const LISTENING_CHECK = "listening?";

/** How a process checks that it still listens for controls, and what it does when it does again. */
export interface ListeningWatch {
  /** How often it checks — while `needed`, or it was found not listening. */
  readonly everyMs: number;
  /** Whether anything here waits for controls (a turn parked here): else no check is sent. */
  readonly needed: () => boolean;
  readonly clock: Clock;
  /** It listens again after a check found it did not: controls sent meanwhile may be lost. */
  readonly regained: () => Promise<void>;
}

/** Sends controls to other processes and hands this process's to `handle`. */
export class TurnControls {
  private unsubscribe: Unsubscribe | undefined;
  private watchTask: PeriodicTask | undefined;
  /** A check found this process not listening, and none since found it listening again. */
  private deaf = false;

  constructor(
    private readonly coordination: Coordination,
    private readonly processId: string,
    private readonly handle: (control: TurnControl) => Promise<void>,
    private readonly logger: Logger,
    private readonly watch?: ListeningWatch,
  ) {}

  /** Start receiving this process's controls (and checking that it does, with a watch). */
  async start(): Promise<void> {
    this.unsubscribe ??= await this.coordination.subscribe(controlChannel(this.processId), (raw) =>
      this.receive(raw),
    );
    const { watch } = this;
    if (!watch) return;
    this.watchTask ??= new PeriodicTask({
      clock: watch.clock,
      intervalMs: watch.everyMs,
      run: () => this.checkListening(watch),
      onError: (error) => this.logger.warn({ err: error }, "checking that turn controls are heard failed"),
    });
  }

  /** Send a control to the process `processId`: false when that process does not listen (died). */
  send(processId: string, control: TurnControl): Promise<boolean> {
    return this.coordination.publish(controlChannel(processId), JSON.stringify(control));
  }

  /** Stop receiving (and checking). */
  async stop(): Promise<void> {
    this.watchTask?.stop();
    await this.watchTask?.settled();
    this.watchTask = undefined;
    const unsubscribe = this.unsubscribe;
    this.unsubscribe = undefined;
    await unsubscribe?.();
  }

  /**
   * Publish a check on this process's own channel: no one took it, so this process does not listen
   * (its subscription is lost); once one is taken again, `regained` runs (tried again at the next
   * check when it fails). A check that fails to go out says nothing either way. None is sent
   * while nothing here waits for controls.
   */
  private async checkListening(watch: ListeningWatch): Promise<void> {
    if (!this.deaf && !watch.needed()) return;
    const listening = await this.coordination.publish(controlChannel(this.processId), LISTENING_CHECK);
    if (!listening) {
      if (!this.deaf) this.logger.warn("this process does not hear its turn controls (subscription lost)");
      this.deaf = true;
      return;
    }
    if (!this.deaf) return;
    await watch.regained();
    this.deaf = false;
    this.logger.info("this process hears its turn controls again");
  }

  private receive(raw: string): void {
    if (raw === LISTENING_CHECK) return;
    let control: TurnControl;
    try {
      control = controlSchema.parse(JSON.parse(raw));
    } catch (error) {
      this.logger.warn({ err: error }, "ignoring an unreadable turn control");
      return;
    }
    this.handle(control).catch((error) =>
      this.logger.error(
        { err: error, sessionId: control.sessionId, kind: control.kind },
        "a turn control failed",
      ),
    );
  }
}
