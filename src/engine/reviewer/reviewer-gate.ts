/**
 * ReviewerGate: one session's hold on the reviewer — whether shadow verdicts are wanted, the
 * retry guard's count of reviewer denials in the running turn, and the shadow reviews still in
 * flight (so shutdown and tests can wait for them; the turn never does). Also the types of the
 * denial reporter the session layer injects to show a denial to the person with "Allow anyway".
 */
import type { Reviewer } from "./reviewer.js";

/** After this many reviewer denials in one turn, every further ask of the turn goes to a person. */
export const MAX_REVIEWER_DENIALS_PER_TURN = 2;

/** A call the reviewer denied, as the person is shown it (full reason) with "Allow anyway". */
export interface ReviewerDenial {
  readonly callId: string;
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
  /** One line naming the call. */
  readonly summary: string;
  /**
   * What the denial card shows of the call, as an ordinary approval card would (the tool's
   * preview: its summary and detail block — the command, a diff, the URL). Absent, or without a
   * detail: the card shows the arguments in full. "Allow anyway" grants this exact call, so the
   * person pressing it must be able to read all of it, not a summary's first characters.
   */
  readonly shown?: {
    readonly summary: string;
    readonly detail?: { readonly kind: string; readonly text: string };
  };
  /** The reviewer's full reason. */
  readonly reason: string;
}

/** Shows a denial in the conversation; rejects when it could not be shown. */
export type ReviewerDenialReporter = (denial: ReviewerDenial) => Promise<void>;

export interface ReviewerGateOptions {
  readonly reviewer: Reviewer;
  /** In interactive mode, also get a background verdict for every card (never changing it). */
  readonly shadow: boolean;
}

/** Per-session reviewer state (see the module header). */
export class ReviewerGate {
  private denials = { turnId: "", count: 0 };
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly options: ReviewerGateOptions) {}

  get reviewer(): Reviewer {
    return this.options.reviewer;
  }

  get shadow(): boolean {
    return this.options.shadow;
  }

  /** Whether the retry guard still lets the reviewer decide in this turn. */
  mayDecide(turnId: string): boolean {
    return this.denialsIn(turnId) < MAX_REVIEWER_DENIALS_PER_TURN;
  }

  /** Count one reviewer denial in this turn. */
  noteDenial(turnId: string): void {
    this.denials = { turnId, count: this.denialsIn(turnId) + 1 };
  }

  /** Keep a background (shadow) review until it settles. */
  track(work: Promise<void>): void {
    const held = work.catch(() => undefined);
    this.inFlight.add(held);
    void held.finally(() => this.inFlight.delete(held));
  }

  /** Resolves once every shadow review started so far has settled. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  private denialsIn(turnId: string): number {
    return this.denials.turnId === turnId ? this.denials.count : 0;
  }
}
