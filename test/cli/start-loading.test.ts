/**
 * What a real `coworker start` (Slack in Socket Mode, default SQLite store) loads: none of the
 * packages that only a model call, a skill file, a JS file search or a terminal needs. They load
 * on first use, which the first turn shows for the model client.
 */
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shown } from "../channels/slack/e2e-harness.js";
import { echoHandler } from "../fakes/fake-openai.js";
import { type CoworkerCluster, startCoworkers } from "../support/coworker-processes.js";

const HOOK = fileURLToPath(new URL("../../bench/support/loaded-packages.mjs", import.meta.url));
const LAZY = ["openai", "gray-matter", "pino-pretty", "re2js"];

let cluster: CoworkerCluster;
beforeAll(async () => {
  cluster = await startCoworkers({
    count: 1,
    store: "sqlite",
    model: echoHandler,
    slack: {},
    nodeArgs: ["--import", HOOK],
  });
}, 60_000);
afterAll(async () => cluster?.close());

function loadedPackages(): string[] {
  return cluster.processes[0]!.stderr()
    .split("\n")
    .filter((line) => line.startsWith("loaded-package "))
    .map((line) => line.slice("loaded-package ".length));
}

describe("coworker start loads what its configuration uses", () => {
  it("starts without the lazily loaded packages; the first turn loads the model client", async () => {
    const atStart = loadedPackages();
    expect(atStart).toContain("@slack/bolt");
    for (const name of LAZY) expect(atStart).not.toContain(name);

    const slack = cluster.slack!;
    slack.state.addUser({ id: "U1", name: "someone" });
    slack.state.addChannel({ id: "D1", name: "dm", type: "im", members: ["U1"] });
    const root = slack.userPosts({ user: "U1", channel: "D1", text: "hello" }).ts;
    await slack.waitFor(
      () => slack.state.botMessages("D1", root).some((m) => shown(m).includes('You said: "hello')),
      "the answer",
      30_000,
    );
    expect(loadedPackages()).toContain("openai");
  }, 60_000);
});
