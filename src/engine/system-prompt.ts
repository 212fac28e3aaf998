/**
 * SystemPrompt: the system prompt of a session's turns — the session's fixed instructions, then
 * the part that belongs to the turn's requester (what is remembered about them, see
 * requester-memories.ts), so the part every turn shares comes first. Both are settled when a turn
 * starts, before its first model call.
 *
 * The fixed part is given as text or built on the session's first turn: the workspace's AGENTS.md
 * is read from disk, which the synchronous engine factory cannot wait for. Once built it is kept,
 * so AGENTS.md is read once per session and every turn sends the same fixed part (friendly to the
 * model's prompt cache). A build that fails fails that turn only; the next turn builds again.
 * What could not be read (an unreadable AGENTS.md, memories that failed to load) becomes a notice
 * on the turn that read it, shown before its answer.
 */
import type { ConversationExecutionRequest } from "../core/request.js";
import type { KnowledgePart } from "./session-knowledge.js";

/** Builds the session's fixed instructions, with a notice when part of them could not be read. */
export type InstructionsBuilder = () => Promise<KnowledgePart>;

/**
 * The end of the system prompt that belongs to a turn's requester, with a notice when it could
 * not be read.
 */
export type RequesterInstructions = (request: ConversationExecutionRequest) => Promise<KnowledgePart>;

/** One turn's system prompt and the notices to show before its answer. */
export interface TurnPrompt {
  readonly text: string;
  readonly notices: readonly string[];
}

/** The system prompt of one session's turns (see the module header). */
export class SystemPrompt {
  /** The fixed part: its builder until the first turn built it, its text from then on. */
  private fixed: string | InstructionsBuilder;

  constructor(
    fixed: string | InstructionsBuilder,
    private readonly requester?: RequesterInstructions,
  ) {
    this.fixed = fixed;
  }

  /**
   * The system prompt of the turn `request` starts or resumes: the fixed part (built now on the
   * session's first turn), then the requester's part when there is one — at once when there is
   * nothing to wait for (the fixed part built, no requester's part). A session's turns never
   * overlap, so the fixed part is never built twice at once.
   */
  forTurn(request: ConversationExecutionRequest): TurnPrompt | Promise<TurnPrompt> {
    const fixed = this.fixed;
    if (typeof fixed === "string" && !this.requester) return { text: fixed, notices: [] };
    return this.gather(fixed, request);
  }

  private async gather(
    fixed: string | InstructionsBuilder,
    request: ConversationExecutionRequest,
  ): Promise<TurnPrompt> {
    const parts =
      typeof fixed === "string"
        ? [{ text: fixed }, await this.requester?.(request)]
        : await Promise.all([this.build(fixed), this.requester?.(request)]);
    const texts: string[] = [];
    const notices: string[] = [];
    for (const part of parts) {
      if (part?.text) texts.push(part.text);
      if (part?.notice !== undefined) notices.push(part.notice);
    }
    return { text: texts.join("\n\n"), notices };
  }

  private async build(fixed: InstructionsBuilder): Promise<KnowledgePart> {
    const built = await fixed();
    this.fixed = built.text ?? "";
    return built;
  }
}
