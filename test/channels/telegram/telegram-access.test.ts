/**
 * Pairing: an approved account has an allowed user's standing only while its approver is still
 * an allowed user; allowed users list pairings (/pairs) and end them (/unpair).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AccessOptions, TelegramAccess } from "../../../src/channels/telegram/telegram-access.js";
import { storeSlotBudget } from "../../../src/store/slot-budget.js";
import { getAll, type KeyValueSpace } from "../../../src/store/store.js";
import { memorySpace } from "../../skills/support.js";
import { type RedisServer, startRedisServer } from "../../support/redis-server.js";
import { tempStores } from "../../support/temp-stores.js";

const ADMIN = { id: 111, name: "@admin" };
const OTHER_ADMIN = { id: 222, name: "@other" };
const MALLORY = { id: 999, name: "@mallory" };
const DM = { id: MALLORY.id, type: "private" };
const GROUP = { id: -100500, type: "supergroup" };

function codeIn(refusal: string | undefined): string {
  const code = /\/pair (\w+)/.exec(refusal ?? "")?.[1];
  if (!code) throw new Error(`no code in ${refusal}`);
  return code;
}

/** A fresh hourly budget for the replies to people refused (each test's own). */
function replies() {
  return storeSlotBudget(memorySpace());
}

/** Membership of allowed groups, for tests whose allowed_chats list none. */
const NOBODY = { isMember: async () => false };

function warnings(): { logger: NonNullable<AccessOptions["logger"]>; lines: unknown[][] } {
  const lines: unknown[][] = [];
  const logger = { warn: (...args: unknown[]) => lines.push(args) } as never;
  return { logger, lines };
}

/** Mallory paired by `approver` on a fresh access over `store`. */
async function paired(store = memorySpace(), approver = ADMIN) {
  const access = new TelegramAccess({
    allowedUsers: ["111", "222"],
    allowedChats: [],
    members: NOBODY,
    replies: replies(),
    store,
  });
  const reply = await access.approve(approver, codeIn(await access.refusal(DM, MALLORY)));
  return { access, reply, store };
}

const open = tempStores("telegram-access-");
let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis?.stop();
});

describe("Telegram access", () => {
  it("lets an allowed user in anywhere with nothing looked up: no pairing, no group membership", async () => {
    const lookups: string[] = [];
    const store = new Proxy(memorySpace(), {
      get: (space, name) => {
        lookups.push(String(name));
        return Reflect.get(space, name);
      },
    });
    const access = new TelegramAccess({
      allowedUsers: ["111"],
      allowedChats: [String(GROUP.id)],
      members: {
        isMember: async () => {
          lookups.push("isMember");
          return false;
        },
      },
      replies: replies(),
      store,
    });
    lookups.length = 0;
    expect(await access.allows({ id: ADMIN.id, type: "private" }, ADMIN)).toBe(true);
    expect(await access.allows(GROUP, ADMIN)).toBe(true);
    expect(await access.allows({ id: -42, type: "group" }, ADMIN)).toBe(true);
    expect(lookups).toEqual([]);
    // Anyone else in the listed group is looked up.
    expect(await access.allows(GROUP, MALLORY)).toBe(false);
    expect(lookups).toContain("isMember");
  });
});

