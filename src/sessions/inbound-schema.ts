/**
 * Zod schemas for what channels hand the session layer: inbound messages and button presses.
 * The session manager validates both, so a channel bug becomes a clear refusal, never a crash.
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
