/**
 * The Lua scripts RedisCoordination runs (redis-coordination.ts): each does its check and its
 * writes in one step on the server, so a lease holder that paused past its lease cannot act on
 * its successor's keys. Kept apart from the client code that builds their KEYS and ARGV.
 */
import { LIVE_ENTRY_LUA } from "../backends/redis-live-entry.js";

export const ACQUIRE = `if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return 0`;
export const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;
export const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;
/** KEYS[1] the set; ARGV[1] the lease key prefix: the members whose lease key does not exist. */
export const UNLEASED_MEMBERS = `local free = {}
for _, member in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if redis.call('EXISTS', ARGV[1] .. member) == 0 then free[#free + 1] = member end
end
return free`;
/** KEYS[1] the lease, KEYS[2] the queue: released → the queue's length, else -1. */
export const RELEASE_AND_COUNT = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
redis.call('DEL', KEYS[1])
return redis.call('LLEN', KEYS[2])`;
/**
 * KEYS[1] the fence, KEYS[2..] one key per write; ARGV[1] the fence, then per write: op and two
 * arguments — set: value, ttl ('' = none); del: '', ''; trim: count, ''; lrem: item, ''; sadd /
 * srem: member, ''.
 */
export const FENCED_WRITE = `if tonumber(redis.call('GET', KEYS[1]) or '0') ~= tonumber(ARGV[1]) then return 0 end
for i = 2, #KEYS do
  local at = (i - 2) * 3 + 2
  local op = ARGV[at]
  if op == 'del' then
    redis.call('DEL', KEYS[i])
  elseif op == 'trim' then
    redis.call('LTRIM', KEYS[i], tonumber(ARGV[at + 1]), -1)
  elseif op == 'lrem' then
    redis.call('LREM', KEYS[i], 1, ARGV[at + 1])
  elseif op == 'sadd' or op == 'srem' then
    redis.call(op, KEYS[i], ARGV[at + 1])
  elseif ARGV[at + 2] == '' then
    redis.call('SET', KEYS[i], ARGV[at + 1])
  else
    redis.call('SET', KEYS[i], ARGV[at + 1], 'PX', ARGV[at + 2])
  end
end
return 1`;
/**
 * KEYS: the queue, the index set, the lease, the fence, then the claim keys. ARGV: the item, the
 * index member, the lease token, the lease TTL, then per claim: value, ttl ('' = none), then the
 * caller's clock. A claim key held by an entry expired by that clock counts as free
 * (redis-live-entry.ts). Returns {0} for a duplicate, {1, fence, items…} when the lease was taken,
 * {2, holder} otherwise.
 */
export const OFFER = `${LIVE_ENTRY_LUA}
for i = 5, #KEYS do
  if live_entry(KEYS[i], tonumber(ARGV[#ARGV])) then return {0} end
end
for i = 5, #KEYS do
  local at = (i - 5) * 2 + 5
  if ARGV[at + 1] == '' then redis.call('SET', KEYS[i], ARGV[at])
  else redis.call('SET', KEYS[i], ARGV[at], 'PX', ARGV[at + 1]) end
end
redis.call('SADD', KEYS[2], ARGV[2])
redis.call('RPUSH', KEYS[1], ARGV[1])
if redis.call('SET', KEYS[3], ARGV[3], 'NX', 'PX', ARGV[4]) then
  local reply = {1, redis.call('INCR', KEYS[4])}
  for _, item in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do reply[#reply + 1] = item end
  return reply
end
return {2, redis.call('GET', KEYS[3])}`;
