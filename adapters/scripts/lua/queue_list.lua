-- queue_list.lua -- the ids of the queued (pending or delayed) jobs of one
-- type. No per-type index is kept (it would cost every enqueue and claim:
-- docs/queue.md, "Listing by type", has the measurements): this reads
-- every queued job's record, 1000 at a time, so it takes time in
-- proportion to the queued jobs (about 1.1 s for 1M); it is meant for
-- tools, not hot paths.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: pending,
--   pending:prio, delayed, recs:<c>, jobs.
-- ARGV[1]: type; ARGV[2]: limit.
-- Returns: {total, then up to limit ids}, pending jobs first, each in
--   their order.
local call = redis.call
local tag = KEYS[1]
local want = ARGV[1]
local limit = tonumber(ARGV[2])
--#include queue_int
--#include queue_rec

local out = {0}
local function scan(cmd, key)
  local from = 0
  while true do
    local ids = call(cmd, key, from, from + 999)
    if #ids == 0 then return end
    local recs = recs_get(tag, ids)
    for i, id in ipairs(ids) do
      local rec = recs[i]
      if rec then
        local _, _, _, _, k, l = rec_read(rec, id)
        if l - k - 1 == #want and sub(rec, k + 1, l - 1) == want then
          out[1] = out[1] + 1
          if out[1] <= limit then out[#out + 1] = id end
        end
      end
    end
    from = from + 1000
  end
end
scan('ZRANGE', tag .. ':pending:prio')
scan('LRANGE', tag .. ':pending')
-- The jobs of groups, group by group in the rotation's order.
for _, g in ipairs(call('LRANGE', tag .. ':groups', 0, -1)) do
  if g ~= '' then
    scan('ZRANGE', tag .. ':gz:' .. g)
    scan('LRANGE', tag .. ':gp:' .. g)
  end
end
scan('ZRANGE', tag .. ':delayed')
return out
