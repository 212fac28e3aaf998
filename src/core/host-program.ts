/**
 * Host programs by absolute path. The service starts a few programs on the host with their
 * working directory inside the workspace (ripgrep in the folder it searches, bubblewrap in the
 * workspace root). A bare name is looked up in PATH, where an empty or relative entry ("", ".")
 * means the working directory: a program of that name that a command wrote into the workspace
 * would then run on the host, outside the sandbox. So a bare name is looked up here in PATH's
 * absolute entries only. A name with a slash ("bin/rg") is the operator's path, but a relative one
 * would resolve against the child's working directory, in the workspace: so it is resolved here
 * against the service's own working directory, where the operator's config means it (refusing it
 * would be stricter but break configs that work). Each name is looked up once per PATH (a search
 * runs ripgrep many times): a program installed later is found after a restart, as bubblewrap's
 * probe finds it.
 */
import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import path from "node:path";

/**
 * The program `name` as an absolute path found in `searchPath`'s absolute entries (or `name`
 * resolved against the service's working directory when it holds a slash); undefined when no entry holds an executable file of that name.
 */
export function hostProgram(
  name: string,
  searchPath: string = process.env.PATH ?? "",
): Promise<string | undefined> {
  const key = `${name}\0${searchPath}`;
  let found = lookedUp.get(key);
  if (found === undefined) {
    found = lookUp(name, searchPath);
    lookedUp.set(key, found);
  }
  return found;
}

/** Each name's lookup, per PATH. */
const lookedUp = new Map<string, Promise<string | undefined>>();

async function lookUp(name: string, searchPath: string): Promise<string | undefined> {
  if (name.includes("/")) return path.resolve(name);
  for (const entry of searchPath.split(path.delimiter)) {
    if (!path.isAbsolute(entry)) continue;
    const candidate = path.join(entry, name);
    if (await isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

async function isExecutableFile(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}
