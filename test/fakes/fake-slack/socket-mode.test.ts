/**
 * The fake Slack's Socket Mode with several connections for one app: each envelope goes to exactly
 * one connection, in turn or by label; an un-acked envelope is redelivered to another connection
 * with the next retry_attempt; at most 10 connections are held.
 */
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type FakeSlack, MAX_SOCKET_CONNECTIONS, startFakeSlack } from "./index.js";

interface Client {
  readonly label: string;
  readonly socket: WebSocket;
  readonly envelopes: { envelope_id: string; retry_attempt: number; payload: { event_id?: string } }[];
  ack(envelopeId: string): void;
}

let slack: FakeSlack | undefined;
const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.socket.terminate();
  await slack?.close();
  slack = undefined;
});

/** Open a Socket Mode connection the way Bolt does: apps.connections.open, then the returned URL. */
async function connect(fake: FakeSlack, label: string, autoAck = true): Promise<Client> {
  const response = await fetch(`${fake.apiUrlFor(label)}apps.connections.open`, {
    method: "POST",
    headers: { authorization: `Bearer ${fake.state.appToken}` },
  });
  const { url } = (await response.json()) as { url: string };
  const socket = new WebSocket(url);
  const client: Client = {
    label,
    socket,
    envelopes: [],
    ack: (envelopeId) => socket.send(JSON.stringify({ envelope_id: envelopeId })),
  };
  socket.on("message", (data) => {
    const frame = JSON.parse(data.toString()) as Client["envelopes"][number] & { type: string };
    if (frame.type === "hello") return;
    client.envelopes.push(frame);
    if (autoAck) client.ack(frame.envelope_id);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  clients.push(client);
  await fake.waitFor(() => fake.socket.labels.includes(label), `connection ${label}`);
  return client;
}

const event = (text: string) => ({ type: "message", channel: "C1", user: "U1", text, ts: "1.0" });

describe("fake Slack Socket Mode with several connections", () => {
  it("delivers each envelope to exactly one connection, spread over all of them, or to the one named", async () => {
    slack = await startFakeSlack();
    const fake = slack;
    const three = [await connect(fake, "p1"), await connect(fake, "p2"), await connect(fake, "p3")];
    const acked = Array.from({ length: 30 }, (_, i) => fake.sendEvent(event(`m${i}`)).acked);
    await Promise.all(acked);
    const received = three.map((client) => client.envelopes.length);
    expect(received.reduce((a, b) => a + b, 0)).toBe(30);
    expect(received.every((count) => count > 0)).toBe(true);
    const ids = three.flatMap((client) => client.envelopes.map((e) => e.envelope_id));
    expect(new Set(ids).size).toBe(30);

    await fake.sendEvent(event("to p2"), { to: "p2" }).acked;
    expect(three[1]?.envelopes.at(-1)?.payload.event_id).toBeDefined();
    expect(received[1]! + 1).toBe(three[1]?.envelopes.length);
    expect(() => fake.sendEvent(event("nobody"), { to: "p9" })).toThrow(
      /no open Socket Mode connection "p9"/,
    );
  });

  it("redelivers an envelope nobody acked to another connection with the next retry_attempt", async () => {
    slack = await startFakeSlack({ redeliverAfterMs: 100 });
    const fake = slack;
    const deaf = await connect(fake, "deaf", false);
    const good = await connect(fake, "good");
    const delivery = fake.sendEvent(event("hello"), { to: "deaf", eventId: "Ev1" });
    await delivery.acked;
    expect(deaf.envelopes.map((e) => [e.retry_attempt, e.payload.event_id])).toEqual([[0, "Ev1"]]);
    expect(good.envelopes.map((e) => [e.retry_attempt, e.payload.event_id])).toEqual([[1, "Ev1"]]);
    const attempts = [...fake.state.acks.values()].map((a) => [
      a.connection,
      a.attempt,
      a.ackedAt !== undefined,
    ]);
    expect(attempts).toEqual([
      ["deaf", 0, false],
      ["good", 1, true],
    ]);
  });

  it("redelivers an envelope sent to a connection that dies before acking", async () => {
    slack = await startFakeSlack({ redeliverAfterMs: 100 });
    const fake = slack;
    const dying = await connect(fake, "dying", false);
    const survivor = await connect(fake, "survivor");
    const delivery = fake.sendEvent(event("hello"), { to: "dying" });
    await fake.waitFor(() => dying.envelopes.length === 1, "the first delivery");
    dying.socket.terminate();
    await delivery.acked;
    expect(survivor.envelopes.map((e) => e.retry_attempt)).toEqual([1]);
  });

  it("holds at most 10 connections for the app", async () => {
    slack = await startFakeSlack();
    const fake = slack;
    for (let i = 0; i < MAX_SOCKET_CONNECTIONS; i++) await connect(fake, `p${i}`);
    const response = await fetch(`${fake.apiUrlFor("extra")}apps.connections.open`, {
      method: "POST",
      headers: { authorization: `Bearer ${fake.state.appToken}` },
    });
    const extra = new WebSocket(((await response.json()) as { url: string }).url);
    const code = await new Promise<number>((resolve) =>
      extra.once("close", (closeCode) => resolve(closeCode)),
    );
    expect(code).toBe(1008);
    expect(fake.socket.refused).toBe(1);
    expect(fake.socket.labels).toHaveLength(MAX_SOCKET_CONNECTIONS);
  });

  it("records which process made each Web API call", async () => {
    slack = await startFakeSlack();
    const fake = slack;
    await fetch(`${fake.apiUrlFor("p7")}auth.test`, {
      method: "POST",
      headers: { authorization: `Bearer ${fake.state.botToken}` },
    });
    expect(fake.state.calls.map((call) => [call.method, call.via])).toEqual([["auth.test", "p7"]]);
  });
});
