/**
 * Child process for the single-process lock tests: takes the store's lock for the given data
 * folder (and store URL, when one is given), prints "LOCKED" and waits to be killed (-9).
 *
 * Usage: node --import tsx test/support/store-lock-child.ts <dataDir> [storeUrl]
 */
import { takeSingleProcessLock } from "../../src/store/single-process-lock.js";

const [dataDir, url] = process.argv.slice(2);
if (!dataDir) {
  process.stderr.write("usage: store-lock-child.ts <dataDir> [storeUrl]\n");
  process.exit(2);
}
await takeSingleProcessLock({ url, dataDir, waitMs: 0 });
process.stdout.write("LOCKED\n");
// Stay alive until the parent kills us.
setInterval(() => undefined, 60_000);
