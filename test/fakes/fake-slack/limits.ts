/**
 * The fake Slack's payload checks, answering with Slack's real error codes: at most 50 blocks,
 * section text ≤ 3,000, fields ≤ 10 × 2,000, context ≤ 10 elements, actions ≤ 25 buttons with
 * unique action ids (≤ 255), labels ≤ 75 and values ≤ 2,000, markdown blocks ≤ 12,000 in total
 * (`invalid_blocks`), and the observed ~12k cap on all block text (`msg_blocks_too_long`).
 */

export const FAKE_LIMITS = Object.freeze({
  blocks: 50,
  sectionText: 3_000,
  fields: 10,
  fieldText: 2_000,
  contextElements: 10,
  actionsElements: 25,
  buttonText: 75,
  buttonValue: 2_000,
  actionId: 255,
  markdownTotal: 12_000,
  blocksTextTotal: 12_000,
  updateText: 4_000,
  postText: 40_000,
  streamMarkdown: 12_000,
});

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null;

function textOf(value: unknown): string | undefined {
  return isObject(value) && typeof value.text === "string" ? value.text : undefined;
}

/** The total characters of text the blocks carry. */
export function blocksText(blocks: readonly unknown[]): number {
  let total = 0;
  for (const block of blocks) {
    if (!isObject(block)) continue;
    total += textOf(block.text)?.length ?? (typeof block.text === "string" ? block.text.length : 0);
    if (Array.isArray(block.fields)) for (const f of block.fields) total += textOf(f)?.length ?? 0;
    if (block.type === "context" && Array.isArray(block.elements)) {
      for (const e of block.elements) total += textOf(e)?.length ?? 0;
    }
  }
  return total;
}

function checkButton(element: Json, actionIds: Set<string>): string | undefined {
  if (element.type !== "button") return undefined;
  const actionId = element.action_id;
  if (typeof actionId !== "string" || actionId.length === 0 || actionId.length > FAKE_LIMITS.actionId) {
    return "invalid_blocks";
  }
  if (actionIds.has(actionId)) return "invalid_blocks";
  actionIds.add(actionId);
  const label = textOf(element.text);
  if (label === undefined || label.length === 0 || label.length > FAKE_LIMITS.buttonText)
    return "invalid_blocks";
  if (typeof element.value === "string" && element.value.length > FAKE_LIMITS.buttonValue)
    return "invalid_blocks";
  if (element.style !== undefined && element.style !== "primary" && element.style !== "danger")
    return "invalid_blocks";
  return undefined;
}

function checkBlock(block: Json, actionIds: Set<string>): string | undefined {
  switch (block.type) {
    case "section": {
      const text = textOf(block.text);
      const fields = Array.isArray(block.fields) ? block.fields : [];
      if (text === undefined && fields.length === 0) return "invalid_blocks";
      if (text !== undefined && (text.length === 0 || text.length > FAKE_LIMITS.sectionText))
        return "invalid_blocks";
      if (fields.length > FAKE_LIMITS.fields) return "invalid_blocks";
      if (fields.some((f) => (textOf(f)?.length ?? 0) > FAKE_LIMITS.fieldText)) return "invalid_blocks";
      return undefined;
    }
    case "context": {
      const elements = Array.isArray(block.elements) ? block.elements : [];
      if (elements.length === 0 || elements.length > FAKE_LIMITS.contextElements) return "invalid_blocks";
      if (elements.some((e) => (textOf(e)?.length ?? 0) > FAKE_LIMITS.sectionText)) return "invalid_blocks";
      return undefined;
    }
    case "actions": {
      const elements = Array.isArray(block.elements) ? block.elements : [];
      if (elements.length === 0 || elements.length > FAKE_LIMITS.actionsElements) return "invalid_blocks";
      for (const element of elements) {
        if (!isObject(element)) return "invalid_blocks";
        const problem = checkButton(element, actionIds);
        if (problem) return problem;
      }
      return undefined;
    }
    case "markdown":
      return typeof block.text === "string" ? undefined : "invalid_blocks";
    case "header":
    case "divider":
    case "rich_text":
    case "image":
      return undefined;
    default:
      return "invalid_blocks";
  }
}

/** Check a message's blocks; undefined when Slack would accept them. */
export function checkBlocks(blocks: unknown): string | undefined {
  if (!Array.isArray(blocks)) return "invalid_blocks_format";
  if (blocks.length > FAKE_LIMITS.blocks) return "invalid_blocks";
  const actionIds = new Set<string>();
  let markdown = 0;
  for (const block of blocks) {
    if (!isObject(block)) return "invalid_blocks_format";
    const problem = checkBlock(block, actionIds);
    if (problem) return problem;
    if (block.type === "markdown" && typeof block.text === "string") markdown += block.text.length;
  }
  if (markdown > FAKE_LIMITS.markdownTotal) return "invalid_blocks";
  if (blocksText(blocks) > FAKE_LIMITS.blocksTextTotal) return "msg_blocks_too_long";
  return undefined;
}

const CHUNK_TYPES = new Set(["markdown_text", "task_update", "plan_update", "blocks"]);

/** Check streaming chunks; undefined when acceptable. */
export function checkChunks(chunks: unknown): string | undefined {
  if (!Array.isArray(chunks)) return "invalid_chunks";
  let markdown = 0;
  for (const chunk of chunks) {
    if (!isObject(chunk) || typeof chunk.type !== "string" || !CHUNK_TYPES.has(chunk.type))
      return "invalid_chunks";
    if (chunk.type === "markdown_text") {
      if (typeof chunk.text !== "string") return "invalid_chunks";
      markdown += chunk.text.length;
    }
    if (chunk.type === "task_update" && (typeof chunk.id !== "string" || typeof chunk.title !== "string")) {
      return "invalid_chunks";
    }
    if (chunk.type === "blocks") {
      const problem = checkBlocks(chunk.blocks);
      if (problem) return problem;
    }
  }
  return markdown > FAKE_LIMITS.streamMarkdown ? "msg_too_long" : undefined;
}
