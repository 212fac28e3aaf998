/**
 * The permission engine: for each tool call the model proposes, decides allow, ask a person, or
 * deny — from the hard-deny rules, the session's mode, the call's category and provenance, and
 * the standing grants people gave. One pure decision per call, so every runner (interactive,
 * reviewed, auto, woken by channel content) applies the same rules, and the audit trail names the
 * rule that decided.
 */
import { modeOffersTool } from "../../tools/registry.js";
import { trustedCategory } from "../../tools/trusted-category.js";
import type { AnyTool } from "../../core/tool.js";
import { channelContentSchema } from "../../core/channel-content.js";
import type { AlwaysOption, Provenance, ToolCategory } from "../../core/events.js";
import type { PermissionMode } from "../../core/modes.js";
import type { ConversationExecutionRequest } from "../../core/request.js";
import type { GrantSet } from "./grants.js";
import { downloadExecution } from "./download-execution.js";
import { compileHardDenyRules, type HardDenyRule, matchHardDeny } from "./hard-deny.js";
import { classifyReadOnly } from "./readonly-command.js";
import { steeringPathOf } from "../../tools/files/steering-files.js";
import { grantHost } from "../../tools/web/grant-host.js";

export interface PermissionPolicy {
  /** Commands starting with one of these (and using no shell operators) run without asking. */
  readonly allowedCommandPrefixes: readonly string[];
  /** Regex sources added to the built-in hard-deny rules. */
  readonly hardDenyPatterns: readonly string[];
}

export type DecisionAction = "allow" | "ask" | "deny";

export interface Decision {
  readonly action: DecisionAction;
  readonly reason: string;
  /** Which rule decided, for the audit trail (e.g. "hard_deny", "grant:command", "mode:auto"). */
  readonly rule: string;
  readonly alwaysOptions: readonly AlwaysOption[];
  /**
   * An ask whose floor is a person: no reviewer model may answer it (see src/engine/reviewer), and
   * it weighs as loosening the session, so only those who may loosen it may approve it.
   */
  readonly humanOnly?: boolean;
  /**
   * Why no reviewer model may answer this ask, though it is otherwise an ordinary one: whoever
   * may approve an ordinary card may approve it (unlike humanOnly, it does not weigh as loosening
   * the session). A read that would widen the conversation's audience is one: the reviewer sees a
   * read and its arguments, not who reads along in the thread.
   */
  readonly personFloor?: string;
  /** Arguments to run with instead of the proposed ones (a read-only git line gets its protection). */
  readonly runArgs?: Readonly<Record<string, unknown>>;
}

export interface DecisionContext {
  readonly mode: PermissionMode;
  readonly grants: GrantSet;
  /**
   * The downloaded files to decide against: the session's, and for a call of a step the files its
   * earlier calls would download (step-downloads.ts), never added to the session's own set.
   */
  readonly facts: { readonly downloadedFiles: ReadonlySet<string> };
  readonly provenance: Provenance;
  /** The turn's request: lets a messaging call into the conversation's own thread run unasked. */
  readonly request?: ConversationExecutionRequest | undefined;
}

const NO_OPTIONS: readonly AlwaysOption[] = Object.freeze([]);
/** Why a call that widens the conversation's audience is a person's to decide (Decision.personFloor). */
const WIDER_AUDIENCE_FLOOR =
  "the call would show this conversation's audience what not all of them may see: only a person in it can judge who reads along";
