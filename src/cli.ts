#!/usr/bin/env node
/** The `coworker` executable: runs the CLI on the real process, with its V8 settings, and exits with its code. */
import { applyHeapSettings } from "./cli/heap-settings.js";
import { runCli } from "./cli/run-cli.js";

const heap = applyHeapSettings();
const code = await runCli(process.argv.slice(2), {
  env: process.env,
  cwd: process.cwd(),
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  forceExit: (exitCode) => process.exit(exitCode),
  onStartedUp: heap.startUpOver,
});
process.exit(code);
