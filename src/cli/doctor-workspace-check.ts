/**
 * The doctor's workspace check, which `start` runs too: the workspace root and every extra root
 * must be directories the user Coworker runs as may read and write. A bind-mounted folder that
 * root created is not writable by the image's `node` user, and nothing else says so before the
 * first file tool fails.
 */
import { access, constants, stat } from "node:fs/promises";
import type { CoworkerConfig } from "../config/schema.js";
import { errorCode } from "../core/missing-file.js";
import type { DoctorCheck } from "./doctor.js";

/** What is wrong with one workspace directory: it is missing, not a directory, or shut to this user. */
interface DirectoryProblem {
  readonly kind: "missing" | "other";
  readonly text: string;
}

async function directoryProblem(path: string): Promise<DirectoryProblem | undefined> {
  try {
    if (!(await stat(path)).isDirectory()) return { kind: "other", text: `${path} is not a directory` };
    await access(path, constants.R_OK | constants.W_OK);
    return undefined;
  } catch (error) {
    const code = errorCode(error);
    return code === "ENOENT"
      ? { kind: "missing", text: `${path} does not exist` }
      : { kind: "other", text: `${path} is not readable and writable (${code ?? "error"})` };
  }
}

/**
 * The workspace check: the root and every extra root are readable, writable directories. A
 * missing root alone is a warning (`coworker start` creates it); a root this user may not read
 * and write, or a missing extra root, fails. `start` runs it too, as a warning line.
 */
export function workspaceCheck(workspace: CoworkerConfig["workspace"]): DoctorCheck {
  return {
    name: "workspace",
    async run() {
      const [root, ...extra] = await Promise.all(
        [workspace.root, ...workspace.extra_roots].map(directoryProblem),
      );
      const problems = [root, ...extra].filter((p): p is DirectoryProblem => p !== undefined);
      if (problems.length === 0)
        return { status: "pass", summary: [workspace.root, ...workspace.extra_roots].join(", ") };
      const summary = problems.map((p) => p.text).join("; ");
      if (problems.length === 1 && root?.kind === "missing")
        return { status: "warn", summary: `${summary} (coworker start creates it)` };
      const missing = workspace.extra_roots.filter((_, i) => extra[i]?.kind === "missing");
      const shut = problems.some((p) => p.kind === "other");
      const fixes = [
        ...(missing.length > 0 ? [`create ${missing.join(", ")} (mkdir -p)`] : []),
        ...(shut
          ? [
              `make it a directory the user Coworker runs as (uid ${process.getuid?.() ?? "?"}) may read and write: chown it, or run the container with --user "$(id -u):$(id -g)"`,
            ]
          : []),
      ];
      return {
        status: "fail",
        summary,
        fix: `${fixes.join("; ")}; or set COWORKER_WORKSPACE / workspace.extra_roots`,
      };
    },
  };
}
