/**
 * How a stdio MCP server's stdout becomes messages: one JSON-RPC message a line, and no line
 * longer than a cap. A server is not trusted, and the SDK's own buffer kept everything up to a
 * newline in one Buffer it grew by copying and searched whole for the newline on every chunk: the
 * work grew with the square of the line (reaching 32 MB took about 6 s on the event loop, in
 * stalls of a third of a second, with every chat waiting), and past its cap it began holding the
 * flood again. Here each chunk is searched once, the pieces of a line are joined once, and past
 * the cap the line is refused and all the server writes after it is dropped. The SDK's parser is
 * passed in, so this file (and the error the connection recognises) does not load the SDK, which
 * is imported only when a server starts.
 */
import { formatBytes } from "../../core/attachment.js";

/** A stdio MCP server wrote more than the cap without ending the message; it is to be stopped. */
export class McpMessageTooLargeError extends Error {
  override readonly name = "McpMessageTooLargeError";

  constructor(readonly maxBytes: number) {
    super(`the MCP server sent a message over ${formatBytes(maxBytes)}`);
  }
}

const NEWLINE = 0x0a;

/**
 * Stands in for the SDK's ReadBuffer (same three methods): `append` takes each stdout chunk and
 * throws McpMessageTooLargeError once a line would pass `maxBytes`; from then on it drops
 * everything. `readMessage` parses the next finished line, or returns null.
 */
export class StdioMessageBuffer<Message> {
  /** The unfinished line, in the pieces it arrived in, and their total size. */
  private pieces: Buffer[] = [];
  private held = 0;
  /** Finished lines not read yet, from `next` on. */
  private lines: Buffer[] = [];
  private next = 0;
  private refused = false;

  constructor(
    private readonly maxBytes: number,
    private readonly parse: (line: string) => Message,
  ) {}

  /** Take one chunk of stdout; throws McpMessageTooLargeError when a line runs past the cap. */
  append(chunk: Buffer): void {
    if (this.refused) return;
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      this.hold(chunk.subarray(start, end));
      this.lines.push(Buffer.concat(this.pieces, this.held));
      this.pieces = [];
      this.held = 0;
      start = end + 1;
    }
    this.hold(chunk.subarray(start));
  }

  private hold(piece: Buffer): void {
    if (this.held + piece.length > this.maxBytes) {
      this.refused = true;
      this.clear();
      throw new McpMessageTooLargeError(this.maxBytes);
    }
    if (piece.length === 0) return;
    this.pieces.push(piece);
    this.held += piece.length;
  }

  /** The next finished message, or null; throws what `parse` throws for a line that is not one. */
  readMessage(): Message | null {
    const line = this.lines[this.next];
    if (line === undefined) {
      this.lines = [];
      this.next = 0;
      return null;
    }
    this.next += 1;
    return this.parse(line.toString("utf8").replace(/\r$/, ""));
  }

  /** Let go of everything held (the SDK calls this when the transport closes). */
  clear(): void {
    this.pieces = [];
    this.held = 0;
    this.lines = [];
    this.next = 0;
  }
}
