/**
 * formatIssues shows a long offending value cut to 60 characters, between whole characters: the
 * old cut at a fixed index could keep half of an emoji (a lone surrogate) in the error line; and
 * scrubbed before the cut, so a token across it is not shown in part.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { formatIssues } from "../../src/config/format-errors.js";

/** Whether `text` holds half a surrogate pair. */
const hasLoneSurrogate = (text: string): boolean =>
  /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);

describe("formatIssues", () => {
  it("cuts a long shown value between whole characters", () => {
    const schema = z.object({ mode: z.enum(["auto", "interactive"]) });
    // In the JSON text (a quote first) the emoji's halves sit at 56 and 57: the old cut at 57.
    const raw = { mode: `${"x".repeat(55)}😀${"y".repeat(20)}` };
    const parsed = schema.safeParse(raw);
    expect(parsed.success).toBe(false);
    const [line] = formatIssues(parsed.error?.issues ?? [], { schema, raw, sources: new Map() });
    expect(hasLoneSurrogate(line as string)).toBe(false);
    expect(line).toContain(`(got "${"x".repeat(55)}😀y…)`);
  });

  it("scrubs a shown value before cutting it, so a token across the cut is not shown in part", () => {
    // A Telegram token in the API root: cut first, 21 of its secret characters were shown, too few
    // for the token pattern to know them (and an invalid config registers no secrets).
    const schema = z.object({ api_root: z.url({ protocol: /^https?$/ }) });
    const secret = "AAHabcdefghijklmnopqrstuvwxyz012345";
    const raw = { api_root: `ftp://api.telegram.org/bot123456789:${secret}/` };
    const parsed = schema.safeParse(raw);
    const [line] = formatIssues(parsed.error?.issues ?? [], { schema, raw, sources: new Map() });
    expect(line).toContain('(got "ftp://api.telegram.org/bot[redacted]/")');
    expect(line).not.toContain(secret.slice(0, 8));
  });
});
