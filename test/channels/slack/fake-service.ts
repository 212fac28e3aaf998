/**
 * An in-test ConversationService: records what the channel hands it and answers with
 * configurable results, so the Slack adapter can be tested without the session layer.
 */
import type { PressResult } from "../../../src/core/button-press.js";
import type { ReceiveResult } from "../../../src/sessions/contracts.js";
import type { ThreadTarget } from "../../../src/core/thread-target.js";
import { RecordingService } from "../../support/recording-service.js";

export class FakeService extends RecordingService {
  pressResult: PressResult = { status: "accepted", message: "ok" };
  commandReply = "done";
  /** Sessions known to `hasSession` (session keys). */
  readonly sessions = new Set<string>();

  protected handle(): ReceiveResult {
    return { status: "started" };
  }

  protected decide(): PressResult {
    return this.pressResult;
  }

  protected reply(): string {
    return this.commandReply;
  }

  async hasSession(target: ThreadTarget): Promise<boolean> {
    return this.sessions.has(`${target.channel}:${target.thread}`);
  }
}