describe("Telegram pairing", () => {
  it("names who was approved, and the pairing lets them in everywhere", async () => {
    const { access, reply } = await paired();
    expect(reply).toContain("@mallory (user id 999)");
    expect(reply).toContain("/unpair 999");
    expect(await access.allows(DM, MALLORY)).toBe(true);
    expect(await access.allows(GROUP, MALLORY)).toBe(true);
  });

  it("ends when its approver leaves the allowed users (after a restart on the same store)", async () => {
    const { store } = await paired();
    const { logger, lines } = warnings();
    const after = new TelegramAccess({
      allowedUsers: ["222"],
      allowedChats: [],
      members: NOBODY,
      replies: replies(),
      store,
      logger,
    });
    expect(await after.allows(DM, MALLORY)).toBe(false);
    expect(await after.allows(GROUP, MALLORY)).toBe(false);
    // Logged once, not at every message.
    expect(lines).toHaveLength(1);
    expect(String(lines[0]![1])).toContain("approver (user id 111) is no longer an allowed user");
    // The remaining admin sees it as lapsed and can end it.
    expect(await after.list(OTHER_ADMIN)).toContain("no longer counts");
    // Back in the list, the approver's pairing counts again.
    const back = new TelegramAccess({
      allowedUsers: ["111"],
      allowedChats: [],
      members: NOBODY,
      replies: replies(),
      store,
    });
    expect(await back.allows(DM, MALLORY)).toBe(true);
  });

  it("does not count a stored pairing that names no approver", async () => {
    const store = memorySpace();
    await store.set("tg:paired:999", { at: "2026-01-01T00:00:00.000Z" });
    const { logger, lines } = warnings();
    const access = new TelegramAccess({
      allowedUsers: ["111"],
      allowedChats: [],
      members: NOBODY,
      replies: replies(),
      store,
      logger,
    });
    expect(await access.allows(DM, MALLORY)).toBe(false);
    expect(String(lines[0]![1])).toContain("names no approver");
  });

  it("lists an older record (from before /pairs) once it is checked, so it can be ended", async () => {
    const store = memorySpace();
    await store.set("tg:paired:999", { by: "111", at: "2026-01-01T00:00:00.000Z" });
    const access = new TelegramAccess({
      allowedUsers: ["111"],
      allowedChats: [],
      members: NOBODY,
      replies: replies(),
      store,
    });
    expect(await access.allows(DM, MALLORY)).toBe(true);
    expect(await access.list(ADMIN)).toContain("user id 999: approved by user id 111 on 2026-01-01");
    await access.unpair(ADMIN, "999");
    expect(await access.allows(DM, MALLORY)).toBe(false);
  });

  it("a malformed stored record is no pairing, and /pairs skips it", async () => {
    const store = memorySpace();
    await store.set("tg:paired:999", { by: "111", at: 5 });
    await store.set("tg:paired:998", ["111"]);
    await store.set("tg:paired-index", ["999", "998"]);
    const access = new TelegramAccess({
      allowedUsers: ["111"],
      allowedChats: [],
      members: NOBODY,
      replies: replies(),
      store,
    });
    expect(await access.allows(DM, MALLORY)).toBe(false);
    expect(await access.allows({ id: 998, type: "private" }, { id: 998, name: "@x" })).toBe(false);
    expect(await access.list(ADMIN)).toBe("No paired accounts.");
    // An index of the wrong shape lists nothing (and does not stop a new pairing joining it).
    await store.set("tg:paired-index", { 0: "999" });
    expect(await access.list(ADMIN)).toBe("No paired accounts.");
    const { reply, access: again } = await paired(store);
    expect(reply).toContain("Approved");
    expect(await again.list(ADMIN)).toContain("@mallory (user id 999)");
  });

  it("lists a record the index lacks at the next check of that user, lapsed or not", async () => {
    // An approval that stopped between its record and its index entry.
    const store = memorySpace();
    await store.set("tg:paired:999", { by: "111", byName: "@admin", at: "2026-01-01T00:00:00.000Z" });
    const other = new TelegramAccess({
      allowedUsers: ["222"],
      allowedChats: [],
      members: NOBODY,
      replies: replies(),
      store,
    });
    expect(await other.list(OTHER_ADMIN)).toBe("No paired accounts.");
    // A process where the approver has lapsed still lists it, so it can be seen and ended.
    expect(await other.allows(DM, MALLORY)).toBe(false);
    expect(await other.list(OTHER_ADMIN)).toContain("user id 999: approved by @admin (user id 111)");
  });

  it("lists every pairing approved at once in one process, each once", async () => {
    const { access } = await paired();
    const users = [501, 502, 503, 504].map((id) => ({ id, name: `@u${id}` }));
    const codes = await Promise.all(
      users.map(async (u) => codeIn(await access.refusal({ id: u.id, type: "private" }, u))),
    );
    await Promise.all(codes.map((code) => access.approve(ADMIN, code)));
    // Ended and approved again: listed once.
    await access.unpair(ADMIN, "999");
    await access.approve(ADMIN, codeIn(await access.refusal(GROUP, MALLORY)));
    const lines = (await access.list(ADMIN)).split("\n").slice(1);
    expect(lines.map((line) => /user id (\d+)\)/.exec(line)?.[1])).toEqual([
      "999",
      "501",
      "502",
      "503",
      "504",
    ]);
  });

  it("lists and keeps the pairings indexed by an earlier version (one stored list)", async () => {
    const store = memorySpace();
    await store.set("tg:paired:999", {
      by: "111",
      byName: "@admin",
      at: "2026-01-01T00:00:00.000Z",
      name: "@mallory",
    });
    await store.set("tg:paired:998", { by: "111", at: "2026-01-02T00:00:00.000Z" });
    await store.set("tg:paired-index", ["999", "998"]);
    const access = new TelegramAccess({
      allowedUsers: ["111"],
      allowedChats: [],
      members: NOBODY,
      replies: replies(),
      store,
    });
    const list = await access.list(ADMIN);
    expect(list).toContain("@mallory (user id 999): approved by @admin (user id 111) on 2026-01-01");
    expect(list).toContain("user id 998: approved by user id 111 on 2026-01-02");
    expect(await store.get("tg:paired-index")).toBeUndefined();
    // Another process (with nothing remembered) lists them from the new index, and they work.
    const other = new TelegramAccess({
      allowedUsers: ["111"],
      allowedChats: [],
      members: NOBODY,
      replies: replies(),
      store,
    });
    expect(await other.list(ADMIN)).toBe(list);
    expect(await other.allows(DM, MALLORY)).toBe(true);
    await other.unpair(ADMIN, "999");
    expect(await other.allows(DM, MALLORY)).toBe(false);
    expect(await other.list(ADMIN)).not.toContain("user id 999");
  });

  it("lets an allowed user list and end pairings, also another admin's", async () => {
    const { access, store } = await paired();
    const list = await access.list(OTHER_ADMIN);
    expect(list).toMatch(/@mallory \(user id 999\): approved by @admin \(user id 111\) on \d{4}-\d\d-\d\d/);
    expect(await access.unpair(OTHER_ADMIN, "999")).toContain("Pairing ended: @mallory (user id 999)");
    expect(await access.allows(DM, MALLORY)).toBe(false);
    expect(await access.list(ADMIN)).toBe("No paired accounts.");
    // Another process on the same store sees the end at once.
    expect(
      await new TelegramAccess({
        allowedUsers: ["111"],
        allowedChats: [],
        members: NOBODY,
        replies: replies(),
        store,
      }).allows(DM, MALLORY),
    ).toBe(false);
    expect(await access.unpair(ADMIN, "999")).toBe("No pairing for user id 999.");
    expect(await access.unpair(ADMIN, "abc")).toContain("Usage: /unpair <user id>");
  });

  it("an unpaired revocation in another process counts here at once", async () => {
    const { access, store } = await paired();
    expect(await access.allows(DM, MALLORY)).toBe(true);
    const other = new TelegramAccess({
      allowedUsers: ["111"],
      allowedChats: [],
      members: NOBODY,
      replies: replies(),
      store,
    });
    await other.unpair(ADMIN, "999");
    expect(await access.allows(DM, MALLORY)).toBe(false);
  });

  it("refuses /pair, /pairs and /unpair from a paired (not allowed) user", async () => {
    const { access } = await paired();
    const carol = { id: 333, name: "@carol" };
    const code = codeIn(await access.refusal({ id: carol.id, type: "private" }, carol));
    expect(await access.approve(MALLORY, code)).toContain("Only an admin");
    expect(await access.list(MALLORY)).toContain("Only an admin");
    expect(await access.unpair(MALLORY, "999")).toContain("Only an admin");
    expect(await access.allows(DM, MALLORY)).toBe(true);
  });

  it.each([
    ["SQLite", () => undefined],
    ["Redis", () => redis.url],
  ])("approves a code another process showed, once, also after a restart (%s)", async (_, url) => {
    const shower = new TelegramAccess({
      allowedUsers: ["111"],
      allowedChats: [],
      members: NOBODY,
      replies: replies(),
      store: (await open(url())).space("grants"),
    });
    const code = codeIn(await shower.refusal(DM, MALLORY));
    // Another process on the same store, started after the code was shown (a restart, or a webhook
    // behind a load balancer), approves it; a second approval anywhere finds it taken.
    const approver = new TelegramAccess({
      allowedUsers: ["111"],
      allowedChats: [],
      members: NOBODY,
      replies: replies(),
      store: (await open(url())).space("grants"),
    });
    expect(await approver.approve(ADMIN, code.toLowerCase())).toContain("Approved: @mallory (user id 999)");
    expect(await shower.allows(DM, MALLORY)).toBe(true);
    expect(await shower.approve(ADMIN, code)).toContain(`No pending pairing code "${code}"`);
    expect(await approver.approve(ADMIN, code)).toContain("No pending pairing code");
  });

  it("keeps a code an hour, and takes no stored code of the wrong shape", async () => {
    const store = memorySpace();
    let now = Date.parse("2026-03-01T12:00:00Z");
    const access = new TelegramAccess({
      allowedUsers: ["111"],
      allowedChats: [],
      members: NOBODY,
      replies: replies(),
      store,
      now: () => now,
    });
    const code = codeIn(await access.refusal(DM, MALLORY));
    expect(await store.get(`tg:paircode:${code}`)).toEqual({
      userId: 999,
      name: "@mallory",
      expiresAt: now + 60 * 60 * 1000,
    });
    now += 60 * 60 * 1000;
    expect(await access.approve(ADMIN, code)).toContain("No pending pairing code");
    await store.set("tg:paircode:ABCDEF", { userId: "999", name: "@mallory", expiresAt: now + 1000 });
    expect(await access.approve(ADMIN, "ABCDEF")).toContain("No pending pairing code");
    expect(await access.allows(DM, MALLORY)).toBe(false);
  });

  it("shows no code it could not store: the refusal then names the other ways in", async () => {
    const { logger, lines } = warnings();
    const failing: KeyValueSpace = {
      ...memorySpace(),
      setIfAbsent: async () => {
        throw new Error("store down");
      },
    };
    const down = new TelegramAccess({
      allowedUsers: ["111"],
      allowedChats: [],
      members: NOBODY,
      replies: replies(),
      store: failing,
      logger,
    });
    const refusal = await down.refusal(GROUP, MALLORY);
    expect(refusal).toContain("Your Telegram user id is 999");
    expect(refusal).toContain("TELEGRAM_ALLOWED_USERS");
    expect(refusal).not.toContain("/pair");
    expect(String(lines[0]![1])).toContain("could not store a pairing code");
    // Every code it draws taken already: none shown either.
    const full: KeyValueSpace = { ...memorySpace(), setIfAbsent: async () => false };
    const taken = new TelegramAccess({
      allowedUsers: ["111"],
      allowedChats: [],
      members: NOBODY,
      replies: replies(),
      store: full,
    });
    expect(await taken.refusal(DM, MALLORY)).not.toContain("/pair");
  });

  // Two processes (two stores on one SQLite file, or on one Redis) approve at once: the first
  // has read what it is about to change when the second approves, and writes after it.
  it.each([
    ["SQLite", () => undefined],
    ["Redis", () => redis.url],
  ])("lists both pairings approved at once in two processes (%s)", async (_, url) => {
    const held = holdingWritesAfterARead((await open(url())).space("grants"));
    const one = new TelegramAccess({
      allowedUsers: ["111"],
      allowedChats: [],
      members: NOBODY,
      replies: replies(),
      store: held.space,
    });
    const two = new TelegramAccess({
      allowedUsers: ["111"],
      allowedChats: [],
      members: NOBODY,
      replies: replies(),
      store: (await open(url())).space("grants"),
    });
    const alice = { id: 501, name: "@alice" };
    const bob = { id: 502, name: "@bob" };
    const first = one.approve(ADMIN, codeIn(await one.refusal({ id: alice.id, type: "private" }, alice)));
    await held.holding;
    expect(
      await two.approve(ADMIN, codeIn(await two.refusal({ id: bob.id, type: "private" }, bob))),
    ).toContain("Approved");
    held.release();
    expect(await first).toContain("Approved");
    for (const access of [one, two]) {
      const list = await access.list(ADMIN);
      expect(list).toContain("@alice (user id 501)");
      expect(list).toContain("@bob (user id 502)");
    }
  });
});

