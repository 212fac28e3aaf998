#!/usr/bin/env node
/** The `coworker` executable: runs the CLI on the real process and exits with its code. */
import { runCli } from "./cli/run-cli.js";

const code = await runCli(process.argv.slice(2), {
  env: process.env,
  cwd: process.cwd(),
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  forceExit: (exitCode) => process.exit(exitCode),
});
process.exit(code);
