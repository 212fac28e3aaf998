/**
 * Child process for the SIGKILL restart tests: builds a SessionManager on the SQLite store in
 * the given data dir, starts one turn and reports on stdout when it reached the point the parent
 * kills it at — "CARD <pendingId>" once an approval card is posted, or "STARTED <callId>" once a
 * long tool started. Then it waits to be killed. Tool runs are appended to the runs file.
 *
 * Usage: npx tsx test/support/session-child.ts <dataDir> <approval|running> <runsFile>
 */
import { makeHarness, message, thread } from "../sessions/helpers/harness.js";
import { ToolRuns } from "../sessions/helpers/test-tools.js";
import { toolStep } from "./scripted-provider.js";

const [dataDir, scenario, runsFile] = process.argv.slice(2);
if (!dataDir || !runsFile || (scenario !== "approval" && scenario !== "running")) {
  process.stderr.write("usage: session-child.ts <dataDir> <approval|running> <runsFile>\n");
  process.exit(2);
}

const runs = new ToolRuns(runsFile);
const step =
  scenario === "approval"
    ? toolStep(["c1", "write_note", { text: "from child" }])
    : toolStep(["c1", "slow_task", {}]);
const h = await makeHarness({ dataDir, runs, steps: [step] });
await h.manager.start();
await h.manager.receive(message(scenario === "approval" ? "write a note" : "run the slow task"));
if (scenario === "approval") {
  const out = h.outputs.for(thread());
  const card = await h.outputs.until(() => out.latestCards[0], "approval card", 30_000);
  process.stdout.write(`CARD ${card.pendingId}\n`);
} else {
  await runs.started("c1");
  process.stdout.write("STARTED c1\n");
}
// Stay alive until the parent kills us.
setInterval(() => undefined, 60_000);
