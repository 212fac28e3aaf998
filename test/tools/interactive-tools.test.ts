/**
 * The interactive tools' argument bounds: update_plan takes at most MAX_PLAN_STEPS steps of at
 * most MAX_PLAN_STEP_CHARS characters, refuses more with an error naming the limit, and tells the
 * model those limits in its schema; ask_user takes what one card can hold (questions, options and
 * their lengths), so every option gets a button that can be pressed, and no option a person's typed
 * copy of would run as a command.
 */
import { describe, expect, it } from "vitest";
import {
  ASK_USER,
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

describe("ask_user's arguments", () => {
  const ask = (args: object) => registry().validate(ASK_USER, JSON.stringify(args), makeRequest());
  const options = (count: number, text = (i: number) => `v${i}`) =>
    Array.from({ length: count }, (_, i) => text(i));

  it("accepts what one card holds: 25 options of 75 characters, 10 questions, 50 options in all", () => {
    expect(ask({ question: "Which?", options: options(25, () => "x".repeat(75)) }).ok).toBe(true);
    const ten = Array.from({ length: 10 }, (_, i) => ({ question: `Q${i}?`, options: options(5) }));
    expect(ask({ questions: ten }).ok).toBe(true);
  });

  it("refuses more with an error naming the limit", () => {
    expect(ask({ question: "Which version?", options: options(1001) })).toEqual({
      ok: false,
      error: expect.stringContaining("a question has at most 25 options"),
    });
    expect(ask({ question: "Which?", options: ["x".repeat(76)] })).toEqual({
      ok: false,
      error: expect.stringContaining("an option is at most 75 characters"),
    });
    expect(ask({ question: "x".repeat(301) })).toEqual({
      ok: false,
      error: expect.stringContaining("a question is at most 300 characters"),
    });
    const eleven = Array.from({ length: 11 }, (_, i) => ({ question: `Q${i}?` }));
    expect(ask({ questions: eleven })).toEqual({
      ok: false,
      error: expect.stringContaining("at most 10 questions"),
    });
    expect(ask({ question: "Q?", questions: eleven.slice(1) })).toEqual({
      ok: false,
      error: expect.stringContaining("at most 10 questions"),
    });
    const many = Array.from({ length: 3 }, (_, i) => ({ question: `Q${i}?`, options: options(20) }));
    expect(ask({ questions: many })).toEqual({
      ok: false,
      error: expect.stringContaining("at most 50 options in all"),
    });
  });

  it("refuses an option that, typed, would be a thread command or starts with '/', and takes words that only start like one", () => {
    for (const option of ["stop", " New ", "status", "mode auto", "model gpt-4o", "/deploy", "/new"])
      expect(ask({ question: "Which?", options: [option, "go on"] })).toEqual({
        ok: false,
        error: expect.stringContaining("an option may not be a thread command"),
      });
    expect(ask({ questions: [{ question: "Which?", options: ["go on", "stop"] }] }).ok).toBe(false);
    const words = ["Approve", "Deny", "mode", "New branch", "Stop the deploy", "the status quo"];
    expect(ask({ question: "Which?", options: words }).ok).toBe(true);
  });
});
