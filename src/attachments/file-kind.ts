/**
 * What kind of file a person sent, from its media type, its name and its first bytes: a
 * viewable image, a PDF, audio, text worth inlining, or something else. The bytes win over
 * the name where they can decide (a PDF signature, NUL bytes in "text").
 */
import { extname } from "node:path";

export type FileKind = "image" | "pdf" | "audio" | "text" | "other";

const AUDIO_EXTENSIONS = new Set([".ogg", ".oga", ".opus", ".mp3", ".m4a", ".wav", ".flac", ".aac", ".weba"]);
const IMAGE_EXTENSIONS = new Set([
  ".png",
  ".jpg",
  ".jpeg",
  ".gif",
  ".webp",
  ".heic",
  ".heif",
  ".bmp",
  ".tiff",
]);

/** Extensions of text-like files and the fence language their inlined text gets. */
const TEXT_LANGUAGES: Readonly<Record<string, string>> = {
  ".txt": "text",
  ".log": "text",
  ".md": "markdown",
  ".markdown": "markdown",
  ".csv": "csv",
  ".tsv": "tsv",
  ".json": "json",
  ".jsonl": "json",
  ".yaml": "yaml",
  ".yml": "yaml",
  ".toml": "toml",
  ".ini": "ini",
  ".xml": "xml",
  ".html": "html",
  ".svg": "xml",
  ".ts": "typescript",
  ".tsx": "tsx",
  ".js": "javascript",
  ".mjs": "javascript",
  ".jsx": "jsx",
  ".py": "python",
  ".rb": "ruby",
  ".go": "go",
  ".rs": "rust",
  ".java": "java",
  ".kt": "kotlin",
  ".c": "c",
  ".h": "c",
  ".cpp": "cpp",
  ".cs": "csharp",
  ".php": "php",
  ".sh": "bash",
  ".sql": "sql",
  ".diff": "diff",
  ".patch": "diff",
  ".env": "text",
  ".conf": "text",
};

const TEXT_MEDIA_TYPES = [/^text\//, /json/, /xml/, /yaml/, /javascript/, /typescript/, /x-sh/, /csv/, /sql/];

/** The fence language for a text file's inlined content. */
export function fenceLanguage(name: string): string {
  return TEXT_LANGUAGES[extname(name).toLowerCase()] ?? "text";
}

/**
 * Whether `head` is UTF-8 without NUL bytes. Decoded as a stream, so a character cut off by the
 * end of the sample passes (the file goes on) while a wrong byte anywhere does not; cutting the
 * last bytes off instead refused a short file whose cut fell inside an emoji.
 */
function looksLikeText(head: Uint8Array): boolean {
  if (head.includes(0)) return false;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(head, { stream: true });
    return true;
  } catch {
    return false;
  }
}

/** Classify a file (see the module header). `head` is its first few kilobytes. */
export function fileKindOf(name: string, mediaType: string | undefined, head: Uint8Array): FileKind {
  const type = (mediaType ?? "").toLowerCase();
  const extension = extname(name).toLowerCase();
  if (Buffer.from(head.subarray(0, 5)).toString("latin1") === "%PDF-") return "pdf";
  if (type === "application/pdf" || extension === ".pdf") return "pdf";
  if (type.startsWith("image/") && type !== "image/svg+xml") return "image";
  if (IMAGE_EXTENSIONS.has(extension)) return "image";
  if (type.startsWith("audio/") || AUDIO_EXTENSIONS.has(extension) || type === "video/ogg") return "audio";
  const declaredText = TEXT_MEDIA_TYPES.some((pattern) => pattern.test(type)) || extension in TEXT_LANGUAGES;
  if (looksLikeText(head) && (declaredText || type === "" || type === "application/octet-stream"))
    return "text";
  return "other";
}
