/**
 * Zod schemas for what channels hand the session layer: inbound messages and button presses.
 * The session manager validates both, so a channel bug becomes a clear refusal, never a crash. The
 * usual message (no file) is checked by hand first (isPlainInbound), the schema's verdict at a
 * fraction of its cost.
 */
import { z } from "zod";
import { threadTargetSchema } from "../core/thread-target.js";
import { attachmentSchema } from "../core/attachment.js";

export const platformUserSchema = z.object({ id: z.string().min(1), name: z.string() });

export const inboundMessageSchema = z.object({
  dedupeKeys: z.array(z.string()),
  target: threadTargetSchema,
  user: platformUserSchema,
  text: z.string(),
  files: z.array(
    z.object({
      path: z.string().min(1),
      name: z.string(),
      bytes: z.number().nonnegative(),
      mediaType: z.string().optional(),
      durationS: z.number().nonnegative().optional(),
    }),
  ),
  attachments: z.array(attachmentSchema).optional(),
  sentAt: z.string(),
  botUsername: z.string().min(1).optional(),
});

/**
 * Whether `message` is one inboundMessageSchema accepts, checked by hand, for the usual message: no
 * file and no attachment record. False says nothing (the schema decides then). Each zod parse runs
 * on parse code every schema of the app shares, so in the service it cost about 10 µs a message;
 * this costs a fraction of that, and never accepts what the schema refuses (tested).
 */
export function isPlainInbound(message: unknown): boolean {
  if (!isRecord(message)) return false;
  const { dedupeKeys, target, user, files, botUsername } = message;
  return (
    isStringList(dedupeKeys) &&
    isPlainTarget(target) &&
    isRecord(user) &&
    isFilled(user.id) &&
    typeof user.name === "string" &&
    typeof message.text === "string" &&
    Array.isArray(files) &&
    files.length === 0 &&
    message.attachments === undefined &&
    typeof message.sentAt === "string" &&
    (botUsername === undefined || isFilled(botUsername))
  );
}

/** threadTargetSchema's checks, its `extra` read as Telegram and Slack fill it: text, numbers, flags. */
function isPlainTarget(target: unknown): boolean {
  if (!isRecord(target)) return false;
  const { extra } = target;
  return (
    isFilled(target.platform) &&
    isFilled(target.workspace) &&
    isFilled(target.channel) &&
    (target.thread === undefined || isFilled(target.thread)) &&
    (extra === undefined ||
      (isRecord(extra) &&
        Object.getPrototypeOf(extra) === Object.prototype &&
        Reflect.ownKeys(extra).every((key) => typeof key === "string" && isExtraValue(extra[key]))))
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A list of strings, every index read (`every` would skip a hole, which the schema refuses). */
function isStringList(value: unknown): boolean {
  if (!Array.isArray(value)) return false;
  for (let i = 0; i < value.length; i++) if (typeof value[i] !== "string") return false;
  return true;
}

function isFilled(value: unknown): boolean {
  return typeof value === "string" && value.length > 0;
}

function isExtraValue(value: unknown): boolean {
  return typeof value === "string" || typeof value === "boolean" || Number.isFinite(value);
}

export const buttonPressSchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("card"),
    platform: z.string().min(1),
    pendingId: z.string().min(1).max(24),
    action: z.string().min(1).max(64),
    user: platformUserSchema,
    // Where the button was pressed: a card is decided only from its own conversation (press-place.ts).
    pressedIn: threadTargetSchema,
  }),
  z.object({
    kind: z.literal("control"),
    control: z.enum(["stop", "retry"]),
    target: threadTargetSchema,
    user: platformUserSchema,
  }),
]);
