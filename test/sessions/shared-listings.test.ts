/**
 * A typed `schedules` listing (or Telegram's /schedules, which reaches SessionManager.command)
 * in a conversation several people share shows only the items that belong to it: a task Ana made
 * in her DM is not posted as a card in a group, the reply counts it and says where to see it. In
 * her DM she sees everything. A refused `cancel_task` in the group names none of her tasks from
 * elsewhere, and a successful one (typed, or a card's Cancel) does not name the DM the task posted
 * in; in the DM it does. Items a command does not mark as this conversation's are never shown in a shared one.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Caller, PlatformUser, ThreadTarget } from "../../src/core/thread-target.js";
import { scheduleCanceller, scheduleCommands } from "../../src/schedules/schedule-commands.js";
import type { ExtraCommand } from "../../src/sessions/extra-commands.js";
import {
  type Harness as ScheduleHarness,
  iso,
  MIN,
  openHarness as openSchedules,
  T0,
} from "../schedules/support.js";
import { textStep } from "../support/scripted-provider.js";
import { type Harness, makeHarness, message } from "./helpers/harness.js";

const ANA: PlatformUser = { id: "42", name: "Ana" };
const DM: ThreadTarget = {
  platform: "telegram",
  workspace: "tg",
  channel: "42",
  extra: { chatType: "private" },
};
const GROUP: ThreadTarget = {
  platform: "telegram",
  workspace: "tg",
  channel: "-100777",
  extra: { chatType: "supergroup" },
};

let sessions: Harness | undefined;
let schedules: ScheduleHarness | undefined;
afterEach(async () => {
  await sessions?.manager.drain(0);
  await sessions?.store.close();
  await schedules?.close();
  sessions = undefined;
  schedules = undefined;
});

async function open(commands?: readonly ExtraCommand[]): Promise<Harness> {
  schedules = await openSchedules();
  const harness = await makeHarness({
    steps: [textStep("ok")],
    overrides: { extraCommands: commands ?? scheduleCommands(schedules.service) },
  });
  harness.manager.registerOutput("telegram", harness.outputs.factory);
  sessions = harness;
  return harness;
}

/** Ana creates a task with `prompt` in `target`'s conversation; its id. */
async function created(target: ThreadTarget, prompt: string): Promise<string> {
  const caller: Caller = { sessionId: `s-${target.channel}`, target, requester: ANA };
  const outcome = await schedules!.service.create(caller, { prompt, at: iso(T0 + 10 * MIN) });
  const id = /tsk_\w+/.exec(outcome.message)?.[0];
  if (id === undefined) throw new Error(outcome.message);
  return id;
}

/** Every text shown in a conversation: its messages and its cards' titles and texts. */
function shownIn(h: Harness, target: ThreadTarget): string {
  const output = h.outputs.for(target);
  const cards = output.cards.map((card) => JSON.stringify(card.versions));
  return [...output.texts, ...cards].join("\n");
}

