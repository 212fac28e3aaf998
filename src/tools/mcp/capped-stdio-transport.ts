/**
 * The transport stdio MCP servers are run with: the SDK's StdioClientTransport (its spawn, clean
 * environment, cwd and stop sequence, unchanged) reading stdout through a StdioMessageBuffer, so
 * one message holds at most a cap in memory. The SDK makes its buffer itself and offers no way to
 * pass one, so the constructor replaces it. Past the cap the SDK's own error path runs: onerror
 * gets McpMessageTooLargeError, then the transport closes and the server is stopped. This file
 * loads the SDK: import it only when a stdio server starts.
 */
import { StdioClientTransport, type StdioServerParameters } from "@modelcontextprotocol/sdk/client/stdio.js";
import { deserializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import { StdioMessageBuffer } from "./stdio-message-buffer.js";

/** StdioClientTransport whose server may write at most `maxMessageBytes` of one message. */
export class CappedStdioClientTransport extends StdioClientTransport {
  constructor(server: StdioServerParameters, maxMessageBytes: number) {
    super(server);
    // biome-ignore lint/complexity/useLiteralKeys: the field is private to the SDK's class; brackets reach it
    this["_readBuffer"] = new StdioMessageBuffer(maxMessageBytes, deserializeMessage);
  }
}
