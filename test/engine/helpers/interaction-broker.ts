/**
 * InteractionBroker: an in-memory Approver, Asker and PlanApprover keyed by tool-call id.
 *
 * The engine asks; whoever holds the broker (a console channel, a test, a benchmark) answers by
 * call id. An answer for a call id that is not waiting — a stale button for an earlier call, a
 * press for another call, a second press — is ignored and reported as not accepted, so it can
 * never approve a different call. An interrupted turn resolves its waits as interrupted and
 * forgets them. Durable, restart-safe approvals live in src/approvals; this is the live version.
 */
import type {
  ApprovalOutcome,
  Approver,
  Asker,
  PermissionRequest,
  PlanApprover,
  PlanDecision,
  PlanProposal,
  QuestionAnswers,
  QuestionRequest,
} from "../../../src/engine/asking/ports.js";

export type PendingInteraction =
  | { readonly kind: "approval"; readonly request: PermissionRequest }
  | { readonly kind: "question"; readonly request: QuestionRequest }
  | { readonly kind: "plan"; readonly request: PlanProposal };

interface Waiter<T> {
  readonly item: PendingInteraction;
  readonly resolve: (value: T) => void;
}

/** Live approvals, questions and plan decisions, answered by call id. */
export class InteractionBroker {
  private readonly approvals = new Map<string, Waiter<ApprovalOutcome>>();
  private readonly questions = new Map<string, Waiter<QuestionAnswers>>();
  private readonly plans = new Map<string, Waiter<PlanDecision>>();
  private readonly watchers = new Set<(item: PendingInteraction) => void>();

  /** Pass as TurnEngineOptions.approver. */
  readonly approver: Approver = (request, signal) =>
    this.wait(this.approvals, { kind: "approval", request }, signal, "interrupted");

  /** Pass as TurnEngineOptions.asker. */
  readonly asker: Asker = (request, signal) =>
    this.wait(this.questions, { kind: "question", request }, signal, { interrupted: true });

  /** Pass as TurnEngineOptions.planApprover. */
  readonly planApprover: PlanApprover = (request, signal) =>
    this.wait(this.plans, { kind: "plan", request }, signal, { interrupted: true });

  /** Decide the approval waiting for `callId`; false (ignored) if none is waiting. */
  approve(callId: string, outcome: Exclude<ApprovalOutcome, "interrupted">): boolean {
    return this.settle(this.approvals, callId, outcome);
  }

  /** Answer the question waiting for `callId`; false (ignored) if none is waiting. */
  answer(callId: string, answers: Readonly<Record<string, string>>): boolean {
    return this.settle(this.questions, callId, { answers: { ...answers } });
  }

  /** Decide the plan waiting for `callId`; false (ignored) if none is waiting. */
  decidePlan(callId: string, decision: Exclude<PlanDecision, { interrupted: true }>): boolean {
    return this.settle(this.plans, callId, decision);
  }

  /** Everything currently waiting for a person. */
  pending(): PendingInteraction[] {
    return [...this.approvals.values(), ...this.questions.values(), ...this.plans.values()].map(
      (w) => w.item,
    );
  }

  /** Resolves with the next interaction that starts waiting (or one already waiting for `callId`). */
  next(callId?: string): Promise<PendingInteraction> {
    const existing = this.pending().find((item) => callId === undefined || item.request.callId === callId);
    if (existing) return Promise.resolve(existing);
    return new Promise((resolve) => {
      const watcher = (item: PendingInteraction) => {
        if (callId !== undefined && item.request.callId !== callId) return;
        this.watchers.delete(watcher);
        resolve(item);
      };
      this.watchers.add(watcher);
    });
  }

  private wait<T>(
    map: Map<string, Waiter<T>>,
    item: PendingInteraction,
    signal: AbortSignal,
    interrupted: T,
  ): Promise<T> {
    const callId = item.request.callId;
    if (signal.aborted) return Promise.resolve(interrupted);
    return new Promise<T>((resolve) => {
      const onAbort = () => {
        if (map.get(callId)?.item === item) map.delete(callId);
        resolve(interrupted);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      map.set(callId, {
        item,
        resolve: (value) => {
          signal.removeEventListener("abort", onAbort);
          resolve(value);
        },
      });
      for (const watcher of [...this.watchers]) watcher(item);
    });
  }

  private settle<T>(map: Map<string, Waiter<T>>, callId: string, value: T): boolean {
    const waiter = map.get(callId);
    if (!waiter) return false;
    map.delete(callId);
    waiter.resolve(value);
    return true;
  }
}