/**
 * `inner` with its writes held once its pairing index has been read from: `holding` resolves when
 * the first write is held, and every held write goes on at `release()`.
 */
function holdingWritesAfterARead(inner: KeyValueSpace) {
  let read = false;
  const indexKey = (key: string) => key.startsWith("tg:paired-");
  let holding!: () => void;
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const heldWrite = new Promise<void>((resolve) => {
    holding = resolve;
  });
  const afterHold = async <T>(write: () => Promise<T>): Promise<T> => {
    if (read) {
      holding();
      await held;
    }
    return write();
  };
  const space: KeyValueSpace = {
    get: (key) => {
      read ||= indexKey(key);
      return inner.get(key);
    },
    getMany: (keys) => {
      read ||= keys.some(indexKey);
      return getAll(inner, keys);
    },
    set: (key, value, ttlMs) => afterHold(() => inner.set(key, value, ttlMs)),
    delete: (key) => afterHold(() => inner.delete(key)),
    setIfAbsent: (key, value, ttlMs) => afterHold(() => inner.setIfAbsent(key, value, ttlMs)),
    replaceIf: (key, expected, value, ttlMs) => afterHold(() => inner.replaceIf(key, expected, value, ttlMs)),
    deleteIf: (key, expected) => afterHold(() => inner.deleteIf(key, expected)),
  };
  return { space, holding: heldWrite, release };
}
