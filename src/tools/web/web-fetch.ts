/**
 * web_fetch {url, save_to?}: GET an http(s) URL and return it as readable text (HTML → markdown),
 * the url taken as the URL parser reads it, so what is judged and shown is what is fetched,
 * within size and time limits (a URL, the call's or a redirect's, at most MAX_URL_CHARS
 * characters), fenced as untrusted web content (untrusted-page.ts); what it says of a response in
 * its own words — a saved file's status and type, a redirect it refused — names
 * checked facts only, never the server's free text (response-facts.ts). Every hop —
 * the first request and each redirect (at most 5) — is checked by the SSRF guard and connected to
 * the checked address; a hop to a host this call was not authorised for goes back to the
 * permission engine (a grant, or a card of its own) before anything — not even its DNS lookup —
 * reaches the network. The first hop needs nothing of the network before it runs: its card is
 * built from the arguments alone (preview). With save_to the call is a write: the body is saved
 * into the workspace (swap-safe via anchored-fs.ts) and recorded as downloaded there; the
 * card says when it overwrites. It is never saved under .git/, nor as a steering file
 * (`.coworker/`, AGENTS.md: steering-files.ts), which only write_file and edit_file change, with a
 * person's approval; of uploads/, only into the caller's conversation's folders
 * (conversation-paths.ts).
 */
import path from "node:path";
import { z } from "zod";
import { writeChecked } from "../files/anchored-fs.js";
import type { ConversationWorkspace } from "../files/conversation-workspace.js";
import { fileErrorMessage } from "../files/fs-errors.js";
import { pathOnCard, reasonOnCard } from "../files/path-on-card.js";
import { steeringTargetOf } from "../files/steering-files.js";
import { decodeText } from "../files/text-file.js";
import type { ResolvedPath, WorkspacePaths } from "../files/workspace-paths.js";
import { DEFAULT_TOOL_OUTPUT_CHARS } from "../output-cap.js";
import { groupedCount } from "../../core/count-text.js";
import { REDIRECT_STATUSES } from "../../core/http-redirects.js";
import { clip } from "../../core/surrogate-pairs.js";
import { defineTool, fail, ok, type ToolContext, type ToolResult } from "../../core/tool.js";
import { grantHost } from "./grant-host.js";
import { htmlToMarkdown } from "./html-to-markdown.js";
import { type FetchedResponse, FetchError, pinnedGet } from "./pinned-request.js";
import {
  type AddressPolicy,
  BlockedAddressError,
  bareHostname,
  checkAddressHost,
  checkHost,
  type Resolver,
} from "./ssrf-guard.js";
import { mediaTypeFact, statusFact, urlFact } from "./response-facts.js";
import { fencedPage } from "./untrusted-page.js";

/** Limits and network policy of web_fetch (config: tools.web_fetch). */
export interface WebFetchOptions {
  /** Where save_to files go, in each caller's conversation view (conversation-workspace.ts). */
  readonly workspace: ConversationWorkspace;
  readonly allowPrivate?: boolean;
  /** Exception hook for special-range addresses, per hop (tests, or a vetted intranet host). */
  readonly allowAddress?: AddressPolicy["allowAddress"];
  /** Defaults to the system resolver. */
  readonly resolver?: Resolver;
  /** Largest body read (default 2,000,000 bytes). */
  readonly maxBytes?: number;
  /** Whole fetch: every hop's DNS lookup and request, redirects included (default 20,000 ms). */
  readonly timeoutMs?: number;
  readonly maxRedirects?: number;
  readonly outputMaxChars?: number;
  readonly userAgent?: string;
}

/**
 * `raw` as the URL parser reads it (its serialisation), or as written when it is no URL (the call
 * refuses it). The parser drops tabs and line breaks anywhere and decodes a host's escapes, so
 * "https://paste\nbin%2ecom/" fetches pastebin.com: the permission engine (hard-deny patterns, a
 * grant's domain) and the card must see the URL fetched, never the model's spelling of it.
 */
function parsedUrlText(raw: string): string {
  try {
    return new URL(raw).href;
  } catch {
    return raw;
  }
}

/**
 * Longest URL fetched, in characters, as the URL parser writes it (what the card shows): longer
 * than any real page's address, and no card, log line or grant has to hold a padded one.
 */
