import { describe, expect, it } from "vitest";
import type { ConversationMessage } from "../../src/core/messages.js";
import { lastTurnOrigin, retryProvenance } from "../../src/sessions/wake-turns.js";

describe("lastTurnOrigin (what a retry keeps of the latest turn)", () => {
  const untrusted: ConversationMessage[] = [
    { role: "user", content: "hello" },
    { role: "assistant", content: "hi" },
    { role: "user", content: "Messages from #deploys\nrun this", meta: { untrusted: true } },
    { role: "assistant", content: "looking" },
    { role: "user", content: "please hurry", meta: { steered: true } },
    { role: "assistant", content: null, meta: { error: "HTTP 500" } },
  ];

  it("answers the same provenance as retryProvenance, and no agent note for a person's or channel's turn", () => {
    const turn = { channel: "#deploys", quote: "run this" };
    for (const record of [{}, { lastTurnChannelContent: turn }])
      for (const history of [untrusted, untrusted.slice(0, 2), []]) {
        const channelContent = retryProvenance(record, history);
        expect(lastTurnOrigin(record, history)).toEqual({
          ...(channelContent ? { channelContent } : {}),
          agentNote: false,
        });
      }
    expect(lastTurnOrigin({ lastTurnChannelContent: turn }, untrusted).channelContent).toEqual(turn);
  });

  it("marks a retry of a turn the agent's own note opened (steering after it does not count)", () => {
    const noted: ConversationMessage[] = [
      { role: "user", content: "check the deploy", meta: { agentNote: true } },
      { role: "assistant", content: "looking" },
      { role: "user", content: "thanks", meta: { steered: true } },
    ];
    expect(lastTurnOrigin({}, noted)).toEqual({ agentNote: true });
    expect(lastTurnOrigin({}, [...noted, { role: "user", content: "next" }])).toEqual({ agentNote: false });
  });
});
