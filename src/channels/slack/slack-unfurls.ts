/**
 * NO_UNFURLS: the arguments every chat.postMessage of ours (and every slash-command reply through
 * its response_url) carries, so Slack never fetches a URL in what we post. Much of it is
 * model-written (answers, cards, send_message, captions), and a prompt-injected model could put a
 * secret into a URL: Slack's unfurler would fetch it by itself, handing the secret to that server
 * without anyone clicking. chat.postMessage unfurls media by default (unfurl_media defaults to
 * true), so both flags are set, always.
 *
 * Only a message's first post needs them: chat.update takes no unfurl arguments (the web-api's
 * ChatUpdateArguments has none; the fake Slack and the platform notes know of none), and the
 * original post's setting holds for its edits. files.uploadV2's `initial_comment` has no unfurl
 * control, so a file's caption goes out as a post of its own (slack-upload.ts). chat.startStream
 * takes no unfurl arguments either: a native stream's unfurling is Slack's to decide.
 */
export const NO_UNFURLS = Object.freeze({ unfurl_links: false, unfurl_media: false } as const);
