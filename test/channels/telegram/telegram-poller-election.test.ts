/**
 * The Telegram poller election on a lease table with real TTLs: one poller at a time; a leader
 * that stops hands over at once, one that cannot renew stops polling and the lease moves on at
 * its TTL, one that finds its lease taken stops polling.
 */
import { randomUUID } from "node:crypto";
import pino from "pino";
import type { TelegramReceiver } from "../../../src/channels/telegram/telegram-receiver.js";
import { afterEach, describe, expect, it } from "vitest";
import {
  PollerElection,
  type PollerLeases,
  pollerLeaseKey,
} from "../../../src/channels/telegram/telegram-poller-election.js";
import { eventually } from "../../support/eventually.js";

const TTL_MS = 150;
const logger = pino({ level: "silent" });

/** Leases in memory with real expiry; `broken` makes every call of one caller fail. */
class LeaseTable {
  readonly held = new Map<string, { token: string; until: number }>();
  private current(key: string) {
    const lease = this.held.get(key);
    return lease && lease.until > Date.now() ? lease : undefined;
  }
  client(broken: { value: boolean } = { value: false }): PollerLeases {
    const fail = () => {
      if (broken.value) throw new Error("store unreachable");
    };
    return {
      acquire: async (key, ttlMs) => {
        fail();
        if (this.current(key)) return undefined;
        const token = randomUUID();
        this.held.set(key, { token, until: Date.now() + ttlMs });
        return { token };
      },
      renew: async (key, token, ttlMs) => {
        fail();
        const lease = this.current(key);
        if (lease?.token !== token) return false;
        lease.until = Date.now() + ttlMs;
        return true;
      },
      release: async (key, token) => {
        fail();
        if (this.current(key)?.token === token) this.held.delete(key);
      },
    };
  }
}

/** A poller that only counts: how many are polling right now, and the most ever at once. */
class Polling {
  static now = 0;
  static most = 0;
  polling = false;
  starts = 0;
  readonly poller: TelegramReceiver = {
    mode: "polling",
    description: "polling",
    port: () => undefined,
    start: async () => {
      if (this.polling) return;
      this.polling = true;
      this.starts += 1;
      Polling.now += 1;
      Polling.most = Math.max(Polling.most, Polling.now);
    },
    stop: async () => {
      if (this.polling) Polling.now -= 1;
      this.polling = false;
    },
    health: () => ({ ready: this.polling, state: this.polling ? "polling" : "idle" }),
  };
}

const elections: PollerElection[] = [];
afterEach(async () => {
  for (const election of elections.splice(0)) await election.stop();
  Polling.now = 0;
  Polling.most = 0;
});

function candidate(table: LeaseTable, broken?: { value: boolean }) {
  const polling = new Polling();
  const election = new PollerElection(polling.poller, table.client(broken), {
    key: pollerLeaseKey("123456:secret-token"),
    logger,
    ttlMs: TTL_MS,
  });
  elections.push(election);
  election.start();
  return { polling, election };
}

describe("Telegram poller election", () => {
  it("keys the lease by the bot id, never the token", () => {
    expect(pollerLeaseKey("123456:secret-token")).toBe("telegram:poller:123456");
  });

  it("lets exactly one of three processes poll, and hands over at once when the leader stops", async () => {
    const table = new LeaseTable();
    const three = [candidate(table), candidate(table), candidate(table)];
    await eventually(() => three.some((c) => c.polling.polling), "a poller");
    // Several renewal rounds pass: still one poller, and every standby is healthy.
    await new Promise((resolve) => setTimeout(resolve, TTL_MS * 3));
    expect(three.filter((c) => c.polling.polling)).toHaveLength(1);
    expect(three.every((c) => c.election.health().ready)).toBe(true);
    const leader = three.find((c) => c.election.isLeader());
    await leader?.election.stop();
    expect(leader?.polling.polling).toBe(false);
    await eventually(() => three.some((c) => c !== leader && c.polling.polling), "a new poller");
    expect(Polling.most).toBe(1);
  });

  it("a leader that cannot reach the store stops polling; another takes over after the TTL", async () => {
    const table = new LeaseTable();
    const broken = { value: false };
    const first = candidate(table, broken);
    await eventually(() => first.polling.polling, "the first poller");
    const second = candidate(table);
    broken.value = true;
    await eventually(() => second.polling.polling, "the second poller");
    expect(first.polling.polling).toBe(false);
    expect(first.election.health().ready).toBe(false);
    expect(Polling.most).toBe(1);
  });

  it("a leader whose lease was taken while it was frozen stops polling", async () => {
    const table = new LeaseTable();
    const first = candidate(table);
    await eventually(() => first.polling.polling, "the first poller");
    // Another process took the lease after it lapsed: the old holder's renewal is refused.
    table.held.set(pollerLeaseKey("123456:x"), { token: "someone-else", until: Date.now() + 60_000 });
    await eventually(() => !first.polling.polling, "the old poller to stop");
    expect(first.election.isLeader()).toBe(false);
    expect(first.polling.starts).toBe(1);
  });
});
