/**
 * Assembles streamed tool-call fragments into whole calls, keeping the argument text raw (the
 * engine parses it). Fragments are grouped by `index`; servers that omit it (Ollama) are handled
 * by treating a fragment that carries a name (or a different id) as a new call and anything else
 * as the continuation of the last one. Calls without a server id get a synthetic, stable one.
 */
import type { ToolCallFragment } from "./openai-chunk.js";
import type { RawToolCall } from "./provider.js";

interface PendingCall {
  readonly index: number | undefined;
  id: string;
  idFromServer: boolean;
  name: string;
  arguments: string;
}

/** Collects tool-call fragments for one assistant step. */
export class ToolCallAssembler {
  private readonly calls: PendingCall[] = [];
  /** The latest call of each index: a fragment finds its call at once, however many came before. */
  private readonly latestByIndex = new Map<number, PendingCall>();
  private chars = 0;

  /** @param syntheticId makes an id for the call at `position` when the server sent none. */
  constructor(private readonly syntheticId: (position: number) => string) {}

  /** Whether any fragment has arrived. */
  get isEmpty(): boolean {
    return this.calls.length === 0;
  }

  /** How many characters the calls hold so far (ids, names and arguments). */
  get size(): number {
    return this.chars;
  }

  /** Fold one fragment into its call. */
  add(fragment: ToolCallFragment): void {
    const id = nonEmpty(fragment.id);
    const name = nonEmpty(fragment.function?.name);
    const call = this.target(fragment.index ?? undefined, id, name);
    const before = sizeOf(call);
    if (id && !call.idFromServer) {
      call.id = id;
      call.idFromServer = true;
    }
    if (name && call.name === "") call.name = name;
    const args = fragment.function?.arguments;
    if (typeof args === "string") call.arguments += args;
    else if (args) call.arguments = JSON.stringify(args);
    this.chars += sizeOf(call) - before;
  }

  /** The calls in the order they started. */
  finish(): RawToolCall[] {
    return this.calls.map((c) => Object.freeze({ id: c.id, name: c.name, arguments: c.arguments }));
  }

  private target(index: number | undefined, id: string | undefined, name: string | undefined): PendingCall {
    const candidate = index === undefined ? this.calls.at(-1) : this.latestByIndex.get(index);
    if (candidate && !startsAnotherCall(candidate, index, id, name)) return candidate;
    const call: PendingCall = {
      index,
      id: this.syntheticId(this.calls.length),
      idFromServer: false,
      name: "",
      arguments: "",
    };
    this.calls.push(call);
    if (index !== undefined) this.latestByIndex.set(index, call);
    this.chars += sizeOf(call);
    return call;
  }
}

/**
 * Whether a fragment begins a new call rather than continuing `candidate`: it names a different
 * server id, or (without an index) it carries a name that is not a repeat for the same id.
 */
function startsAnotherCall(
  candidate: PendingCall,
  index: number | undefined,
  id: string | undefined,
  name: string | undefined,
): boolean {
  const otherId = id !== undefined && candidate.idFromServer && id !== candidate.id;
  if (index !== undefined) return otherId && name !== undefined;
  if (otherId) return true;
  const sameId = id !== undefined && candidate.idFromServer && id === candidate.id;
  return name !== undefined && !sameId;
}

function sizeOf(call: PendingCall): number {
  return call.id.length + call.name.length + call.arguments.length;
}

function nonEmpty(value: string | null | undefined): string | undefined {
  return value ? value : undefined;
}
