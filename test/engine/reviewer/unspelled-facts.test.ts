/**
 * The reviewer's facts about files the agent wrote or downloaded also cover a shell command that
 * uses them without spelling their names: a glob, an expansion, a runner that reads them.
 */
import { describe, expect, it } from "vitest";
import type { ConversationMessage } from "../../../src/core/messages.js";
import { callFacts } from "../../../src/engine/reviewer/review-input.js";

const UNSPELLED =
  "The call does not spell its name, but may use it (through a pattern, an expansion or a program that reads it).";
const NONE = { downloadedFiles: new Set<string>() };
const facts = (command: string, stepWritten: readonly string[], downloaded: readonly string[] = []) =>
  callFacts([], { downloadedFiles: new Set(downloaded) }, { command }, stepWritten, command);

describe("callFacts for a command that does not spell a file's name", () => {
  it.each([
    ["bash ru?.sh", ["run.sh"]],
    ["bash ./*.sh", ["run.sh"]],
    ["bash $(ls *.sh)", ["run.sh"]],
    ["npm test", ["package.json"]],
    ["make build", ["Makefile"]],
    ["python3 -m pytest", ["tests/test_api.py"]],
    ["sh -c 'bash ./r[u]n.sh'", ["run.sh"]],
  ])("%s gets the fact about %s", (command, written) => {
    expect(facts(command, written)).toEqual([
      `"${written[0]}" was written by the agent in this same step: an earlier call of the step writes it just before this call runs. ${UNSPELLED}`,
    ]);
  });

  it("a downloaded file and one written calls ago, globbed", () => {
    const history: ConversationMessage[] = [
      { role: "tool", tool_call_id: "w1", content: "ok", meta: { status: "ok", files: ["bin/tool"] } },
      { role: "tool", tool_call_id: "r1", content: "ok", meta: { status: "ok" } },
    ];
    expect(
      callFacts(
        history,
        { downloadedFiles: new Set(["tool.bin"]) },
        { command: "./bin/too[l]; ./*.bin" },
        [],
        "./bin/too[l]; ./*.bin",
      ),
    ).toEqual([
      `"bin/tool" was written by the agent 2 tool calls ago. ${UNSPELLED}`,
      `"tool.bin" was downloaded into the workspace by the agent. ${UNSPELLED}`,
    ]);
  });

  it("a spelled name keeps its plain fact; nothing for what the command cannot reach", () => {
    expect(facts("bash run.sh", ["run.sh"])).toEqual([
      '"run.sh" was written by the agent in this same step: an earlier call of the step writes it just before this call runs.',
    ]);
    expect(facts("bash other-*.sh; echo $HOME; cat notes.txt", ["run.sh", "package.json"])).toEqual([]);
    // Without the command (not a shell call) only spelled names count, as before.
    expect(callFacts([], NONE, { command: "npm test" }, ["package.json"])).toEqual([]);
  });

  it("an expansion may name any file: the first few are listed, the rest counted", () => {
    const written = Array.from({ length: 13 }, (_, i) => `f${i}.sh`);
    const shown = facts("bash $SCRIPT", written);
    expect(shown).toHaveLength(11);
    expect(shown[0]).toContain('"f0.sh" was written');
    expect(shown[10]).toBe(
      "3 more files the agent wrote or downloaded may be used by the call the same way.",
    );
  });

  it("a downloaded folder is spelled by its path or name, not by an empty token", () => {
    const folder = "/ws/repo/";
    const fact = '"/ws/repo/" was downloaded into the workspace by the agent.';
    // A leading quote split off an empty token, which matched the folder's empty last segment.
    expect(facts("bash -c 'ls'", [], [folder])).toEqual([]);
    expect(facts("cd repo && ls", [], [folder])).toEqual([fact]);
    expect(facts("ls /ws/repo/", [], [folder])).toEqual([fact]);
  });
});