/** Why running downloaded code is a person's to decide (Decision.personFloor). */
const DOWNLOAD_FLOOR = "the command runs code the agent downloaded";
const SHELL_OPERATORS = /[;&|<>`$()\n\\]/;

/**
 * The provenance of a request: channel content when `metadata.channelContent` is present — also
 * when it is malformed (it must not gain a person's trust). A person's request is answered
 * without zod: a failed parse builds an error object, about 10 µs, and this runs every turn.
 */
export function provenanceOf(request: ConversationExecutionRequest): Provenance {
  const content = request.metadata.channelContent;
  if (content === undefined) return { kind: "user" };
  const parsed = channelContentSchema.safeParse(content);
  if (!parsed.success) return { kind: "channel_content", channel: "an unknown channel", quote: "" };
  const { channel, quote, subscriptionId } = parsed.data;
  return {
    kind: "channel_content",
    channel,
    quote,
    ...(subscriptionId === undefined ? {} : { subscriptionId }),
  };
}

/**
 * The host a call targets (its `url` argument) as a domain grant names it — lower-cased, with
 * `:port` when the port is not the scheme's default (grant-host.ts); undefined when absent or invalid.
 */
export function domainOf(args: Readonly<Record<string, unknown>>): string | undefined {
  if (typeof args.url !== "string") return undefined;
  try {
    return grantHost(new URL(args.url)) || undefined;
  } catch {
    return undefined;
  }
}

/** The shell command of a command tool call. */
export function commandOf(tool: AnyTool, args: Readonly<Record<string, unknown>>): string | undefined {
  return tool.grantKey === "command" && typeof args.command === "string" ? args.command : undefined;
}

/** The file a path tool's call names, as its arguments spell it. */
export function pathOf(tool: AnyTool, args: Readonly<Record<string, unknown>>): string | undefined {
  return tool.grantKey === "path" && typeof args.path === "string" ? args.path : undefined;
}

/**
 * Why a call runs code the agent downloaded (download-execution.ts), or undefined. `downloaded`:
 * the files downloaded so far (see DecisionContext.facts).
 */
export function downloadRunOf(
  tool: AnyTool,
  args: Readonly<Record<string, unknown>>,
  downloaded: ReadonlySet<string>,
): string | undefined {
  const command = commandOf(tool, args);
  return command === undefined ? undefined : downloadExecution(command, downloaded);
}

/** The steering file (steering-files.ts) a path tool's call names, as the workspace spells it. */
function steeringWriteOf(
  tool: AnyTool,
  args: Readonly<Record<string, unknown>>,
  request: ConversationExecutionRequest | undefined,
): string | undefined {
  const path = pathOf(tool, args);
  return path === undefined ? undefined : steeringPathOf(path, request?.workspace.root);
}

function matchesPrefix(command: string, prefix: string): boolean {
  const cmd = command.trim();
  const p = prefix.trim();
  if (p === "" || SHELL_OPERATORS.test(cmd)) return false;
  return cmd === p || cmd.startsWith(`${p} `);
}

/** Decides what may run, given the policy, the session mode, grants and facts. */
export class PermissionEngine {
  private readonly hardDeny: readonly HardDenyRule[];
  private readonly prefixes: readonly string[];

  /** Throws if a configured hard-deny pattern is not a valid regular expression. */
  constructor(policy: PermissionPolicy) {
    this.hardDeny = compileHardDenyRules(policy.hardDenyPatterns);
    this.prefixes = [...policy.allowedCommandPrefixes];
  }

  /** Decide one call; pure apart from reading the grants and facts. */
  decide(tool: AnyTool, args: Record<string, unknown>, ctx: DecisionContext): Decision {
    const hit = matchHardDeny(this.hardDeny, args);
    if (hit)
      return deny(
        "hard_deny",
        `blocked by a hard-deny rule (${hit.rule}): this action is never allowed, whatever the mode or approval`,
      );

    if (!modeOffersTool(tool, ctx.mode)) return deny(`mode:${ctx.mode}`, modeRefusal(tool, ctx.mode));
    // Only a built-in interactive tool keeps `interactive`; another claiming it counts as exec.
    const category = trustedCategory(tool, args);
    if (category === "read") return this.read(tool, args, ctx);
    if (category === "interactive")
      return allow("category:interactive", "interactive tools run without asking");

    const command = commandOf(tool, args);
    if (ctx.provenance.kind === "channel_content")
      return ask(
        "provenance:channel_content",
        `this turn was triggered by content from ${ctx.provenance.channel ?? "a channel"} ("${ctx.provenance.quote ?? ""}"), so every action needs a person's approval`,
        NO_OPTIONS,
      );
    const downloaded = downloadRunOf(tool, args, ctx.facts.downloadedFiles);
    if (downloaded !== undefined)
      return {
        ...ask(
          "download_execute",
          `${downloaded}; running downloaded code always needs approval`,
          NO_OPTIONS,
        ),
        personFloor: DOWNLOAD_FLOOR,
      };

    if (tool.alwaysAsks)
      return askPerson("tool:always_asks", `${tool.name} always needs a person's approval`);
    const steering = steeringWriteOf(tool, args, ctx.request);
    if (steering !== undefined)
      return askPerson(
        "steering_file",
        `${tool.name} writes ${steering}, which steers every later session: skills and AGENTS.md change only with a person's approval`,
      );

    if (ctx.mode === "auto") return allow("mode:auto", "auto mode runs everything that is not hard-denied");
    const wider = widerAudienceAsk(tool, args, category, ctx);
    if (wider !== undefined) return wider;
    if (ctx.request && tool.staysInConversation?.(args, ctx.request))
      return allow(`${category}:current_thread`, "this call only affects the conversation it was made from");
    return this.interactive(tool, args, category, command, ctx.grants);
  }

  /** A read runs unasked — unless it widens the conversation's audience (widerAudienceAsk). */
  private read(tool: AnyTool, args: Record<string, unknown>, ctx: DecisionContext): Decision {
    return (
      widerAudienceAsk(tool, args, "read", ctx) ?? allow("category:read", "read tools run without asking")
    );
  }

  private interactive(
    tool: AnyTool,
    args: Record<string, unknown>,
    category: ToolCategory,
    command: string | undefined,
    grants: GrantSet,
  ): Decision {
    if (command !== undefined) {
      const verdict = classifyReadOnly(command);
      const readOnly = verdict.readOnly;
      // A read-only command allowed without a person runs in its protected form (git without the
      // programs a repository's config can name: a planted core.fsmonitor would run on the next
      // `git status`), whichever rule allows it.
      const asProtected = (decision: Decision): Decision =>
        readOnly && verdict.command !== command
          ? { ...decision, runArgs: Object.freeze({ ...args, command: verdict.command }) }
          : decision;
      const prefix = this.prefixes.find((p) => matchesPrefix(command, p));
      if (prefix !== undefined)
        return asProtected(allow("allowed_prefix", `command matches the allowed prefix "${prefix}"`));
      if (grants.hasCommand(command))
        return asProtected(allow("grant:command", "this exact command is always allowed"));
      if (readOnly && grants.hasReadonlySession())
        return asProtected(
          allow("grant:readonly_session", "read-only commands are allowed for this session"),
        );
      if (grants.hasTool(tool.name))
        return asProtected(allow("grant:tool", `${tool.name} is always allowed`));
      const options: AlwaysOption[] = ["always_command"];
      if (readOnly) options.push("readonly_session");
      return ask("default:ask", `${tool.name} wants to run \`${command}\``, options);
    }
    if (grants.hasTool(tool.name)) return allow("grant:tool", `${tool.name} is always allowed`);
    if (tool.grantKey === "domain" && category !== "write") {
      const domain = domainOf(args);
      if (domain !== undefined && grants.hasDomain(domain))
        return allow("grant:domain", `requests to ${domain} are always allowed`);
      return ask(
        "default:ask",
        `${tool.name} (${tool.category}) wants to reach ${domain ?? "an unknown host"}`,
        domain === undefined ? NO_OPTIONS : ["always_domain"],
      );
    }
    return ask("default:ask", `${tool.name} (${category}) needs approval`, ["always_tool"]);
  }
}

