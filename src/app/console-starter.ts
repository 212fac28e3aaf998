/**
 * Runs the console channel as the app's channel when no platform has credentials: a terminal
 * chat on the process's stdin / stdout. When its input ends (EOF, /quit) the app shuts down;
 * Ctrl-C at an idle prompt counts as SIGINT (a second one forces exit).
 */
import { ConsoleChannel } from "../channels/console/console-channel.js";
import type { AppIo, ChannelContext, RunningChannel } from "./app-parts.js";

/** Start the console channel on `io` and tie its end to the app's shutdown. */
export function startConsoleChannel(context: ChannelContext, io: AppIo): RunningChannel {
  const channel = new ConsoleChannel({
    service: context.service,
    input: io.stdin,
    output: io.stdout,
    onInterrupt: () => context.shutdown.signal("SIGINT"),
  });
  channel.start();
  void channel.finished.then(() => context.shutdown.run("console input ended"));
  return {
    description: "console",
    connected: () => true,
    stopIntake: () => channel.stopIntake(),
    close: async () => undefined,
  };
}