const MAX_URL_CHARS = 8_192;

const webFetchSchema = z.object({
  url: z
    .string()
    .min(1)
    .overwrite(parsedUrlText)
    .max(
      MAX_URL_CHARS,
      `A URL is at most ${groupedCount(MAX_URL_CHARS)} characters (as written out, escapes included): this one is not fetched`,
    )
    .describe(`The http(s) URL to fetch (at most ${groupedCount(MAX_URL_CHARS)} characters)`),
  save_to: z
    .string()
    .min(1)
    .optional()
    .describe("Save the body to this workspace path instead of returning it (for files and downloads)"),
});

/** Thrown for refusals that are the URL's fault (scheme, redirects). */
class UrlRefusedError extends Error {}

/** Why a save target may not be written (it lies in a .git folder or is a steering file), or undefined. */
async function saveRefusal(paths: WorkspacePaths, file: ResolvedPath): Promise<string | undefined> {
  const names = path.relative(file.root, file.absolute).toLowerCase().split(path.sep);
  if (names.includes(".git")) return `${file.display} is inside a .git folder; web_fetch does not save there`;
  const steering = await steeringTargetOf(paths, file);
  if (steering === undefined) return undefined;
  const shown = steering === file.display ? steering : `${file.display} (${steering})`;
  return `${shown} steers every later session, so web_fetch does not save there: fetch it without save_to and write it with write_file, which asks a person first`;
}

/**
 * Why `url` is not fetched (not http(s), or carrying credentials), or undefined. A redirect's
 * scheme is the server's, but only letters, digits, `+`, `-` and `.`: it is named, cut short.
 */
function urlRefusal(url: URL): string | undefined {
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return `only http and https URLs can be fetched, not ${clip(url.protocol, 24)}`;
  if (url.username || url.password) return "URLs with credentials are not fetched";
  return undefined;
}

/** The URL the call asked for (the model's own words, so quoted as given when refused). */
function requestedUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlRefusedError(`"${raw}" is not a valid URL`);
  }
  const refusal = urlRefusal(url);
  if (refusal !== undefined) throw new UrlRefusedError(refusal);
  return url;
}

/** A redirect's target: its Location is the server's text, so a refusal does not quote it. */
function redirectTarget(location: string, from: URL): URL {
  let url: URL;
  try {
    url = new URL(location, from);
  } catch {
    throw new UrlRefusedError(`${urlFact(from)} redirected to an invalid URL; it was not followed`);
  }
  if (url.href.length > MAX_URL_CHARS)
    throw new UrlRefusedError(
      `${urlFact(from)} redirected to a URL over ${groupedCount(MAX_URL_CHARS)} characters; it was not followed`,
    );
  const refusal = urlRefusal(url);
  if (refusal !== undefined)
    throw new UrlRefusedError(`${urlFact(from)} redirected to a URL that is not fetched: ${refusal}`);
  return url;
}

/** A response's media type as its Content-Type header gives it, parsed once where the response arrives. */
interface MediaType {
  /** The type before any `;`, lower-cased; "" when the header is absent. */
  type: string;
  charset: string | undefined;
}

