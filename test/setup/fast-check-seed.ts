/**
 * Property tests run with a fixed seed so CI is deterministic. Explore other inputs locally with
 * `FC_SEED=<n> npx vitest run` (a failure prints its seed and counterexample).
 */
import fc from "fast-check";

fc.configureGlobal({ seed: Number(process.env.FC_SEED ?? 20261129) });
