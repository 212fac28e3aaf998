/**
 * The /coworker slash command in a channel acts on the person's latest thread there, and its answer
 * names that thread; without one (nobody's is known after a restart) a command that acts on a
 * session is refused, never run on a session the whole channel would share. In a DM the DM is the
 * session.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { FakeSlack } from "../../fakes/fake-slack/index.js";
import type { FakeService } from "./fake-service.js";
import { type ChannelOnFake, startChannelOnFake } from "./channel-on-fake.js";

let fake: FakeSlack;
let service: FakeService;
let started: ChannelOnFake;
const BOT = "<@U0BOT>";

beforeEach(async () => {
  started = await startChannelOnFake("slack-slash-");
  ({ fake, service } = started);
});

afterEach(async () => {
  await started?.stop();
});

/** A Slack ts as `YYYY-MM-DD HH:MM UTC`. */
function utc(ts: string): string {
  return `${new Date(Math.floor(Number(ts)) * 1000).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** Send a slash command and wait for its (ephemeral) answer. */
async function slash(user: string, where: string, text: string) {
  const before = fake.state.responses.length;
  await fake.slashCommand({ user, channel: where, text }).acked;
  const answer = await fake.waitFor(() => fake.state.responses[before], `the answer to /coworker ${text}`);
  return answer.body;
}

describe("/coworker in a channel without a known thread", () => {
  it("refuses a session command, telling the person to use the thread, then runs it in their thread", async () => {
    const refused = await slash("U2", "C1", "mode auto");
    expect(service.commands).toEqual([]);
    expect(refused.response_type).toBe("ephemeral");
    expect(String(refused.text)).toContain("which thread");
    expect(String(refused.text)).toContain(`${BOT} mode auto`);

    for (const text of ["new", "stop", "model other", "grants revoke", "skill deploy ship it", "/Mode auto"])
      await slash("U2", "C1", text);
    expect(service.commands).toEqual([]);

    const { ts } = fake.userPosts({ user: "U1", channel: "C1", text: `${BOT} hi` });
    await service.waitFor(() => service.received.length === 1);
    fake.userPosts({ user: "U2", channel: "C1", threadTs: ts, text: `${BOT} me too` });
    await service.waitFor(() => service.received.length === 2);
    service.commandReply = "Mode set to auto.";
    // The answer names the thread it acted on (when it started; the fake gives no permalink).
    expect((await slash("U2", "C1", "mode auto")).text).toBe(
      `_In your latest thread here, started <!date^${Math.floor(Number(ts))}^{date_short_pretty} at {time}|${utc(ts)}>:_\nMode set to auto.`,
    );
    expect(service.commands).toHaveLength(1);
    expect(service.commands[0]).toMatchObject({
      name: "mode",
      args: ["auto"],
      target: { channel: "C1", thread: ts },
    });
  });

  it("tells the thread of a command that changes its session, naming who ran it; a look at it stays private", async () => {
    const { ts } = fake.userPosts({ user: "U1", channel: "C1", text: `${BOT} hi` });
    await service.waitFor(() => service.received.length === 1);
    fake.userPosts({ user: "U2", channel: "C1", threadTs: ts, text: `${BOT} me too` });
    await service.waitFor(() => service.received.length === 2);
    const told = () => fake.state.messages.filter((m) => m.threadTs === ts && m.text.includes("/coworker"));
    service.commandReply = "Started a new session (s2). Mode interactive, model m.";
    await slash("U2", "C1", "new");
    service.commandReply = "Revoked 2 grants.";
    await slash("U2", "C1", "grants revoke");
    service.commandReply = "Mode: interactive";
    for (const text of ["status", "grants", "reviewer"]) await slash("U2", "C1", text);
    expect(service.commands.map((c) => c.name)).toEqual(["new", "grants", "status", "grants", "reviewer"]);
    expect(told().map((m) => m.text)).toEqual([
      "<@U2> ran `/coworker new` here: Started a new session (s2). Mode interactive, model m.",
      "<@U2> ran `/coworker grants` here: Revoked 2 grants.",
    ]);
  });

  it("keeps the per-person commands working there", async () => {
    service.commandReply = "You have no scheduled tasks.";
    expect((await slash("U2", "C1", "schedules")).text).toBe("You have no scheduled tasks.");
    expect(service.commands.map((c) => c.name)).toEqual(["schedules"]);
  });

  it("acts on the DM itself in a direct message", async () => {
    service.commandReply = "Mode set to auto.";
    expect((await slash("U1", "D1", "mode auto")).text).toBe("Mode set to auto.");
    // Nobody else reads a DM: nothing is posted there beside the answer.
    expect(fake.state.messages.filter((m) => m.text.includes("/coworker"))).toEqual([]);
    expect(service.commands).toHaveLength(1);
    expect(service.commands[0]).toMatchObject({ name: "mode", target: { channel: "D1" } });
    expect(service.commands[0]!.target.thread).toBeUndefined();
  });
});
