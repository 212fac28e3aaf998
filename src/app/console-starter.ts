/**
 * Runs the console channel beside (or instead of) the platform channels: a terminal chat on the
 * process's stdin / stdout. The end of its input means "no console", never a crash: when it is
 * the only channel the app stops cleanly with a line saying why — once start-up has finished, so
 * the shutdown never races it — and otherwise the service keeps running for the other channels.
 * Ctrl-C at an idle prompt counts as SIGINT (a second one forces exit). The console is a
 * ChannelAdapter like the platforms, but never supervised: it has no connection to lose.
 */
import { ConsoleChannel } from "../channels/console/console-channel.js";
import type { AppIo, ChannelContext } from "./app-parts.js";
import { registerOutputs } from "./channel-starter.js";

export interface ConsoleStartOptions {
  /** The platform channels running beside the console. */
  readonly otherChannels: readonly string[];
  /** Resolves once start-up has finished (or failed). */
  readonly started: Promise<void>;
}

const ONLY_CHANNEL_ENDED =
  "Console input ended and no other channel is configured, so Coworker is stopping. " +
  "Run it in a terminal (docker run -it) to chat, or set Slack / Telegram tokens (see .env.example).\n";

/** Start the console channel on `io`; its end of input stops the app only when it is alone. */
export function startConsoleChannel(context: ChannelContext, io: AppIo, options: ConsoleStartOptions): void {
  const channel = new ConsoleChannel({
    service: context.service,
    input: io.stdin,
    output: io.stdout,
    onInterrupt: () => context.shutdown.signal("SIGINT"),
  });
  registerOutputs(channel, context.service);
  void channel.start();
  context.readiness.register(`channel:${channel.platform}`, () => {
    const health = channel.health();
    return { ok: health.ready, detail: health.state };
  });
  context.shutdown.onStopIntake(channel.platform, () => channel.stop());
  void channel.finished
    .then(() => options.started)
    .then(() => {
      if (context.shutdown.stopping) return;
      if (options.otherChannels.length === 0) {
        io.stderr.write(ONLY_CHANNEL_ENDED);
        void context.shutdown.run("console input ended");
        return;
      }
      io.stderr.write(
        `Console input ended; Coworker keeps running for ${options.otherChannels.join(", ")} (Ctrl-C or SIGTERM stops it).\n`,
      );
    });
}
