/**
 * The folder Coworker's own code lives in (the package root: `src/` and `dist/` both sit one level
 * below it), which the agent must never be able to change — the sandbox hides it, and config
 * validation refuses a workspace that would contain it.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The package root: this module is `<root>/src/core/service-dir.ts` or `<root>/dist/core/service-dir.js`. */
export const SERVICE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