describe("a typed listing in a shared conversation", () => {
  it("does not post Ana's DM task in a Telegram group; it counts it and says to ask in a DM", async () => {
    const h = await open();
    const id = await created(DM, "summarise my salary negotiation notes");
    expect(await h.manager.receive(message("schedules", { target: GROUP, user: ANA }))).toEqual({
      status: "command",
    });
    const group = h.outputs.for(GROUP);
    expect(group.cards).toEqual([]);
    expect(group.texts).toHaveLength(1);
    expect(group.texts[0]).toContain("1 item of yours not shown here");
    expect(group.texts[0]).toContain("direct message");
    expect(shownIn(h, GROUP)).not.toContain("salary");
    expect(shownIn(h, GROUP)).not.toContain(id);

    // In her DM she sees it, on a card.
    await h.manager.receive(message("schedules", { target: DM, user: ANA }));
    const dm = h.outputs.for(DM);
    expect(dm.cards.map((card) => card.versions[0]?.pendingId)).toEqual([id]);
    expect(shownIn(h, DM)).toContain("salary");
  });

  it("posts the group's own task and counts the DM one as 1 more", async () => {
    const h = await open();
    await created(DM, "summarise my salary negotiation notes");
    const here = await created(GROUP, "post the standup reminder");
    await h.manager.receive(message("schedules", { target: GROUP, user: ANA }));
    const group = h.outputs.for(GROUP);
    expect(group.cards.map((card) => card.versions[0]?.pendingId)).toEqual([here]);
    expect(group.texts[0]).toContain("1 more item of yours not shown here");
    expect(shownIn(h, GROUP)).toContain("standup");
    expect(shownIn(h, GROUP)).not.toContain("salary");
  });

  it("does the same for /schedules (the command path Telegram's handler uses)", async () => {
    const h = await open();
    await created(DM, "summarise my salary negotiation notes");
    const text = await h.manager.command(GROUP, ANA, "schedules", []);
    expect(h.outputs.for(GROUP).cards).toEqual([]);
    expect(text).toContain("1 item of yours not shown here");
    expect(text).not.toContain("salary");
  });

  it("a refused cancel_task in the group names only the group's tasks; in the DM all of hers", async () => {
    const h = await open();
    const elsewhere = await created(DM, "summarise my salary negotiation notes");
    const here = await created(GROUP, "post the standup reminder");
    await h.manager.receive(message("cancel_task tsk_000000000000", { target: GROUP, user: ANA }));
    const [refusal] = h.outputs.for(GROUP).texts;
    expect(refusal).toContain("You have no scheduled task tsk_000000000000");
    expect(refusal).toContain(`Yours in this conversation: ${here}`);
    expect(refusal).not.toContain(elsewhere);
    await h.manager.receive(message("cancel_task tsk_000000000000", { target: DM, user: ANA }));
    expect(h.outputs.for(DM).texts[0]).toContain(elsewhere);
  });

  it("a cancel_task that succeeds in the group does not name the DM the task posted in; in the DM it does", async () => {
    const h = await open();
    const fromGroup = await created(DM, "summarise my salary negotiation notes");
    await h.manager.receive(message(`cancel_task ${fromGroup}`, { target: GROUP, user: ANA }));
    const [done] = h.outputs.for(GROUP).texts;
    expect(done).toContain(`Cancelled task ${fromGroup} (posted in another conversation)`);
    expect(shownIn(h, GROUP)).not.toContain("chat 42");

    const fromDm = await created(DM, "summarise my salary negotiation notes");
    await h.manager.receive(message(`cancel_task ${fromDm}`, { target: DM, user: ANA }));
    expect(h.outputs.for(DM).texts[0]).toContain(`Cancelled task ${fromDm} (posted in telegram chat 42)`);
  });

  it("a card's Cancel pressed in the group does not name the DM the task posted in", async () => {
    const h = await open();
    const id = await created(DM, "summarise my salary negotiation notes");
    const result = await scheduleCanceller(schedules!.service).cancel(GROUP, ANA, id);
    expect(result).toEqual({ ok: true, message: `Cancelled task ${id} (posted in another conversation).` });
    const other = await created(DM, "summarise my salary negotiation notes");
    const inDm = await scheduleCanceller(schedules!.service).cancel(DM, ANA, other);
    expect(inDm.message).toContain("posted in telegram chat 42");
    expect(h.outputs.for(GROUP).texts).toEqual([]);
  });

  it("never shows, in a shared conversation, items a command does not mark as this one's", async () => {
    const unmarked: ExtraCommand = {
      name: "things",
      usage: "things — list",
      minArgs: 0,
      maxArgs: 0,
      run: async () => ({
        text: "Things (2):",
        items: [
          { id: "sub_a", title: "A", text: "secret a" },
          { id: "sub_b", title: "B", text: "secret b" },
        ],
      }),
    };
    const h = await open([unmarked]);
    await h.manager.receive(message("things", { target: GROUP, user: ANA }));
    expect(h.outputs.for(GROUP).cards).toEqual([]);
    expect(h.outputs.for(GROUP).texts[0]).toContain("2 items of yours not shown here");
    expect(shownIn(h, GROUP)).not.toContain("secret");
    await h.manager.receive(message("things", { target: DM, user: ANA }));
    expect(h.outputs.for(DM).cards).toHaveLength(2);
  });
});