function modeRefusal(tool: AnyTool, mode: PermissionMode): string {
  if (mode === "plan")
    return `the session is in plan mode (read-only): ${tool.name} is not available. Explore with read tools and present your approach with propose_plan.`;
  if (mode === "discuss")
    return `the session is in discuss mode (read-only): ${tool.name} is not available. Describe the change in chat instead.`;
  return `${tool.name} is only available in plan mode; proceed with the work directly.`;
}

function allow(rule: string, reason: string): Decision {
  return { action: "allow", rule, reason, alwaysOptions: NO_OPTIONS };
}
function deny(rule: string, reason: string): Decision {
  return { action: "deny", rule, reason, alwaysOptions: NO_OPTIONS };
}
function ask(rule: string, reason: string, alwaysOptions: readonly AlwaysOption[]): Decision {
  return { action: "ask", rule, reason, alwaysOptions: Object.freeze([...alwaysOptions]) };
}
/**
 * The ask for a call that, outside auto mode, would show the conversation's audience what not all
 * of them may see (ToolDefinition.widensAudience: a read of another channel into a shared thread,
 * or a subscription that reads every later message of it there): a person decides, never a
 * reviewer model (personFloor) — only a person in the thread can judge who reads along. Each such
 * call is asked: no standing grant covers it and its card offers no "always". Which channel or
 * listing is read, and whose, differs from call to call (a grant one member gave for their own
 * read would carry another member's private channel into the thread), and it only asks in a
 * shared thread, where every such call has its own audience question. Undefined when it does not.
 */
function widerAudienceAsk(
  tool: AnyTool,
  args: Record<string, unknown>,
  category: ToolCategory,
  ctx: DecisionContext,
): Decision | undefined {
  const widens = ctx.mode === "auto" || !ctx.request ? undefined : tool.widensAudience?.(args, ctx.request);
  if (widens === undefined) return undefined;
  return { ...ask(`${category}:wider_audience`, widens, NO_OPTIONS), personFloor: WIDER_AUDIENCE_FLOOR };
}
/** An ask no standing answer covers and only a person may answer. */
function askPerson(rule: string, reason: string): Decision {
  return { ...ask(rule, reason, NO_OPTIONS), humanOnly: true };
}
