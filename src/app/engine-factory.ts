/**
 * The engine factory: one function that builds a ready engine for a session. Per session it
 * assembles the tool registry for the session's platform (the registry then offers per turn what
 * the mode allows), shares one permission engine (config's allowed command prefixes and hard
 * denies), and wires everything the session layer passes in its EngineContext. The instructions'
 * fixed part is built on the session's first turn, when it reads AGENTS.md (SystemPrompt keeps it
 * for the later turns); each turn's system prompt ends with the memories of that turn's requester
 * and the channel, read on the person's first turn in the session (RequesterMemories). The memory
 * tools let a configured approver (global, or of the conversation's channel) change other
 * members' channel memories; everyone else changes only their own.
 */
import os from "node:os";
import { type ApprovalsConfig, isConfiguredApprover } from "../approvals/authorisation.js";
import type { EngineContext, EngineFactory } from "../sessions/engine-context.js";
import { conversationWorkspace } from "../tools/files/conversation-workspace.js";
import { createWorkspacePaths } from "../tools/files/workspace-paths.js";
import type { MemoryStore } from "../tools/memory/memory-store.js";
import type { MemoryToolsOptions } from "../tools/memory/memory-tools.js";
import { threadTargetOf } from "../tools/session-target.js";
import type { Messenger } from "../tools/messaging/messenger.js";
import type { ConversationExecutionRequest } from "../core/request.js";
import type { AnyTool } from "../core/tool.js";
import { PermissionEngine } from "../engine/permissions/permission-engine.js";
import type { MediaOptions } from "../engine/outbound-media.js";
import type { ProviderClient } from "../engine/provider/provider.js";
import { ReviewerGate, type ReviewerGateOptions } from "../engine/reviewer/reviewer-gate.js";
import { TurnEngine, type TurnEngineOptions } from "../engine/turn-engine.js";
import { type ContextPart, createContextProvider } from "../engine/context-provider.js";
import { AGENTS_MD_MAX_CHARS, buildInstructions, describeDate } from "../engine/instructions.js";
import { AgentsMdReader, type TextPrefixReader } from "../engine/session-knowledge.js";
import { RequesterMemories } from "../engine/requester-memories.js";
import { type McpToolSource, SessionToolSets, type ToolLimits } from "./session-tool-set.js";

/** Everything the factory needs besides the per-session EngineContext. */
export interface EngineFactoryDeps {
  readonly provider: ProviderClient;
  /** The workspace (COWORKER_WORKSPACE, absolute). */
  readonly workspaceRoot: string;
  readonly extraRoots?: readonly string[];
  /** The service's own files, off limits to the file tools even inside the workspace. */
  readonly offLimits?: readonly string[];
  /** Replaces the default persona prompt. */
  readonly persona?: string;
  /** The user's standing rules (config agent.rules). */
  readonly userRules?: string;
  /** Memory tools and the memory block only when given. */
  readonly memory?: MemoryStore;
  /** The live memory-saving switch (config agent.memory.enabled or a person's setting); default on. */
  readonly memoryEnabled?: () => boolean;
  /** Hears every memory saved, changed or forgotten. */
  readonly onMemoryChange?: MemoryToolsOptions["onChange"];
  /**
   * The approvals configuration: its approvers (global, or of the conversation's channel) may
   * change and delete other members' channel memories. None: nobody may.
   */
  readonly approvals?: Pick<ApprovalsConfig, "approvers" | "perChannel">;
  readonly toolLimits?: ToolLimits;
  readonly allowedCommandPrefixes?: readonly string[];
  /** Regex sources added to the built-in hard-deny rules; an invalid one throws here, at startup. */
  readonly hardDenyPatterns?: readonly string[];
  /** The Messenger of a platform; messaging tools only where one exists. */
  readonly messengerFor?: (platform: string) => Messenger | undefined;
  /** MCP tools (McpManager), listed when each session is built. */
  readonly mcp?: McpToolSource;
  /** Tools other modules contribute per session (e.g. subscriptions). */
  readonly extraTools?: (context: EngineContext) => readonly AnyTool[];
  readonly now?: () => Date;
  /** Reads a prefix of AGENTS.md (default: the file system, regular files only). */
  readonly readFile?: TextPrefixReader;
  readonly agentsMdMaxChars?: number;
  /** How the operating system is described (default from node:os). */
  readonly os?: string;
  readonly compaction?: TurnEngineOptions["compaction"];
  /** The safety reviewer (config `reviewer`); each session gets its own gate on it. */
  readonly reviewer?: ReviewerGateOptions;
  /** Per-turn context blocks other modules contribute (e.g. the skill catalog). */
  readonly contextParts?: readonly ContextPart[];
  /** Rewrites a new turn's prompt before it is stored (e.g. a skill run directly). */
  readonly framePrompt?: TurnEngineOptions["framePrompt"];
  /** How attached images reach the model (config model.vision and attachments.*). */
  readonly media?: Omit<MediaOptions, "workspace">;
}

