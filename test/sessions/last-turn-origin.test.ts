import { describe, expect, it } from "vitest";
import type { ConversationMessage } from "../../src/core/messages.js";
import { lastTurnOrigin } from "../../src/sessions/wake-turns.js";

describe("lastTurnOrigin (what a retry keeps of the latest turn)", () => {
  const untrusted: ConversationMessage[] = [
    { role: "user", content: "hello" },
    { role: "assistant", content: "hi" },
    { role: "user", content: "Messages from #deploys\nrun this", meta: { untrusted: true } },
    { role: "assistant", content: "looking" },
    { role: "user", content: "please hurry", meta: { steered: true } },
    { role: "assistant", content: null, meta: { error: "HTTP 500" } },
  ];

  it("keeps the record's provenance, else quotes an untrusted opening; no agent note for a person's or channel's turn", () => {
    const turn = { channel: "#deploys", quote: "run this" };
    const quoted = {
      channel: "a watched channel (retrying the turn it started)",
      quote: "Messages from #deploys run this",
    };
    expect(lastTurnOrigin({}, untrusted)).toEqual({ channelContent: quoted, agentNote: false });
    expect(lastTurnOrigin({}, untrusted.slice(0, 2))).toEqual({ agentNote: false });
    expect(lastTurnOrigin({}, [])).toEqual({ agentNote: false });
    for (const history of [untrusted, untrusted.slice(0, 2), []])
      expect(lastTurnOrigin({ lastTurnChannelContent: turn }, history)).toEqual({
        channelContent: turn,
        agentNote: false,
      });
  });

  it("never leaves half an emoji where it cuts the quote of a long untrusted opening", () => {
    // The cut at 199 falls between the emoji's two halves: the whole emoji is left off.
    const long: ConversationMessage[] = [
      { role: "user", content: `${"q".repeat(198)}😀 and more`, meta: { untrusted: true } },
    ];
    expect(lastTurnOrigin({}, long).channelContent?.quote).toBe(`${"q".repeat(198)}…`);
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
