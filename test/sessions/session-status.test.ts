/**
 * What `grants` and `status` show of an "Allow anyway": for whom and until when it holds, and
 * nothing of one stored before those were recorded (it can never be used), the numbers of the
 * others staying the ones `grants revoke n` takes.
 */
import { describe, expect, it } from "vitest";
import type { Grant } from "../../src/engine/permissions/grants.js";
import { describeGrants, describeStatus } from "../../src/sessions/session-status.js";
import { sessionRecord } from "./helpers/harness.js";

const bound: Grant = {
  kind: "once",
  tool: "write_note",
  args: '{"path":"a.md"}',
  requester: "slack:U0123",
  expiresAt: "2026-12-06T05:38:00.000Z",
  by: "Boss",
};
const unbound: Grant = { kind: "once", tool: "write_note", args: '{"path":"b.md"}' };
const always: Grant = { kind: "tool", tool: "read_file" };

describe("grants and status text", () => {
  it("says for whom and until when an Allow anyway holds", () => {
    expect(describeGrants([bound])).toBe(
      '1. allow once (over the reviewer) for slack:U0123, until 2026-12-06 05:38 UTC: write_note {"path":"a.md"} (granted by Boss)',
    );
  });

  it("leaves out an Allow anyway that names no one, keeping the others' numbers for revoke", () => {
    expect(describeGrants([unbound, always, unbound, bound])).toBe(
      [
        "2. always allow tool read_file",
        '4. allow once (over the reviewer) for slack:U0123, until 2026-12-06 05:38 UTC: write_note {"path":"a.md"} (granted by Boss)',
      ].join("\n"),
    );
    expect(describeGrants([unbound])).toBe("No standing grants in this session.");
    const status = (grants: readonly Grant[]) =>
      describeStatus({
        record: { ...sessionRecord("t1"), grants },
        running: false,
        suspended: false,
        queued: 0,
        extras: [],
      });
    expect(status([unbound])).toContain("Grants: none");
    expect(status([unbound, always])).toContain("Grants:\n2. always allow tool read_file\nUsage:");
  });
});