/** The host's operating system, e.g. "Linux 6.8.0 (x64)". */
export function describeOs(): string {
  return `${os.type()} ${os.release()} (${os.arch()})`;
}

/**
 * Whether the person asking in `request` is a configured approver of its conversation (global, or
 * of its channel), who may change other members' channel memories; no recorded conversation: no.
 */
function mayChangeOthersMemories(
  approvals: Pick<ApprovalsConfig, "approvers" | "perChannel">,
  request: ConversationExecutionRequest,
): boolean {
  const target = threadTargetOf(request);
  return target !== undefined && isConfiguredApprover(approvals, target, request.requester.userId);
}

/**
 * Build the engine factory the session layer calls once per loaded session. Throws at once when
 * a hard-deny pattern is not a valid regular expression.
 */
export function createEngineFactory(deps: EngineFactoryDeps): EngineFactory {
  const permissions = new PermissionEngine({
    allowedCommandPrefixes: deps.allowedCommandPrefixes ?? [],
    hardDenyPatterns: deps.hardDenyPatterns ?? [],
  });
  const workspace = {
    root: deps.workspaceRoot,
    extraRoots: deps.extraRoots ?? [],
    offLimits: deps.offLimits ?? [],
  };
  const now = deps.now ?? (() => new Date());
  const agentsMdMaxChars = deps.agentsMdMaxChars ?? AGENTS_MD_MAX_CHARS;
  const agentsMd = new AgentsMdReader(createWorkspacePaths(workspace), agentsMdMaxChars, deps.readFile, () =>
    now().getTime(),
  );
  // Images in the history are read as the file tools read them: the asking conversation's view.
  const mediaWorkspace = conversationWorkspace(createWorkspacePaths(workspace));
  const hostOs = deps.os ?? describeOs();
  const savingEnabled = deps.memoryEnabled ?? (() => true);
  const memory = deps.memory;
  const { approvals } = deps;
  const toolSets = new SessionToolSets({
    workspace,
    limits: deps.toolLimits,
    memory: memory && {
      store: memory,
      savingEnabled,
      onChange: deps.onMemoryChange,
      ...(approvals ? { mayChangeOthers: (request) => mayChangeOthersMemories(approvals, request) } : {}),
    },
    messengerFor: deps.messengerFor,
    mcp: deps.mcp,
  });

  const instructionsOf = (platform: string, memoryEnabled: boolean, agentsMd?: string): string =>
    buildInstructions({
      persona: deps.persona,
      workspaceRoot: workspace.root,
      extraRoots: workspace.extraRoots,
      os: hostOs,
      date: describeDate(now()),
      agentsMd,
      userRules: deps.userRules,
      memoryEnabled,
      platform,
      agentsMdMaxChars,
    });

  return (context) => {
    const platform = context.target.platform;
    const registry = toolSets.registryFor(platform, deps.extraTools?.(context));
    /** Whether saving was on when the instructions were built (settled with them, on the first turn). */
    let savingAtStart = false;
    const memories = memory && new RequesterMemories(memory);
    return new TurnEngine({
      provider: deps.provider,
      registry,
      permissions,
      instructions: async () => {
        savingAtStart = memory !== undefined && savingEnabled();
        const { text, notice } = await agentsMd.current();
        const instructions = instructionsOf(platform, savingAtStart, text);
        return notice === undefined ? { text: instructions } : { text: instructions, notice };
      },
      ...(memories ? { requesterInstructions: (request) => memories.sectionFor(request) } : {}),
      contextProvider: createContextProvider({
        memory: memory && { enabledAtStart: () => savingAtStart, enabled: savingEnabled },
        now,
        parts: deps.contextParts,
      }),
      grants: context.grants,
      facts: context.facts,
      approver: context.approver,
      asker: context.asker,
      planApprover: context.planApprover,
      audit: context.audit,
      persistence: context.persistence,
      onModeChange: context.onModeChange,
      now,
      compaction: deps.compaction,
      ...(context.compactionState ? { compactionState: context.compactionState } : {}),
      historyStart: context.historyStart ?? 0,
      ...(deps.reviewer ? { reviewer: new ReviewerGate(deps.reviewer) } : {}),
      ...(context.reviewerDenials ? { reviewerDenials: context.reviewerDenials } : {}),
      framePrompt: deps.framePrompt,
      ...(deps.media ? { media: { ...deps.media, workspace: mediaWorkspace } } : {}),
    });
  };
}
