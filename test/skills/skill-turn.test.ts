/**
 * A skill run through the real engine factory: the stored user message keeps what the person
 * typed (`meta.display`) and marks the skill, while the model reads the framed skill; a framer
 * that fails leaves the prompt as typed with a warning, and a wake-up from channel content is
 * never framed.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createEngineFactory } from "../../src/app/engine-factory.js";
import { openSkills } from "../../src/skills/skills-runtime.js";
import { collect, engineContext, lastUserText, request } from "../support/engine-fixtures.js";
import { ScriptedProvider, textStep } from "../support/scripted-provider.js";
import { memorySpace, skillMd, skillsFixture, writeSkill } from "./support.js";

let fixture: Awaited<ReturnType<typeof skillsFixture>>;
afterEach(async () => fixture?.cleanup());

async function engineWith(provider: ScriptedProvider, framePrompt?: () => Promise<never>) {
  const skills = await openSkills({
    serviceFiles: [],
    workspaceRoot: fixture.workspace,
    dataDir: fixture.dataDir,
    settings: { dirs: [], enabled: [], disabled: [], catalogBudgetTokens: 2_000 },
    space: memorySpace(),
    approvers: { approvers: [] },
  });
  const factory = createEngineFactory({
    provider,
    workspaceRoot: fixture.workspace,
    extraTools: () => skills.tools,
    contextParts: [skills.contextPart],
    framePrompt: framePrompt ?? skills.framePrompt,
  });
  const harness = engineContext();
  return { engine: factory(harness.context), appended: harness.appended };
}

describe("a skill run through the engine", () => {
  it("stores what the person typed and sends the framed skill", async () => {
    fixture = await skillsFixture();
    writeSkill(
      fixture.workspaceSkills,
      "check-deploy",
      skillMd("check-deploy", "Check a deploy", "THE STEPS"),
    );
    const provider = new ScriptedProvider([textStep("done")]);
    const { engine, appended } = await engineWith(provider);
    await collect(engine.run(request({ prompt: "skill check-deploy prod" })));
    const user = appended.find((m) => m.role === "user")!;
    expect(user.meta).toMatchObject({ display: "skill check-deploy prod", skill: "check-deploy" });
    expect(lastUserText(provider.requests[0]!)).toContain("THE STEPS");
  });

  it("a failing framer leaves the prompt as typed and warns; channel content is never framed", async () => {
    fixture = await skillsFixture();
    writeSkill(
      fixture.workspaceSkills,
      "check-deploy",
      skillMd("check-deploy", "Check a deploy", "THE STEPS"),
    );
    const provider = new ScriptedProvider([textStep("a"), textStep("b")]);
    const broken = await engineWith(provider, () => Promise.reject(new Error("disk on fire")));
    const events = await collect(broken.engine.run(request({ prompt: "skill check-deploy prod" })));
    expect(events).toContainEqual(expect.objectContaining({ type: "notice", level: "warning" }));
    expect(broken.appended.find((m) => m.role === "user")?.content).toBe("skill check-deploy prod");

    const woken = await engineWith(provider);
    await collect(
      woken.engine.run(
        request({
          prompt: "skill check-deploy prod",
          metadata: { channelContent: { channel: "#x", quote: "q" } },
        }),
      ),
    );
    expect(woken.appended.find((m) => m.role === "user")?.content).toBe("skill check-deploy prod");
  });
});
