/**
 * What wget (and wget2, which reads the same options) writes, read from its words (marked where
 * bash expands them: download-marks.ts): -O / -P / -i / -e / --content-disposition, recursive
 * fetches, its log (-o / -a) and WARC files.
 */
import { mayHoldOptions, nameFromUrl, serverNamedFolder, under } from "./download-marks.js";
import { fullOption, namesFile, urlBasename, urlRead } from "./downloader-words.js";

/** wget's short options that take a value: what follows one in a cluster is its value (`-qPdir`). */
const WGET_VALUED = new Set("aABDeiIlnoOPQRtTUwX");

/** wget's long options read here, to which abbreviations are written out. */
const WGET_LONG = [
  "output-document",
  "output-file",
  "append-output",
  "directory-prefix",
  "input-file",
  "execute",
  "content-disposition",
  "trust-server-names",
  "recursive",
  "mirror",
  "force-directories",
  "no-host-directories",
  "no-directories",
  "warc-file",
];

/**
 * wgetrc commands (as `execute` spells them) that change neither where a file is saved nor its
 * name; any other may (input, output_document, recursive, dirstruct, cut_dirs, default_page, …).
 */
const WGETRC_NAMELESS = new Set([
  "robots",
  "tries",
  "timeout",
  "wait",
  "verbose",
  "quiet",
  "useragent",
  "header",
  "checkcertificate",
  "limitrate",
  "progress",
]);

/**
 * The folder of a WARC archive wget writes besides its downloads (--warc-file NAME: NAME.warc.gz,
 * NAME.warc with --no-warc-compression, NAME-00001.warc.gz when split, NAME.cdx), which holds
 * what the servers sent as they sent it: its files are named after NAME, not as NAME.
 */
function warcFolder(name: string): string {
  return serverNamedFolder(name.includes("/") ? name.slice(0, name.lastIndexOf("/")) : "");
}

/**
 * The files (and folders, ending in `/`) wget (or wget2) writes, read from its words (`marked`);
 * `configured`: a wgetrc of the caller's choosing may name what is saved (its folder counts).
 */
export function wgetTargets(args: readonly string[], configured: boolean): string[] {
  let document: string | undefined;
  // The log (-o, -a): with -S or -d it holds the server's header lines; and a WARC's folder.
  const logs: string[] = [];
  let prefix = "";
  const urls: string[] = [];
  // The URLs are read from a file (-i, --input-file), or the options (WGETRC=, a -e command) can
  // name what is saved: the names are not on the line.
  let input = configured;
  const expanded: string[] = [];
  // A wgetrc command (-e, --execute; wget ignores case, `-` and `_` in its name): dir_prefix is -P;
  // output_document is -O, its value as wgetrc reads it (`~` expanded) perhaps another, so its
  // folder counts too; any other but those known to leave the saved names alone (input, recursive,
  // dirstruct, default_page, …) leaves the names off the line.
  const execute = (command: string) => {
    const at = command.indexOf("=");
    if (at === -1) return;
    const name = command
      .slice(0, at)
      .replace(/[-_\s]/g, "")
      .toLowerCase();
    const value = command.slice(at + 1).trim();
    if (name === "dirprefix") prefix = value;
    if (name === "outputdocument") document = value;
    input ||= name !== "dirprefix" && !WGETRC_NAMELESS.has(name);
  };
  const options = args.map((arg) => fullOption(arg, WGET_LONG));
  for (let i = 0; i < args.length; i += 1) {
    const arg = options[i] as string;
    if (arg === "--output-document" || arg === "--directory-prefix" || arg === "--execute") {
      const value = args[i + 1] ?? "";
      if (arg === "--output-document") document = value;
      else if (arg === "--directory-prefix") prefix = value;
      else execute(value);
      i += 1;
    } else if (arg === "--output-file" || arg === "--append-output") {
      logs.push(args[i + 1] ?? "");
      i += 1;
    } else if (arg === "--warc-file") {
      logs.push(warcFolder(args[i + 1] ?? ""));
      i += 1;
    } else if (arg.startsWith("--warc-file=")) logs.push(warcFolder(arg.slice("--warc-file=".length)));
    else if (/^--(output-file|append-output)=/.test(arg)) logs.push(arg.slice(arg.indexOf("=") + 1));
    else if (arg.startsWith("--output-document=")) document = arg.slice("--output-document=".length);
    else if (arg.startsWith("--directory-prefix=")) prefix = arg.slice("--directory-prefix=".length);
    else if (arg.startsWith("--execute=")) execute(arg.slice("--execute=".length));
    else if (/^--input-file(=|$)/.test(arg)) input = true;
    else if (/^-[A-Za-z]/.test(arg)) {
      // The cluster's first option taking a value takes the rest of it (`-qiurls.txt`) or the next word.
      let at = 1;
      while (at < arg.length && !WGET_VALUED.has(arg[at] as string)) at += 1;
      if (at === arg.length) continue;
      const rest = arg.slice(at + 1);
      const value = rest || (args[i + 1] ?? "");
      if (!rest) i += 1;
      if (arg[at] === "O") document = value;
      else if (arg[at] === "P") prefix = value;
      else if (arg[at] === "i") input = true;
      else if (arg[at] === "e") execute(value);
      else if (arg[at] === "o" || arg[at] === "a") logs.push(value);
    } else {
      if (mayHoldOptions(arg)) expanded.push(arg);
      const url = urlRead(arg);
      if (/^(https?|ftps?):\/\/[^/]/.test(url) && URL.canParse(url)) urls.push(url);
    }
  }
  return [...wgetSaved({ input, document, prefix, urls, expanded, options }), ...logs.filter(namesFile)];
}

/** What wget read from its words: whether names come from elsewhere, -O, -P, the URLs, the rest. */
interface WgetReading {
  readonly input: boolean;
  readonly document: string | undefined;
  readonly prefix: string;
  readonly urls: readonly string[];
  readonly expanded: readonly string[];
  readonly options: readonly string[];
}

/** The files (or folders) wget saves what it downloads to, as its words say. */
function wgetSaved({ input, document, prefix, urls, expanded, options }: WgetReading): readonly string[] {
  if (input) {
    const named = document === undefined || document === "-" ? [] : [document];
    return [...named, serverNamedFolder(prefix), ...expanded];
  }
  if (document !== undefined) return document === "-" ? expanded : [document, ...expanded];
  // The server names the file (a Content-Disposition header, a redirect's last URL).
  const serverNamed = options.some((arg) => /^--(content-disposition|trust-server-names)(=on)?$/.test(arg));
  // A recursive fetch, or one saving under the URL's folders (-x), fills the host's folder, or the
  // prefix itself without host folders.
  const recursive = options.some((arg) =>
    /^(--recursive|--mirror|--force-directories|-[A-Za-z]*[rmx][A-Za-z]*)$/.test(arg),
  );
  if (recursive) {
    const flat = options.some((arg) => /^(-nH|-nd|--no-host-directories|--no-directories)$/.test(arg));
    return [
      ...urls.map((url) => serverNamedFolder(under(prefix, flat ? "." : new URL(url).host))),
      ...expanded,
    ];
  }
  const files = urls.map((url) => under(prefix, nameFromUrl(urlBasename(url) ?? "index.html")));
  return [...files, ...(serverNamed && urls.length > 0 ? [serverNamedFolder(prefix)] : []), ...expanded];
}