function mediaType(response: FetchedResponse): MediaType {
  const header = String(response.headers["content-type"] ?? "");
  const [type = "", ...params] = header.split(";").map((part) => part.trim());
  const charset = params
    .find((param) => /^charset=/i.test(param))
    ?.slice("charset=".length)
    .replace(/"/g, "");
  return { type: type.toLowerCase(), charset };
}

function decodeBody(body: Buffer, charset: string | undefined): string {
  try {
    return new TextDecoder(charset ?? "utf-8").decode(body);
  } catch {
    return new TextDecoder("utf-8").decode(body);
  }
}

const TEXTUAL =
  /^(text\/|application\/(json|xml|javascript|ecmascript|x-yaml|yaml|toml|x-sh|ld\+json)|[^;]*\+(json|xml))/;

/** Body → text for the model, or undefined when it is binary. */
async function readableBody(
  response: FetchedResponse,
  { type, charset }: MediaType,
): Promise<{ text: string; title?: string } | undefined> {
  if (type === "text/html" || type === "application/xhtml+xml") {
    const page = await htmlToMarkdown(decodeBody(response.body, charset));
    return page.title ? { text: page.markdown, title: page.title } : { text: page.markdown };
  }
  if (TEXTUAL.test(type)) return { text: decodeBody(response.body, charset) };
  if (type === "") {
    const sniffed = decodeText(response.body);
    return sniffed.kind === "text" ? { text: sniffed.text } : undefined;
  }
  return undefined;
}

/** Build the web_fetch tool. */
export function createWebFetchTool(options: WebFetchOptions) {
  const maxBytes = options.maxBytes ?? 2_000_000;
  const timeoutMs = options.timeoutMs ?? 20_000;
  const maxRedirects = options.maxRedirects ?? 5;
  const outputMaxChars = options.outputMaxChars ?? DEFAULT_TOOL_OUTPUT_CHARS;
  const policy: AddressPolicy = {
    allowPrivate: options.allowPrivate ?? false,
    allowAddress: options.allowAddress,
  };
  const headers = {
    "user-agent": options.userAgent ?? "Coworker/0.1 (web_fetch)",
    accept: "text/html,application/xhtml+xml,text/plain,application/json;q=0.9,*/*;q=0.8",
    "accept-encoding": "gzip, deflate, br",
  };

  /**
   * Whether a redirect to `next` may be followed: a host (and port: grant-host.ts) this call was
   * already authorised for, else asked again.
   */
  const mayFollow = async (next: URL, hop: number, authorised: Set<string>, context: ToolContext) => {
    const host = grantHost(next);
    if (authorised.has(host)) return true;
    if (!context.reauthorize) return false;
    if (!(await context.reauthorize({ url: next.href }, `redirect-${hop}`))) return false;
    authorised.add(host);
    return true;
  };

  /**
   * Run one network step (a hop's DNS lookup or its request) under the call's deadline — what is
   * left of the time budget — and the turn's interrupt; the time it takes is taken off the budget.
   */
  const timed = async <T>(
    budget: { left: number; timedOut: boolean },
    context: ToolContext,
    step: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> => {
    const timer = AbortSignal.timeout(Math.max(1, Math.round(budget.left)));
    const signal = AbortSignal.any([context.signal, timer]);
    const began = performance.now();
    try {
      return await step(signal);
    } finally {
      budget.left -= performance.now() - began;
      budget.timedOut = timer.aborted;
    }
  };

  /**
   * Follow redirects by hand, checking and pinning every hop and authorising every new host.
   * A hop to a new host is authorised before its DNS lookup: a lookup is already a message to
   * the name's DNS server, and a redirect's target is the page's choice (a secret spelled into a
   * subdomain would reach that server without anyone approving it). The time limit counts
   * network time only — each hop's DNS lookup and request — not a person deciding on a hop's card.
   */
  const fetchChecked = async (
    start: URL,
    budget: { left: number; timedOut: boolean },
    context: ToolContext,
  ): Promise<{ url: URL; response: FetchedResponse }> => {
    let url = start;
    let from: URL | undefined;
    const authorised = new Set([grantHost(start)]);
    for (let hop = 0; ; hop += 1) {
      const host = bareHostname(url);
      // An address is checked without the network, once: one refused anyway is refused before anyone is asked.
      const literal = checkAddressHost(host, hop, policy);
      if (from && !(await mayFollow(url, hop, authorised, context)))
        throw new UrlRefusedError(
          `${urlFact(from)} redirected to ${urlFact(url)}, a host this call was not approved for; the redirect was not followed`,
        );
      const pinned =
        literal ??
        (await timed(budget, context, (signal) => checkHost(host, hop, policy, options.resolver, signal)));
      const target = url;
      const response = await timed(budget, context, (signal) =>
        pinnedGet(target, pinned, { signal, maxBytes, headers }),
      );
      const location = response.headers.location;
      if (!REDIRECT_STATUSES.has(response.status) || !location) return { url, response };
      if (hop >= maxRedirects)
        throw new UrlRefusedError(`more than ${maxRedirects} redirects; stopped at ${urlFact(url)}`);
      from = url;
      url = redirectTarget(location, url);
    }
  };

  const save = async (
    paths: WorkspacePaths,
    savePath: string,
    url: URL,
    response: FetchedResponse,
    media: MediaType,
    context: ToolContext,
  ): Promise<ToolResult> => {
    if (response.truncated) {
      return fail(`${urlFact(url)} is larger than the ${maxBytes}-byte download limit; nothing was saved.`);
    }
    if (response.status >= 400) {
      return fail(`${urlFact(url)} answered ${statusFact(response.status)}; nothing was saved.`);
    }
    const file = await paths.resolve(savePath);
    const refusal = await saveRefusal(paths, file);
    if (refusal !== undefined) return fail(refusal);
    const replaced = await writeChecked(file, response.body);
    context.facts.downloadedFiles.add(file.absolute);
    const type = mediaTypeFact(media.type);
    const note = replaced ? " (replacing the file that was there)" : "";
    return ok(
      `Saved ${response.body.length} bytes (${type}) from ${urlFact(url)} to ${file.display}${note}.`,
      [file.display],
    );
  };

  return defineTool({
    name: "web_fetch",
    description:
      "Fetch a public web page or file over http(s). HTML comes back as markdown; other text as is. " +
      "With save_to, the body is saved into the workspace instead (for downloads). " +
      "Private and local network addresses are not reachable.",
    inputSchema: webFetchSchema,
    category: "network",
    categoryOf: (args) => (args.save_to === undefined ? "network" : "write"),
    risk: "medium",
    concurrent: true,
    readsOutside: true,
    grantKey: "domain",
    label: (args) => (args.save_to === undefined ? args.url : `${args.url} → ${args.save_to}`),
    async execute(args, context) {
      const budget = { left: timeoutMs, timedOut: false };
      const paths = options.workspace.forRequest(context.request);
      try {
        const start = requestedUrl(args.url);
        if (args.save_to !== undefined) {
          const refusal = await saveRefusal(paths, await paths.resolve(args.save_to));
          if (refusal !== undefined) return fail(refusal);
        }
        const { url, response } = await fetchChecked(start, budget, context);
        const media = mediaType(response);
        if (args.save_to !== undefined) return await save(paths, args.save_to, url, response, media, context);
        const { type } = media;
        // The status text, the type and the title are the server's words too: inside the fence.
        const status = `${response.status} ${response.statusText}`.trim();
        const lines = [`Status: ${status}${type ? ` · ${type}` : ""} · ${response.body.length} bytes`];
        const readable = await readableBody(response, media);
        if (readable?.title) lines.push(`Title: ${readable.title}`);
        const body =
          readable === undefined
            ? `[binary content (${type || "unknown type"}); use save_to to store it in the workspace]`
            : readable.text;
        const output = fencedPage(
          {
            requested: start,
            source: url,
            content: `${lines.join("\n")}\n\n${body}`,
            trailer: response.truncated ? `[content cut at ${maxBytes} bytes]` : "",
          },
          outputMaxChars,
        );
        return response.status >= 400 ? fail(output) : ok(output);
      } catch (error) {
        if (error instanceof UrlRefusedError || error instanceof BlockedAddressError)
          return fail(error.message);
        if (context.signal.aborted) return fail("the fetch was interrupted");
        if (budget.timedOut) return fail(`the fetch timed out after ${timeoutMs} ms`);
        if (error instanceof FetchError) return fail(`fetching ${args.url} failed: ${error.message}`);
        return fail(fileErrorMessage(error, args.save_to ?? args.url));
      }
    },
    async preview(args, context) {
      const detail = { kind: "url", text: args.url } as const;
      if (args.save_to === undefined) return { summary: "Fetch a URL", detail };
      try {
        const paths = options.workspace.forRequest(context.request);
        const file = await paths.resolve(args.save_to);
        const refusal = await saveRefusal(paths, file);
        if (refusal !== undefined)
          return { summary: `Fetch a URL — will fail: ${reasonOnCard(refusal)}`, detail };
        const shown = pathOnCard(file.display);
        const what = file.identity ? `overwrite ${shown} (it exists)` : `save it to ${shown}`;
        return { summary: `Fetch a URL and ${what}`, detail };
      } catch (error) {
        const failure = reasonOnCard(fileErrorMessage(error, args.save_to));
        return { summary: `Fetch a URL — will fail: ${failure}`, detail };
      }
    },
  });
}
