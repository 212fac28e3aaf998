/**
 * The Lua test every Redis write-if-absent shares: is a store key held by an entry that has not
 * expired? Expiry is judged by the entry's own envelope against the caller's clock, the clock its
 * reads judge by (backend.ts's deserializer), not by Redis's TTL: Redis starts a TTL when the
 * command arrives, a little after the envelope's, and by its own clock, which may stand apart
 * from the caller's. Going by the TTL, a read could find a key expired that a write-if-absent then
 * refused to write. A held value that is not an envelope counts as live.
 */

/** Lua: `live_entry(key, now)` — true when `key` holds an entry unexpired at `now` (milliseconds). */
export const LIVE_ENTRY_LUA = `local function live_entry(key, now)
  local held = redis.call('GET', key)
  if not held then return false end
  local ok, entry = pcall(cjson.decode, held)
  return not (ok and type(entry) == 'table' and type(entry.expires) == 'number' and now > entry.expires)
end
`;
