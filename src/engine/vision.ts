/**
 * Whether a model can see images. `model.vision` decides: `true` / `false` force it; `auto`
 * matches the model name against a small table of known vision families (plus any extra
 * families configured). Decided per model call, so `/coworker model <name>` takes effect on
 * the next call without touching the stored history.
 */

/** The configured setting: forced on, forced off, or decided from the model name. */
export type VisionSetting = "auto" | boolean;

/**
 * Name fragments of model families that accept image input over the chat-completions API.
 * A fragment matches at a word boundary of the lower-cased model name (provider prefixes such
 * as "openai/" or "meta-llama/" are fine).
 */
export const KNOWN_VISION_FAMILIES: readonly string[] = [
  "gpt-4o",
  "gpt-4.1",
  "gpt-4-turbo",
  "gpt-4-vision",
  "gpt-5",
  "chatgpt-4o",
  "o1",
  "o3",
  "o4",
  "claude-3",
  "claude-sonnet-4",
  "claude-opus-4",
  "claude-haiku-4",
  "gemini",
  "gemma3",
  "gemma-3",
  "llava",
  "bakllava",
  "llama3.2-vision",
  "llama-3.2-11b-vision",
  "llama-3.2-90b-vision",
  "llama-4",
  "qwen-vl",
  "qwen2-vl",
  "qwen2.5-vl",
  "qwen2.5vl",
  "qwen3-vl",
  "pixtral",
  "mistral-small-3",
  "minicpm-v",
  "moondream",
  "internvl",
  "grok-2-vision",
  "grok-4",
];

/** Fragments that mark a text-only variant of an otherwise vision-capable family. */
const TEXT_ONLY_MARKERS: readonly string[] = ["o1-mini", "o3-mini", "gpt-4o-audio", "gpt-4o-transcribe"];

function matchesFamily(name: string, family: string): boolean {
  let from = name.indexOf(family);
  while (from !== -1) {
    const before = from === 0 ? "" : name[from - 1]!;
    const after = name[from + family.length] ?? "";
    if (!/[a-z0-9]/.test(before) && !/[0-9]/.test(after)) return true;
    from = name.indexOf(family, from + 1);
  }
  return false;
}

/** Whether `model` gets images as image parts (see the module header). */
export function modelHasVision(
  model: string,
  setting: VisionSetting,
  extraFamilies: readonly string[] = [],
): boolean {
  if (setting !== "auto") return setting;
  const name = model.trim().toLowerCase();
  if (TEXT_ONLY_MARKERS.some((marker) => name.includes(marker))) return false;
  return [...KNOWN_VISION_FAMILIES, ...extraFamilies.map((f) => f.toLowerCase())].some((family) =>
    matchesFamily(name, family),
  );
}
