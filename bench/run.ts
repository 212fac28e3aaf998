/**
 * Benchmark runner (`npm run bench [name…]`): imports every bench/*-bench.ts, runs its exported
 * `run()` one after another (each writes its own bench/results/<name>.json and .md), and prints
 * the returned figures. Names given on the command line restrict the run (e.g. `engine`).
 * `npm run bench` runs it compiled by tsc (in .bench-build/), so the figures are those of the
 * JavaScript that ships: tsx's on-the-fly transform names every function it creates at run time
 * (esbuild's keepNames), which cost the session stack 5–20 % of its CPU in A/B runs. Run through tsx
 * (`tsx bench/run.ts`), it finds its *-bench.ts sources instead.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";

type Bench = { run: () => Promise<Record<string, unknown>> };

/** Bench files beside this runner: *-bench.ts from sources, *-bench.js compiled. */
const SUFFIX = `-bench${path.extname(import.meta.filename)}`;

/** The bench names present in this folder, sorted. */
async function benchNames(): Promise<string[]> {
  const files = await readdir(import.meta.dirname);
  return files
    .filter((f) => f.endsWith(SUFFIX))
    .map((f) => f.slice(0, -SUFFIX.length))
    .sort();
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const available = await benchNames();
  const unknown = wanted.filter((name) => !available.includes(name));
  if (unknown.length > 0) {
    console.error(`unknown bench: ${unknown.join(", ")} (available: ${available.join(", ")})`);
    process.exitCode = 2;
    return;
  }
  for (const name of wanted.length > 0 ? wanted : available) {
    const url = pathToFileURL(path.join(import.meta.dirname, `${name}${SUFFIX}`)).href;
    const bench = (await import(url)) as Partial<Bench>;
    if (typeof bench.run !== "function") {
      console.error(`${name}${SUFFIX} does not export run()`);
      process.exitCode = 1;
      continue;
    }
    console.log(`▶ ${name}`);
    const started = Date.now();
    const results = await bench.run();
    console.log(JSON.stringify(results, null, 2));
    console.log(
      `✔ ${name} in ${((Date.now() - started) / 1_000).toFixed(1)} s → bench/results/${name}.{json,md}\n`,
    );
  }
}

await main();
