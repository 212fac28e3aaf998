/**
 * The agent never sees the config file `coworker start` read, also when it lies in the workspace:
 * run_command runs in the app's one sandbox, which hides the service's own paths (the sandbox
 * behind the banner's shell line used to be the only one that did), and the file tools refuse them.
 */
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeBody, type FakeOpenAI, startFakeOpenAI } from "../fakes/fake-openai.js";
import { makeProject, startCoworker } from "./run-coworker.js";

let fake: FakeOpenAI | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe("the shell sandbox of a running app", () => {
  it("hides a config file kept in the workspace from commands and file tools, and shows its other files", async () => {
    fake = await startFakeOpenAI(({ body }) =>
      body.messages.at(-1).role === "tool"
        ? { text: "done" }
        : {
            toolCalls: [
              { name: "run_command", arguments: '{"command":"cat coworker.yaml; echo ---; cat notes.txt"}' },
              { name: "read_file", arguments: '{"path":"coworker.yaml"}' },
            ],
          },
    );
    const made = makeProject("reviewer:\n  api_key: sk-SECRET-TOKEN\n");
    const project = { ...made, configPath: join(made.workspace, "coworker.yaml") };
    renameSync(made.configPath, project.configPath);
    writeFileSync(join(project.workspace, "notes.txt"), "visible notes\n");
    const { t, exited } = startCoworker(project, {
      OPENAI_BASE_URL: fake.baseURL,
      COWORKER_MODE: "auto",
    });
    t.stdin.end("show me the files\n");
    expect(await exited).toBe(0);
    const results = fake.requests
      .flatMap((request: FakeBody) => request.messages)
      .filter((message: FakeBody) => message.role === "tool")
      .map((message: FakeBody) => String(message.content));
    expect(results).toHaveLength(2);
    expect(results[0]).toContain("visible notes");
    expect(results[1]).toContain("off limits to the file tools");
    expect(results.join("\n")).not.toContain("SECRET-TOKEN");
  });
});
