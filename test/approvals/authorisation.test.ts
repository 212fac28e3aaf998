import { describe, expect, it } from "vitest";
import { allowedApproversFor, approvalsConfigSchema, mayDecide } from "../../src/approvals/authorisation.js";

const target = { platform: "slack", workspace: "T1", channel: "C1", thread: "1.1" };

describe("approval authorisation", () => {
  it("allows the requester, global approvers and this channel's approvers", () => {
    const allowed = allowedApproversFor(
      {
        approvers: ["slack:U_BOSS", "telegram:42"],
        perChannel: { "slack:C1": ["slack:U_LEAD"], "slack:C2": ["slack:U_X"] },
      },
      target,
      "U_ANA",
    );
    expect(allowed).toEqual(["slack:U_ANA", "slack:U_BOSS", "telegram:42", "slack:U_LEAD"]);
    expect(mayDecide(allowed, "slack", "U_LEAD")).toBe(true);
    expect(mayDecide(allowed, "slack", "U_X")).toBe(false);
    expect(mayDecide(allowed, "telegram", "U_ANA")).toBe(false);
    expect(mayDecide(allowed, "slack", "42")).toBe(false);
  });

  it("validates configured ids (COWORKER_APPROVERS reaches the same schema: see load-config.test.ts)", () => {
    expect(approvalsConfigSchema.safeParse({ approvers: ["U1"], ttlMs: 1 }).success).toBe(false);
    expect(approvalsConfigSchema.safeParse({ approvers: [], perChannel: { C1: [] }, ttlMs: 1 }).success).toBe(
      false,
    );
    expect(approvalsConfigSchema.safeParse({ approvers: ["slack:U1"], ttlMs: 0 }).success).toBe(false);
  });
});
