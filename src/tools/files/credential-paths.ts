/**
 * Credential files the file tools never read, write, upload or search: environment secrets
 * (`.env`, `.env.local`, … but not `.env.example`; direnv's `.envrc`, Cloudflare's `.dev.vars`),
 * private keys (`id_rsa`, `*.pem`, `*.key`, …) and credential stores (`.netrc`, `.npmrc`,
 * `.git-credentials`, `.my.cnf`, `.aws/credentials`, `.cargo/credentials.toml`, anything under
 * `.ssh/` or `.gnupg/`, …). The rules look at the components of a *real* path (after `..`, `.`,
 * trailing slashes and symlinks are resolved), so no spelling of a path slips past them.
 */
import path from "node:path";

/** Thrown when a path names a credential file. */
export class CredentialFileError extends Error {
  override readonly name = "CredentialFileError";
}

/** `.env` and its variants, except the committed templates; direnv's and Cloudflare's likewise. */
const ENV_FILE = /^\.env(?:\..+)?$|^\.envrc$|^\.dev\.vars$/;
const ENV_TEMPLATE = /^\.env\.(?:example|sample|template|dist)$/;

/** Private key files by name. */
const KEY_FILE = /^id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?$|\.(?:pem|key|p12|pfx|jks|keystore|ppk|kdbx)$/;

/** Credential stores by file name, wherever they are. */
const STORE_FILES: ReadonlySet<string> = new Set([
  ".netrc",
  "_netrc",
  ".npmrc",
  ".pypirc",
  ".pgpass",
  ".git-credentials",
  ".htpasswd",
  ".terraformrc",
  ".vault-token",
  ".my.cnf",
  ".s3cfg",
  ".boto",
  "credentials.tfrc.json",
]);

/** Directories whose whole content is secret. */
const SECRET_DIRECTORIES: ReadonlySet<string> = new Set([".ssh", ".gnupg", ".password-store"]);

/** Files that are secret inside a particular directory: `[directory, file]`. */
const STORES_IN_DIRECTORY: ReadonlyArray<readonly [string, string]> = [
  [".aws", "credentials"],
  [".aws", "config"],
  [".docker", "config.json"],
  [".kube", "config"],
  [".cargo", "credentials"],
  [".cargo", "credentials.toml"],
  [".gem", "credentials"],
  ["gh", "hosts.yml"],
  ["gcloud", "credentials.db"],
  ["gcloud", "access_tokens.db"],
  ["gcloud", "application_default_credentials.json"],
];

/**
 * Why `components` (the names of a real path below its root, in order) name a credential file,
 * or undefined when they do not. Names compare case-insensitively (case-folding file systems).
 */
export function credentialReason(components: readonly string[]): string | undefined {
  const names = components.filter((name) => name !== "").map((name) => name.toLowerCase());
  const last = names.at(-1);
  if (last === undefined) return undefined;
  const secretDir = names.slice(0, -1).find((name) => SECRET_DIRECTORIES.has(name));
  if (secretDir !== undefined || SECRET_DIRECTORIES.has(last))
    return `${secretDir ?? last}/ holds keys or credentials`;
  if (ENV_FILE.test(last) && !ENV_TEMPLATE.test(last)) return "it is an environment secrets file";
  if (KEY_FILE.test(last)) return "it looks like a private key file";
  if (STORE_FILES.has(last)) return "it is a credential store";
  const parent = names.at(-2);
  if (STORES_IN_DIRECTORY.some(([dir, file]) => dir === parent && file === last))
    return "it is a credential store";
  return undefined;
}

/** The credential rule for a real absolute path below `root`; undefined when it is not one. */
export function credentialReasonFor(absolute: string, root: string): string | undefined {
  const relative = path.relative(root, absolute);
  if (relative === "" || relative.startsWith("..")) return credentialReason(absolute.split(path.sep));
  return credentialReason(relative.split(path.sep));
}

/** Throw CredentialFileError when the real path `absolute` below `root` names a credential file. */
export function refuseCredentialPath(absolute: string, root: string, shown: string): void {
  const reason = credentialReasonFor(absolute, root);
  if (reason !== undefined)
    throw new CredentialFileError(
      `${shown} is off limits to the file tools: ${reason}. Credentials stay out of the conversation.`,
    );
}
