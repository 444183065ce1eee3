-- store_list.lua -- one page of the records under an index value, pruning
-- entries of expired and deleted records. In the index set of (index, value),
-- removes the entries that expired (score < now), then skips every entry that
-- sorts (by score, then member bytes) at or before (cursor score, cursor id),
-- takes the next `limit` entries, and removes those whose record has no value
-- (the record is gone).
-- KEYS[1]: the collection's hash tag "{prefix:collection}" (the record
--          layout: adapters/ops/store.h). Parts: ":idx:<index>:<value>",
--          ":rec:<id>" of each listed id.
-- ARGV: index, value, limit, cursor score ('' for the first page), cursor
--       id.
-- Returns: {next score, next id, {id_1, value_1, ...}}: the score and id of
--   the last entry taken when more entries follow, else -1 and ''.
local idx = KEYS[1] .. ':idx:' .. ARGV[1] .. ':' .. ARGV[2]
local rpre, limit = KEYS[1] .. ':rec:', tonumber(ARGV[3])
--#include time
local now = now_ms()
redis.call('ZREMRANGEBYSCORE', idx, '-inf', '(' .. now)

-- The page starts after every entry that sorts at or before the cursor
-- (score, id). Where that entry is no longer in the set with that score,
-- its rank is found by putting it there for a moment, which no other
-- client can observe.
local start = 0
if ARGV[4] ~= '' then
  local score, cid = tonumber(ARGV[4]), ARGV[5]
  local old = redis.call('ZSCORE', idx, cid)
  if old and tonumber(old) == score then
    start = redis.call('ZRANK', idx, cid) + 1
  else
    redis.call('ZADD', idx, score, cid)
    start = redis.call('ZRANK', idx, cid)
    if old then
      redis.call('ZADD', idx, old, cid)
      if tonumber(old) < score then
        start = start + 1
      end
    else
      redis.call('ZREM', idx, cid)
    end
  end
end

-- One entry more than the page tells whether more follow.
local got = redis.call('ZRANGE', idx, start, start + limit, 'WITHSCORES')
local n = math.min(#got / 2, limit)
local items = {}
for i = 1, n do
  local id = got[2 * i - 1]
  local v = redis.call('HGET', rpre .. id, 'v')
  if v then
    items[#items + 1] = id
    items[#items + 1] = v
  else
    redis.call('ZREM', idx, id)
  end
end
if #got / 2 > limit then
  return {math.floor(tonumber(got[2 * limit])), got[2 * limit - 1], items}
end
return {-1, '', items}
