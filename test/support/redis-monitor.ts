/**
 * Test support: watch what a Redis server is asked while some work runs (MONITOR) — every command
 * a client sent (each one round trip at most), and apart from those the commands scripts ran
 * inside Redis — so tests and the scale bench can count a turn's round trips. PINGs and the
 * coordination's heartbeat PUBLISHes are left out.
 */
import net from "node:net";
import { eventually } from "./eventually.js";

/** One command MONITOR showed: its name (upper case), whether a script ran it, and the whole line. */
export interface MonitoredCommand {
  readonly name: string;
  readonly inScript: boolean;
  readonly line: string;
}

/** The commands the Redis on `port` ran while `work` ran (and `settleMs` after, for background writes). */
export async function monitorCommands(
  port: number,
  work: () => Promise<void>,
  settleMs = 200,
): Promise<MonitoredCommand[]> {
  const socket = net.connect(port, "127.0.0.1");
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.once("connect", () => resolve());
  });
  let text = "";
  socket.on("data", (chunk) => {
    text += chunk.toString();
  });
  socket.write("MONITOR\r\n");
  await eventually(() => text.startsWith("+OK"), "MONITOR to start");
  const from = text.length;
  try {
    await work();
    await new Promise((resolve) => setTimeout(resolve, settleMs));
  } finally {
    socket.destroy();
  }
  return text
    .slice(from)
    .split("\r\n")
    .flatMap((line) => {
      // +1796191170.096021 [0 127.0.0.1:53210] "SET" "key" … — or [0 lua] for a command a script ran.
      const match = /^\+[\d.]+ \[\d+ ([^\]]+)\] "([^"]+)"/.exec(line);
      // PINGs are the clients' link watch (a second apart), no part of the work.
      // So are the heartbeats a coordination publishes to itself (its pub/sub link's watch).
      if (!match || match[2]!.toUpperCase() === "PING") return [];
      if (
        match[2]!.toUpperCase() === "PUBLISH" &&
        /^"[^"]*coord:heartbeat:/.test(line.slice(match[0].length + 1))
      )
        return [];
      return [{ name: match[2]!.toUpperCase(), inScript: match[1] === "lua", line }];
    });
}
