/**
 * The Lua test every Redis write-if-absent shares: is a store key held by an entry that has not
 * expired? Expiry is judged by the entry's own envelope against the caller's clock, the clock its
 * reads judge by (backend.ts's deserializer), not by Redis's TTL: Redis starts a TTL when the
 * command arrives, a little after the envelope's, and by its own clock, which may stand apart
 * from the caller's. Going by the TTL, a read could find a key expired that a write-if-absent then
 * refused to write. A held value that is not an envelope counts as live. The write-if-absent
 * script itself is here too, shared by the store's `setIfAbsent` (one key) and coordination's
 * `insertIfAbsent` (a first key and the keys written with it), and so is the store's
 * compare-and-set (`replaceIf`), which judges an expiring entry it matches by the same clock.
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
 * KEYS[1]: the store key; ARGV: the entry it must hold as written without an expiry, the start of
 * that entry as written with one (then the expiry and `}`: it must not have passed), the caller's
 * clock, the entry to write and its ttl ('' = none). 1 when written, else 0.
 */
export const REPLACE_IF_LUA = `local held = redis.call('GET', KEYS[1])
if not held then return 0 end
if held ~= ARGV[1] then
  local start = ARGV[2]
  if string.sub(held, 1, #start) ~= start then return 0 end
  local expires = tonumber(string.match(string.sub(held, #start + 1), '^(%-?[%d%.eE+]+)}$'))
  if not expires or tonumber(ARGV[3]) > expires then return 0 end
end
if ARGV[5] == '' then redis.call('SET', KEYS[1], ARGV[4])
else redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[5]) end
return 1`;
