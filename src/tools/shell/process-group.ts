/**
 * Process groups: commands run detached in their own group so a timeout or an interrupt can stop
 * the command and everything it started. Termination is SIGTERM, a grace period, then SIGKILL.
 * Zombies (exited, not yet reaped — common in containers whose init does not reap) do not count
 * as alive.
 */
import { readdir, readFile } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";

const POLL_MS = 25;

async function linuxGroupAlive(pgid: number): Promise<boolean> {
  const entries = await readdir("/proc");
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    // Format: pid (comm) state ppid pgrp …; comm may contain spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") return true;
  }
  return false;
}

/** Whether any live (non-zombie) process remains in process group `pgid`. */
export async function processGroupAlive(pgid: number): Promise<boolean> {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  return process.platform === "linux" ? linuxGroupAlive(pgid) : true;
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // The group is already gone.
  }
}

async function waitUntilGone(pgid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (await processGroupAlive(pgid)) {
    if (Date.now() >= deadline) return false;
    await delay(POLL_MS);
  }
  return true;
}

/**
 * Stop every process in group `pgid`: SIGTERM, wait up to `graceMs`, then SIGKILL and wait for
 * the group to disappear. Resolves true when nothing is left.
 */
export async function killProcessGroup(pgid: number, graceMs: number): Promise<boolean> {
  signalGroup(pgid, "SIGTERM");
  if (await waitUntilGone(pgid, graceMs)) return true;
  signalGroup(pgid, "SIGKILL");
  return waitUntilGone(pgid, 2000);
}
