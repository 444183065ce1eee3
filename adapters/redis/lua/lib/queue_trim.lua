-- queue_trim.lua -- included by queue scripts (--#include queue_trim):
-- retention of finished jobs. Expects `call` (redis.call), `now` (server
-- ms), `tag` and `int` defined before it. The list `l` holds the ids of
-- the kept jobs, oldest first; `times` is the hash whose value for an id
-- starts with "<finished_ms>\0". Deletes the oldest: those finished more
-- than keep_s seconds ago (when keep_s > 0), then those beyond `keep`;
-- at most 1000 per call, so that a call stays short. Their records go
-- with them (jobs, opts, info, and their entries in `times`).
local function trim(l, times, keep, keep_s)
  local n = call('LLEN', l) - keep
  if n < 0 then n = 0 end
  -- Past the count, the oldest kept jobs are looked at a few at a time
  -- and the walk stops at the first one young enough: in the steady
  -- state that is the first, so a completion reads one entry, not the
  -- whole list.
  local cutoff, step = now - keep_s * 1000, 4
  while keep_s > 0 and n < 1000 do
    local ids = call('LRANGE', l, dec(n), dec(n + step - 1))
    if #ids == 0 then break end
    local v = call('HMGET', times, unpack(ids))
    local young = false
    for i = 1, #ids do
      local e = v[i]
      local p = e and string.find(e, '\0', 1, true)
      if p and int(string.sub(e, 1, p - 1)) > cutoff then
        young = true
        break
      end
      n = n + 1
    end
    if young then break end
    if step < 256 then step = step * 4 end
  end
  if n > 1000 then n = 1000 end
  if n <= 0 then return end
  local ids = call('LRANGE', l, '0', dec(n - 1))
  call('HDEL', tag .. ':jobs', unpack(ids))
  call('HDEL', tag .. ':opts', unpack(ids))
  call('HDEL', tag .. ':info', unpack(ids))
  if times ~= tag .. ':info' then call('HDEL', times, unpack(ids)) end
  call('LTRIM', l, dec(n), '-1')
end
