/**
 * The interactive tools: update_plan, ask_user and propose_plan.
 *
 * They are declared like any tool (so the model sees their schemas and the registry validates
 * their arguments) but the TurnEngine intercepts them: it emits the plan, asks the person through
 * the injected Asker, or submits the plan to the PlanApprover. Their own `execute` only answers
 * when something outside the engine calls them directly.
 */
import { z } from "zod";
import { COMMAND_NAMES, parseTextCommand } from "../core/text-commands.js";
import { defineTool, fail, labelText } from "../core/tool.js";

export const UPDATE_PLAN = "update_plan";
export const ASK_USER = "ask_user";
export const PROPOSE_PLAN = "propose_plan";

/** The names the engine intercepts. */
export const INTERACTIVE_TOOL_NAMES: ReadonlySet<string> = new Set([UPDATE_PLAN, ASK_USER, PROPOSE_PLAN]);

const handledByEngine = (name: string) => async () =>
  fail(`${name} is handled by the conversation engine and cannot run on its own.`);

/** The most steps a plan may have, and the longest step title: a plan is a short checklist. */
export const MAX_PLAN_STEPS = 50;
export const MAX_PLAN_STEP_CHARS = 200;

export const updatePlanInput = z.object({
  steps: z
    .array(
      z.object({
        title: z
          .string()
          .min(1)
          .max(MAX_PLAN_STEP_CHARS, {
            message: `a step's title is at most ${MAX_PLAN_STEP_CHARS} characters: keep each step to one short line`,
          })
          .describe(`One short step (at most ${MAX_PLAN_STEP_CHARS} characters)`),
        status: z.enum(["pending", "in_progress", "done"]),
      }),
    )
    .max(MAX_PLAN_STEPS, {
      message: `a plan has at most ${MAX_PLAN_STEPS} steps: group the work into fewer, larger steps`,
    })
    .describe(
      `The whole plan, in order (at most ${MAX_PLAN_STEPS} steps); send it again with updated statuses as you progress`,
    ),
});

export const updatePlanTool = defineTool({
  name: UPDATE_PLAN,
  description:
    "Show the user your plan for this task as a short checklist and keep it current: send the full list each time a step starts or finishes.",
  inputSchema: updatePlanInput,
  category: "interactive",
  risk: "low",
  concurrent: false,
  label: (args) =>
    `${args.steps.filter((step) => step.status === "done").length}/${args.steps.length} steps done`,
  execute: handledByEngine(UPDATE_PLAN),
});

/**
 * What one ask_user card can hold: its questions and options become one message with a button per
 * option, and Slack cuts a button's text at 75 characters, holds 25 buttons in a row of them,
 * and Telegram about 100 buttons and 4,096 characters in a message (../shared/platform-notes.md).
 */
export const MAX_QUESTIONS = 10;
export const MAX_QUESTION_CHARS = 300;
export const MAX_OPTIONS = 25;
export const MAX_ALL_OPTIONS = 50;
export const MAX_OPTION_CHARS = 75;

const questionText = z
  .string()
  .max(MAX_QUESTION_CHARS, { message: `a question is at most ${MAX_QUESTION_CHARS} characters` });
/**
 * Whether an option, typed by the person, would be a thread command (`stop`, `new`, `mode auto`,
 * anything starting with `/`): a model that offered it would take the person's command for an
 * answer — their `stop` no longer stopping the turn.
 */
function readsAsCommand(option: string): boolean {
  return option.trimStart().startsWith("/") || parseTextCommand(option) !== undefined;
}

const optionList = z
  .array(
    z
      .string()
      .min(1)
      .max(MAX_OPTION_CHARS, {
        message: `an option is at most ${MAX_OPTION_CHARS} characters: a button's label`,
      })
      .refine((option) => !readsAsCommand(option), {
        message: `an option may not be a thread command (${COMMAND_NAMES.join(", ")}, with their arguments) or start with '/': the person typing it would run the command; word it otherwise ('start a new branch')`,
      }),
  )
  .max(MAX_OPTIONS, {
    message: `a question has at most ${MAX_OPTIONS} options: ask without options, or narrow the choice first`,
  });

const questionInput = z.object({
  question: questionText.min(1),
  options: optionList.optional().describe(`Suggested answers the user can pick (at most ${MAX_OPTIONS})`),
});

export const askUserInput = z
  .object({
    question: questionText.optional().describe("A single question for the user"),
    options: optionList.optional().describe("Suggested answers for the single question"),
    questions: z
      .array(questionInput)
      .max(MAX_QUESTIONS, { message: `ask at most ${MAX_QUESTIONS} questions at once` })
      .optional()
      .describe(`Several questions asked together (at most ${MAX_QUESTIONS})`),
  })
  .refine((v) => (v.question ?? "").trim() !== "" || (v.questions?.length ?? 0) > 0, {
    message: "ask at least one question: set `question` or a non-empty `questions` list",
  })
  .refine(
    (v) =>
      (v.options?.length ?? 0) + (v.questions ?? []).reduce((n, q) => n + (q.options?.length ?? 0), 0) <=
      MAX_ALL_OPTIONS,
    {
      message: `one ask_user call offers at most ${MAX_ALL_OPTIONS} options in all: ask fewer questions at once`,
    },
  )
  .refine((v) => (v.question?.trim() ? 1 : 0) + (v.questions?.length ?? 0) <= MAX_QUESTIONS, {
    message: `ask at most ${MAX_QUESTIONS} questions at once`,
  });

export const askUserTool = defineTool({
  name: ASK_USER,
  description:
    "Ask the user a question and wait for the answer. Use it when you cannot proceed without a decision only they can make.",
  inputSchema: askUserInput,
  category: "interactive",
  risk: "low",
  concurrent: false,
  label(args) {
    const questions = [args.question ?? "", ...(args.questions ?? []).map((q) => q.question)];
    const asked = questions.map((question) => labelText(question)).filter((question) => question !== "");
    return asked.length > 1 ? `${asked[0]} (+${asked.length - 1} more)` : (asked[0] ?? "");
  },
  execute: handledByEngine(ASK_USER),
});

export const proposePlanInput = z.object({
  plan: z
    .string()
    .min(1)
    .describe("What you will change, in which files, and how you will verify it (markdown)"),
});

export const proposePlanTool = defineTool({
  name: PROPOSE_PLAN,
  description:
    "Plan mode only: present your implementation plan for the user's approval. If approved, the session leaves plan mode and you implement it; if not, revise it using the feedback.",
  inputSchema: proposePlanInput,
  category: "interactive",
  risk: "low",
  concurrent: false,
  label: (args) => labelText(args.plan),
  execute: handledByEngine(PROPOSE_PLAN),
});

/** All three interactive tools, ready to register. */
export const interactiveTools = [updatePlanTool, askUserTool, proposePlanTool] as const;
