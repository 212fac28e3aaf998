/**
 * The import-direction check: src/ is a stack of floors, and a file may import only from its own
 * folder or a floor below. Platform SDKs (@slack/*, grammy, @grammyjs/*) belong to
 * src/channels/, and one platform's folder never imports another's. Type-only imports count:
 * a back-reference is a back-reference. docs/architecture.md explains the floors.
 *
 * Usage: npm run check:floors [-- src-dir]   (exit 1 and one line per violation); test/scripts/
 * check-architecture.test.ts runs it in `npm test`.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** Top floor first. Folders on one floor must not import each other. */
export const FLOORS: readonly (readonly string[])[] = [
  ["cli"],
  ["app"],
  ["channels"],
  ["schedules"],
  ["subscriptions", "skills", "attachments", "ops"],
  ["sessions"],
  ["approvals"],
  ["engine"],
  ["tools"],
  ["config"],
  ["store"],
  ["media", "logging"],
  ["core"],
];

const PLATFORM_PACKAGE = /^(@slack\/|grammy$|grammy\/|@grammyjs\/)/;
const PLATFORM_FOLDERS: ReadonlySet<string | undefined> = new Set(["slack", "telegram", "console"]);
const IMPORT =
  /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\sfrom\s+)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

/** The floor index of a top-level folder of src/; the entry files at src/'s root stand above all. */
function floorOf(folder: string | undefined): number {
  if (folder === undefined) return -1;
  return FLOORS.findIndex((floor) => floor.includes(folder));
}

function* sourceFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sourceFiles(path);
    else if (/\.(ts|mts|js|mjs)$/.test(name) && !name.endsWith(".d.ts")) yield path;
  }
}

function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/[^\n]*/g, "$1");
}

/**
 * Every import in `srcDir` that breaks the rules, as "file: reason" lines (paths relative to
 * srcDir's parent). An empty list means the tree is in order.
 */
export function checkArchitecture(srcDir: string): string[] {
  const problems: string[] = [];
  const base = dirname(srcDir);
  for (const file of sourceFiles(srcDir)) {
    const parts = relative(srcDir, file).split(sep);
    const folder = parts.length > 1 ? parts[0] : undefined;
    const shown = relative(base, file).split(sep).join("/");
    const from = floorOf(folder);
    if (folder !== undefined && from < 0) {
      problems.push(
        `${shown}: folder src/${folder}/ is on no floor (add it to FLOORS and docs/architecture.md)`,
      );
      continue;
    }
    for (const match of stripComments(readFileSync(file, "utf8")).matchAll(IMPORT)) {
      const spec = match[1] ?? match[2] ?? "";
      if (PLATFORM_PACKAGE.test(spec)) {
        if (folder !== "channels") problems.push(`${shown}: imports ${spec} outside src/channels/`);
        continue;
      }
      if (!spec.startsWith(".")) continue;
      const target = relative(srcDir, normalize(join(dirname(file), spec))).split(sep);
      if (target[0] === "..") continue;
      const targetFolder = target.length > 1 ? target[0] : undefined;
      if (targetFolder === folder) {
        if (
          folder === "channels" &&
          PLATFORM_FOLDERS.has(parts[1]) &&
          PLATFORM_FOLDERS.has(target[1]) &&
          parts[1] !== target[1]
        ) {
          problems.push(
            `${shown}: channels/${parts[1]} imports channels/${target[1]} (platforms share code through channels/shared/)`,
          );
        }
        continue;
      }
      const to = floorOf(targetFolder);
      if (targetFolder !== undefined && to < 0) continue;
      if (to <= from) {
        const where = targetFolder === undefined ? "src/" : `src/${targetFolder}/`;
        const why = to === from ? "a folder on the same floor" : "a higher floor";
        problems.push(`${shown}: imports ${spec} (${where}, ${why})`);
      }
    }
  }
  return problems.sort();
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === normalize(process.argv[1])) {
  const srcDir = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), "..", "src");
  const problems = checkArchitecture(srcDir);
  for (const problem of problems) console.error(problem);
  if (problems.length > 0) {
    console.error(`${problems.length} import(s) against the floors; see docs/architecture.md`);
    process.exit(1);
  }
  console.log("imports follow the floors");
}
