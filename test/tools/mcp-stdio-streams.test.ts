/**
 * How a stdio MCP server's output is read, without a server: stdout framed into messages with a
 * cap on one (StdioMessageBuffer) and stderr into bounded log lines (readStderrLines).
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { registerSecret } from "../../src/logging/redact.js";
import { readStderrLines } from "../../src/tools/mcp/stderr-lines.js";
import { McpMessageTooLargeError, StdioMessageBuffer } from "../../src/tools/mcp/stdio-message-buffer.js";

function drain<T>(buffer: StdioMessageBuffer<T>): T[] {
  const messages: T[] = [];
  for (let message = buffer.readMessage(); message !== null; message = buffer.readMessage()) {
    messages.push(message);
  }
  return messages;
}

describe("StdioMessageBuffer", () => {
  it("frames lines split across chunks and several in one chunk, without a trailing \\r", () => {
    const buffer = new StdioMessageBuffer(100, (line) => JSON.parse(line) as unknown);
    buffer.append(Buffer.from('{"a":'));
    expect(buffer.readMessage()).toBeNull();
    buffer.append(Buffer.from('1}\r\n{"b":2}\n{"c"'));
    buffer.append(Buffer.from(":3}\n"));
    expect(drain(buffer)).toEqual([{ a: 1 }, { b: 2 }, { c: 3 }]);
  });

  it("a line that is not a message throws from readMessage and the next one still reads", () => {
    const buffer = new StdioMessageBuffer(100, (line) => JSON.parse(line) as unknown);
    buffer.append(Buffer.from('not json\n{"ok":true}\n'));
    expect(() => buffer.readMessage()).toThrow(SyntaxError);
    expect(drain(buffer)).toEqual([{ ok: true }]);
  });

  it("takes a line of exactly the cap and refuses one byte more, then drops everything", () => {
    const buffer = new StdioMessageBuffer(10, (line) => line);
    buffer.append(Buffer.from("a".repeat(6)));
    buffer.append(Buffer.from(`${"a".repeat(4)}\n`));
    expect(drain(buffer)).toEqual(["a".repeat(10)]);
    buffer.append(Buffer.from("b".repeat(10)));
    expect(() => buffer.append(Buffer.from("b\nshort\n"))).toThrow(new McpMessageTooLargeError(10));
    buffer.append(Buffer.from("short\n"));
    expect(drain(buffer)).toEqual([]);
  });
});

/** The lines readStderrLines reports for `chunks` written to a stream that then ends. */
async function stderrLines(chunks: (string | Buffer)[], maxChars = 10): Promise<string[]> {
  const stream = new PassThrough();
  const lines: string[] = [];
  readStderrLines(stream, maxChars, (line) => lines.push(line));
  const ended = new Promise((resolve) => stream.on("end", resolve));
  for (const chunk of chunks) stream.write(chunk);
  stream.end();
  await ended;
  return lines;
}

describe("readStderrLines", () => {
  it("joins a line split across chunks, skips blank ones and reports an unended last line", async () => {
    expect(await stderrLines(["one\ntw", "o\n\n  \nthree"])).toEqual(["one", "two", "three"]);
  });

  it("reports a line longer than the cap once, cut, and drops the rest of it", async () => {
    const flood = Array.from({ length: 50 }, () => "x".repeat(1000));
    expect(await stderrLines([...flood, "\nafter\n"])).toEqual(["x".repeat(10), "after"]);
    expect(await stderrLines(["y".repeat(25)])).toEqual(["y".repeat(10)]);
  });

  it("scrubs a line before cutting it, so a secret across the cut is not logged in part", async () => {
    const secret = "stderr-secret-5f6e7d8c9b0a";
    registerSecret(secret);
    const before = "a".repeat(490);
    // An ended line, and one still being written when it passes the cap.
    const ended = await stderrLines([`${before}${secret} more\n`], 500);
    const flooding = await stderrLines([`${before}${secret}`, "z".repeat(5000)], 500);
    for (const [line] of [ended, flooding]) {
      expect(line).toBe(`${before}[redacted]`);
      expect(line).not.toContain(secret.slice(0, 6));
    }
  });

  it("does not cut a character in two, between chunks or at the cap", async () => {
    const euro = Buffer.from("€\n");
    expect(await stderrLines([euro.subarray(0, 1), euro.subarray(1)])).toEqual(["€"]);
    expect(await stderrLines([`${"a".repeat(9)}😀\n`])).toEqual(["a".repeat(9)]);
  });
});
