/**
 * Child process for the SIGKILL test of scheduled tasks: opens a ScheduleService on the SQLite
 * store in the given data dir, on real time, with every wake turn appended (synchronously) to the
 * runs file as "<taskId> <dueAt>". With "create" it first sets up a task running every second and
 * a one-shot a few seconds ahead and prints "CREATED <ids>"; once the first run is recorded it
 * prints "RAN" and waits to be killed.
 *
 * Usage: node --import tsx test/schedules/schedule-child.ts <dataDir> <runsFile>
 */
import { appendFileSync } from "node:fs";
import { ScheduleService } from "../../src/schedules/schedule-service.js";
import { createStore } from "../../src/store/create-store.js";
import { storeSlotBudget } from "../../src/store/slot-budget.js";
import { ANA_HOME } from "./support.js";
import { CHILD_SETTINGS, recordingSessions } from "./child-support.js";

const [dataDir, runsFile] = process.argv.slice(2);
if (!dataDir || !runsFile) {
  process.stderr.write("usage: schedule-child.ts <dataDir> <runsFile>\n");
  process.exit(2);
}

const store = await createStore({ url: undefined, dataDir });
let announced = false;
const sessions = recordingSessions(runsFile, () => {
  if (announced) return;
  announced = true;
  process.stdout.write("RAN\n");
});
const service = await ScheduleService.open({
  store,
  sessions,
  notify: async () => undefined,
  settings: CHILD_SETTINGS,
  owner: "child",
  wakeBudget: storeSlotBudget(store.space("budgets")),
  onError: (error) => appendFileSync(`${runsFile}.errors`, `${String(error)}\n`),
});
service.start();
const cron = await service.create(ANA_HOME, { prompt: "every second", cron: "* * * * * *", timezone: "UTC" });
const once = await service.create(ANA_HOME, {
  prompt: "once",
  at: new Date(Date.now() + 4_000).toISOString(),
});
process.stdout.write(`CREATED ${cron.message} | ${once.message}\n`);
// Stay alive until the parent kills us.
setInterval(() => undefined, 60_000);
