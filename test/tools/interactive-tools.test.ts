/**
 * The interactive tools' argument bounds: update_plan takes at most MAX_PLAN_STEPS steps of at
 * most MAX_PLAN_STEP_CHARS characters, refuses more with an error naming the limit, and tells the
 * model those limits in its schema.
 */
import { describe, expect, it } from "vitest";
import {
  interactiveTools,
  MAX_PLAN_STEP_CHARS,
  MAX_PLAN_STEPS,
  UPDATE_PLAN,
} from "../../src/tools/interactive-tools.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { makeRequest } from "../engine/helpers/harness.js";

function registry(): ToolRegistry {
  const tools = new ToolRegistry();
  for (const tool of interactiveTools) tools.register(tool);
  return tools;
}

const plan = (count: number, title = (i: number) => `Step ${i}`) =>
  JSON.stringify({
    steps: Array.from({ length: count }, (_, i) => ({ title: title(i), status: "pending" })),
  });

describe("update_plan's arguments", () => {
  it("accepts a plan of up to 50 steps of up to 200 characters", () => {
    expect(MAX_PLAN_STEPS).toBe(50);
    expect(MAX_PLAN_STEP_CHARS).toBe(200);
    expect(
      registry().validate(
        UPDATE_PLAN,
        plan(50, () => "x".repeat(200)),
        makeRequest(),
      ).ok,
    ).toBe(true);
  });

  it("refuses a longer plan, or a longer step, with an error that tells the model the limit", () => {
    const tooMany = registry().validate(UPDATE_PLAN, plan(51), makeRequest());
    expect(tooMany).toEqual({
      ok: false,
      error: expect.stringContaining("steps: a plan has at most 50 steps"),
    });
    const tooLong = registry().validate(
      UPDATE_PLAN,
      plan(3, (i) => (i === 1 ? "x".repeat(201) : "ok")),
      makeRequest(),
    );
    expect(tooLong).toEqual({
      ok: false,
      error: expect.stringContaining("steps[1].title: a step's title is at most 200 characters"),
    });
  });

  it("tells the model the limits in the schema it sees", () => {
    const schema = JSON.stringify(
      registry()
        .list()
        .find((tool) => tool.name === UPDATE_PLAN)
        ?.inputSchema.toJSONSchema(),
    );
    expect(schema).toContain('"maxItems":50');
    expect(schema).toContain('"maxLength":200');
  });
});
