/**
 * The Lua test every Redis write-if-absent shares: is a store key held by an entry that has not
 * expired? Expiry is judged by the entry's own envelope against the caller's clock, the clock its
 * reads judge by (backend.ts's deserializer), not by Redis's TTL: Redis starts a TTL when the
 * command arrives, a little after the envelope's, and by its own clock, which may stand apart
 * from the caller's. Going by the TTL, a read could find a key expired that a write-if-absent then
 * refused to write. A held value that is not an envelope counts as live. The write-if-absent
 * script itself is here too, shared by the store's `setIfAbsent` (one key) and coordination's
 * `insertIfAbsent` (a first key and the keys written with it), and so are the store's
 * compare-and-set (`replaceIf`) and compare-and-delete (`deleteIf`), which judge an expiring entry
 * they match by the same clock.
 */

/** Lua: `live_entry(key, now)` — true when `key` holds an entry unexpired at `now` (milliseconds). */
export const LIVE_ENTRY_LUA = `local function live_entry(key, now)
  local held = redis.call('GET', key)
  if not held then return false end
  local ok, entry = pcall(cjson.decode, held)
  return not (ok and type(entry) == 'table' and type(entry.expires) == 'number' and now > entry.expires)
end
`;

/**
 * KEYS: the store keys to write, the first only when absent (or expired by the caller's clock);
 * ARGV: per key a value and a ttl ('' = none), then the caller's clock. 1 when written, else 0.
 */
export const INSERT_IF_ABSENT_LUA = `${LIVE_ENTRY_LUA}
if live_entry(KEYS[1], tonumber(ARGV[#ARGV])) then return 0 end
for i = 1, #KEYS do
  if ARGV[i * 2] == '' then redis.call('SET', KEYS[i], ARGV[i * 2 - 1])
  else redis.call('SET', KEYS[i], ARGV[i * 2 - 1], 'PX', ARGV[i * 2]) end
end
return 1`;

/**
 * Lua: `holds_expected(key)` — true when `key` holds the entry ARGV[1] (as written without an
 * expiry), or ARGV[2] (its start as written with one; empty: none) followed by an expiry not
 * passed at ARGV[3], the caller's clock: the store's ExpectedEntry.
 */
const HOLDS_EXPECTED_LUA = `local function holds_expected(key)
  local held = redis.call('GET', key)
  if not held then return false end
  if held == ARGV[1] then return true end
  local start = ARGV[2]
  if start == '' or string.sub(held, 1, #start) ~= start then return false end
  local expires = tonumber(string.match(string.sub(held, #start + 1), '^(%-?[%d%.eE+]+)}$'))
  return expires ~= nil and tonumber(ARGV[3]) <= expires
end
`;

/**
 * KEYS[1]: the store key; ARGV: the expected entry (three, see HOLDS_EXPECTED_LUA), the entry to
 * write and its ttl ('' = none). 1 when written, else 0.
 */
export const REPLACE_IF_LUA = `${HOLDS_EXPECTED_LUA}
if not holds_expected(KEYS[1]) then return 0 end
if ARGV[5] == '' then redis.call('SET', KEYS[1], ARGV[4])
else redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[5]) end
return 1`;

/** KEYS[1]: the store key; ARGV: the expected entry (three, see HOLDS_EXPECTED_LUA). 1 when deleted, else 0. */
export const DELETE_IF_LUA = `${HOLDS_EXPECTED_LUA}
if not holds_expected(KEYS[1]) then return 0 end
redis.call('DEL', KEYS[1])
return 1`;
