/**
 * How a failed zod parse reads in a refusal or a log line: "path: problem; path: problem". Shared
 * so every boundary that refuses bad input names the problem the same way.
 */
import type { z } from "zod";

/** "path: problem; path: problem" for a failed parse ("(root)" for the value itself). */
export function describeProblems(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
}
