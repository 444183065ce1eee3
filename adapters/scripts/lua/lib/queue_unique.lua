-- queue_unique.lua -- included by the queue scripts that add or end jobs
-- (--#include queue_unique; lib/queue_add.lua, lib/queue_rec.lua and
-- lib/queue_complete.lua include it): unique keys held until their job
-- ends (docs/queue.md, "Unique jobs"). A job enqueued with a unique key
-- and ext item "u=1" holds T:unique:<key> (its id; no expiry, or its
-- unique_ttl_ms as a safety bound) until it completes, dies or is
-- cancelled; T:uniq maps each such job's id to its key, and T:limits has
-- the field "uniq" while T:uniq has an entry. The scripts that end claims
-- learn that flag from the read of T:limits they make anyway (flow_ended,
-- lib/queue_freed.lua), so that a queue without such jobs pays no command
-- for them. Expects nothing but redis.call.

-- unique_hold(tag, kv): records the jobs of `kv` (id, key, id, key, ...),
-- whose keys the enqueue just took, as holding them until they end.
local function unique_hold(tag, kv)
  if #kv == 0 then return end
  redis.call('HSET', tag .. ':uniq', unpack(kv))
  redis.call('HSET', tag .. ':limits', 'uniq', '1')
end

-- unique_ended(tag, ids): the jobs `ids` ended (completed, dead, cancelled
-- or moved aside). Each one that holds its key until it ends releases it,
-- if the key still names the job (a key that expired at its safety bound
-- may have a new holder, who keeps it); its entry goes, and the flag with
-- the last entry.
local function unique_ended(tag, ids)
  local call = redis.call
  local h = tag .. ':uniq'
  local keys = call('HMGET', h, unpack(ids))
  local gone = {}
  for i, k in ipairs(keys) do
    if k then
      gone[#gone + 1] = ids[i]
      local ukey = tag .. ':unique:' .. k
      if redis.pcall('GET', ukey) == ids[i] then call('DEL', ukey) end
    end
  end
  if #gone == 0 then return end
  call('HDEL', h, unpack(gone))
  if call('EXISTS', h) == 0 then call('HDEL', tag .. ':limits', 'uniq') end
end
