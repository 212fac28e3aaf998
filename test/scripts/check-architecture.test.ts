/**
 * The floor check that `npm test` runs: the real tree must pass, and a tree with each kind of
 * violation must fail with a line naming the file and the reason.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkArchitecture } from "../../scripts/check-architecture.js";

const trees: string[] = [];

/** A throwaway src/ tree holding `files` (path → source). */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "floors-"));
  trees.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, "src", path)), { recursive: true });
    writeFileSync(join(root, "src", path), text);
  }
  return join(root, "src");
}

afterEach(() => {
  for (const root of trees.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe("check-architecture", () => {
  it("passes on this repository's src/", () => {
    expect(checkArchitecture(join(import.meta.dirname, "..", "..", "src"))).toEqual([]);
  });

  it("accepts imports that point down the floors", () => {
    const src = tree({
      "core/a.ts": "export const a = 1;\n",
      "engine/b.ts": 'import { a } from "../core/a.js";\nexport const b = a;\n',
      "channels/slack/c.ts": 'import { App } from "@slack/bolt";\nimport { b } from "../../engine/b.js";\n',
      "channels/shared/d.ts": "export const d = 1;\n",
      "channels/telegram/e.ts": 'import { d } from "../shared/d.js";\nimport { Bot } from "grammy";\n',
    });
    expect(checkArchitecture(src)).toEqual([]);
  });

  it("refuses an import up the floors, type-only ones included", () => {
    const src = tree({
      "sessions/s.ts": "export interface S { x: 1 }\n",
      "engine/e.ts": 'import type { S } from "../sessions/s.js";\n',
      "store/t.ts": 'export { S } from "../sessions/s.js";\n',
    });
    expect(checkArchitecture(src)).toEqual(
      expect.arrayContaining([
        "src/engine/e.ts: imports ../sessions/s.js (src/sessions/, a higher floor)",
        "src/store/t.ts: imports ../sessions/s.js (src/sessions/, a higher floor)",
      ]),
    );
  });

  it("refuses imports between folders on one floor and between platforms", () => {
    const src = tree({
      "skills/k.ts": 'import { o } from "../ops/o.js";\n',
      "ops/o.ts": "export const o = 1;\n",
      "channels/slack/x.ts": 'import { y } from "../telegram/y.js";\n',
      "channels/telegram/y.ts": "export const y = 1;\n",
    });
    expect(checkArchitecture(src)).toEqual([
      "src/channels/slack/x.ts: channels/slack imports channels/telegram (platforms share code through channels/shared/)",
      "src/skills/k.ts: imports ../ops/o.js (src/ops/, a folder on the same floor)",
    ]);
  });

  it("refuses platform SDKs outside src/channels/ and folders on no floor", () => {
    const src = tree({
      "subscriptions/d.ts":
        'import { WebClient } from "@slack/web-api";\nconst t = await import("grammy");\n',
      "widgets/w.ts": "export const w = 1;\n",
    });
    expect(checkArchitecture(src)).toEqual([
      "src/subscriptions/d.ts: imports @slack/web-api outside src/channels/",
      "src/subscriptions/d.ts: imports grammy outside src/channels/",
      "src/widgets/w.ts: folder src/widgets/ is on no floor (add it to FLOORS and docs/architecture.md)",
    ]);
  });
});
