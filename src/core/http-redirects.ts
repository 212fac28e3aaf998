/**
 * The HTTP statuses that send a request on to another address (the `location` header): the ones
 * a download that follows redirects by hand, checking each hop, treats as a hop. web_fetch and
 * Slack's file downloads share it.
 */
export const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
