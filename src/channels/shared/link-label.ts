/**
 * Whether a link's visible text passes for another address than its target: text that reads as a
 * URL, a domain or an e-mail address (`https://sso.example.com/login`, `sso.example.com`,
 * `it@example.com`) naming another host than the one the link opens. A prompt-injected answer
 * could otherwise show a trusted address over a phishing one; the markdown walk then shows the
 * real target beside the text (markdown-walk.ts), on every platform. Hosts are compared as the
 * URL parser normalises them (lower case, punycode), a leading `www.` ignored.
 */

/** A URL with a scheme, one word. */
const URL_TEXT = /^[a-z][a-z0-9+.-]*:\/\/\S+$/i;
/** A host name with a letters-only top-level label, then an optional port, path, query or fragment. */
const DOMAIN_TEXT = /^(?:[\p{L}\p{N}-]+\.)+\p{L}{2,}\.?(?::\d+)?(?:[/?#]\S*)?$/iu;
/** An e-mail address (optionally as `mailto:`). */
const EMAIL_TEXT = /^(?:mailto:)?[^\s@/]+@([^\s@/]+)$/i;

/** The host `url` names, normalised; undefined when it names none. */
function hostOfUrl(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    if (parsed.protocol === "mailto:") {
      const domain = EMAIL_TEXT.exec(url)?.[1];
      return domain === undefined ? undefined : hostOfUrl(`http://${domain}`);
    }
    const host = parsed.hostname.replace(/\.$/, "").replace(/^www\./, "");
    return host.length > 0 ? host : undefined;
  } catch {
    return undefined;
  }
}

/** The host the visible text of a link reads as, when it reads as an address at all. */
function hostOfText(text: string): string | undefined {
  const word = text.trim();
  if (URL_TEXT.test(word)) return hostOfUrl(word) ?? word;
  const email = EMAIL_TEXT.exec(word);
  if (email) return hostOfUrl(`http://${email[1]}`) ?? word;
  if (DOMAIN_TEXT.test(word)) return hostOfUrl(`http://${word}`) ?? word;
  return undefined;
}

/**
 * Whether the link text `label` (its plain text) reads as an address on another host than `href`
 * opens (also when `href` names no host at all).
 */
export function labelPosesAsOtherHost(label: string, href: string): boolean {
  const shown = hostOfText(label);
  return shown !== undefined && shown !== hostOfUrl(href.trim());
}
