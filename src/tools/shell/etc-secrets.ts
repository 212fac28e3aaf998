/**
 * Which parts of /etc the sandbox must not show: every entry other users may not read (shadow,
 * gshadow, sudoers, ssl/private, database auth files, daemon configs with passwords…) and
 * anything named like a private key or credential, whatever its mode (the service may run as
 * root, which reads everything); and, whatever their mode, the places where services keep their
 * environment (/etc/environment, systemd units, /etc/default, /etc/sysconfig, init scripts,
 * profile.d…): operators put tokens there (`Environment=SLACK_BOT_TOKEN=…` in a unit, mode 0644),
 * and no ordinary tool reads them (passwd, hosts, resolv.conf, ssl, ld.so.* and the rest stay).
 * An entry this process cannot read is left alone: the sandboxed
 * command runs as the same user with fewer rights, so it cannot read it either (and every mask
 * is a mount that costs start-up time). Found by a shallow walk, once per backend.
 */
import type { Dirent } from "node:fs";
import { constants } from "node:fs";
import { access, lstat, readdir } from "node:fs/promises";
import path from "node:path";

/** An /etc entry to cover: a directory gets an empty tmpfs, a file /dev/null. */
export interface MaskedEntry {
  readonly path: string;
  readonly directory: boolean;
}

const CREDENTIAL_NAME =
  /(?:^|[._-])(?:shadow|gshadow|sudoers|secrets?|credentials?|passwd-|private|id_(?:rsa|dsa|ecdsa|ed25519))(?:$|[._-])|_key$|\.key$|\.pem\.key$|^ssh_host_.*_key$/i;
/** Top-level /etc entries where services keep their environment, secrets included. */
const SERVICE_ENVIRONMENT = new Set([
  "environment",
  "environment.d",
  "systemd",
  "default",
  "sysconfig",
  "conf.d",
  "init.d",
  "init",
  "rc.d",
  "profile.d",
  "supervisor",
  "supervisord.conf",
]);
const MAX_DEPTH = 5;
const OTHERS_READ = 0o004;

async function entries(dir: string): Promise<Dirent[]> {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

async function readable(file: string): Promise<boolean> {
  return access(file, constants.R_OK).then(
    () => true,
    () => false,
  );
}

async function walk(dir: string, depth: number, out: MaskedEntry[]): Promise<void> {
  for (const entry of await entries(dir)) {
    if (entry.isSymbolicLink()) continue;
    const full = path.join(dir, entry.name);
    const info = await lstat(full).catch(() => undefined);
    if (info === undefined) continue;
    const directory = info.isDirectory();
    const serviceEnvironment = depth === 1 && SERVICE_ENVIRONMENT.has(entry.name);
    if ((info.mode & OTHERS_READ) === 0 || CREDENTIAL_NAME.test(entry.name) || serviceEnvironment) {
      if (await readable(full)) out.push({ path: full, directory });
    } else if (directory && depth < MAX_DEPTH) {
      await walk(full, depth + 1, out);
    }
  }
}

/** The credential-like entries under `root` (default /etc), outermost first. */
export async function credentialLikeEntries(root = "/etc"): Promise<readonly MaskedEntry[]> {
  const out: MaskedEntry[] = [];
  await walk(root, 1, out);
  return Object.freeze(out);
}
