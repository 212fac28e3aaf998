/**
 * Skill switches with several processes on one Redis: a switch made in one process holds in every
 * other from its next scan on (catalog and load_skill), a switch of another skill made elsewhere
 * never undoes it, and a stored switch that cannot be read keeps its skill off.
 */
import os from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSkills } from "../../src/skills/skills-runtime.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import { request, TARGET } from "../support/engine-fixtures.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";
import { SKILL_CALL_CONTEXT, skillMd, skillsFixture, writeSkill } from "./support.js";

let redis: RedisServer;
const stores: Store[] = [];
beforeAll(async () => {
  redis = await startRedisServer();
}, 20_000);
afterAll(async () => {
  for (const store of stores) await store.close();
  await redis?.stop();
});

/** One process's skills over the shared Redis. */
async function processOn(workspace: string, dataDir: string, disabled: readonly string[] = []) {
  const store = await createStore({ url: redis.url, dataDir: os.tmpdir() });
  stores.push(store);
  const skills = await openSkills({
    serviceFiles: [],
    workspaceRoot: workspace,
    dataDir,
    settings: { dirs: [], enabled: [], disabled, catalogBudgetTokens: 2_000 },
    space: store.space("skills"),
    approvers: { approvers: ["slack:U_BOSS"] },
    scanIntervalMs: 0,
    watch: false,
  });
  return { skills, space: store.space("skills") };
}

function switchAs(skills: Awaited<ReturnType<typeof openSkills>>, args: string[]) {
  return skills.commands
    .find((command) => command.name === "skills")!
    .run({
      sessionId: "s1",
      target: TARGET,
      user: { id: "U_BOSS", name: "boss" },
      args,
      startTurn: async () => "started" as const,
    });
}

describe("skill switches across processes sharing Redis", () => {
  it("a disable in one process holds in the other, and the other's switch of another skill keeps it", async () => {
    const fixture = await skillsFixture();
    try {
      writeSkill(fixture.workspaceSkills, "evil", skillMd("evil", "Compromised skill"));
      writeSkill(fixture.workspaceSkills, "other", skillMd("other", "Another skill"));
      const a = await processOn(fixture.workspace, fixture.dataDir);
      const b = await processOn(fixture.workspace, fixture.dataDir);
      expect(await b.skills.contextPart(request())).toContain("- evil:");

      expect(await switchAs(a.skills, ["disable", "evil"])).toContain("is now disabled");
      expect(await b.skills.contextPart(request())).not.toContain("- evil:");
      const loadB = b.skills.tools.find((tool) => tool.name === "load_skill")!;
      const loaded = await loadB.execute({ name: "evil" } as never, SKILL_CALL_CONTEXT);
      expect(JSON.stringify(loaded)).not.toContain("Steps for evil");

      expect(await switchAs(b.skills, ["disable", "other"])).toContain("is now disabled");
      const c = await processOn(fixture.workspace, fixture.dataDir);
      const scan = await c.skills.library.scan();
      expect(c.skills.library.find("evil", scan)?.enabled).toBe(false);
      expect(c.skills.library.find("other", scan)?.enabled).toBe(false);
      for (const process of [a, b, c]) process.skills.close();
    } finally {
      await fixture.cleanup();
    }
  });

  it("a stored switch that cannot be read keeps its skill off instead of turning it on", async () => {
    const fixture = await skillsFixture();
    try {
      writeSkill(fixture.workspaceSkills, "risky", skillMd("risky", "A risky skill"));
      const a = await processOn(fixture.workspace, fixture.dataDir);
      expect(await switchAs(a.skills, ["disable", "risky"])).toContain("is now disabled");
      for (const key of ["switch:risky", "switches"])
        if ((await a.space.get(key)) !== undefined) await a.space.set(key, "garbled");
      const b = await processOn(fixture.workspace, fixture.dataDir);
      expect(b.skills.library.find("risky", await b.skills.library.scan())?.enabled).toBe(false);
      for (const process of [a, b]) process.skills.close();
    } finally {
      await fixture.cleanup();
    }
  });

  it("switches stored by an older version as one map still hold", async () => {
    const fixture = await skillsFixture();
    try {
      writeSkill(fixture.workspaceSkills, "old-off", skillMd("old-off", "Switched off long ago"));
      const a = await processOn(fixture.workspace, fixture.dataDir);
      await a.space.set("switches", { "old-off": false });
      expect(a.skills.library.find("old-off", await a.skills.library.scan())?.enabled).toBe(false);
      a.skills.close();
    } finally {
      await fixture.cleanup();
    }
  });
});
