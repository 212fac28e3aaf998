/**
 * A module-resolution hook for the start-up benchmark: `node --import <this file> dist/cli.js …`
 * prints "loaded-package <name>" on stderr the first time the process resolves a module inside a
 * package in node_modules, so the benchmark can list what a start actually loaded.
 */
import { register } from "node:module";

const seen = new Set();

/** Resolve as usual; report each package the first time one of its files is resolved. */
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  const inside = result.url.split("/node_modules/")[1];
  if (inside !== undefined) {
    const parts = inside.split("/");
    const name = parts[0].startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0];
    if (!seen.has(name)) {
      seen.add(name);
      process.stderr.write(`loaded-package ${name}\n`);
    }
  }
  return result;
}

if (!process.env.LOADED_PACKAGES_HOOKED) {
  process.env.LOADED_PACKAGES_HOOKED = "1";
  register(import.meta.url);
}
