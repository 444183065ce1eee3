-- queue_trim.lua -- included by queue scripts (--#include queue_trim):
-- retention of finished jobs. Expects `call` (redis.call), `now` (server
-- ms) and `jp` (the job key prefix "<tag>:job:") defined before it.
-- Deletes the oldest entries ("<finished_ms>:<id>") of the list `l` and
-- their job records (and their entries in the hash `marks`, when given):
-- those finished more than keep_s seconds ago (when keep_s > 0), then those
-- beyond `keep`; at most 1000 per call, so that a call stays short.
local function trim(l, keep, keep_s, marks)
  local n = 0
  if keep_s > 0 then
    local cutoff = now - keep_s * 1000
    local head = call('LINDEX', l, 0)
    local ms = head and string.match(head, '^(%d+):')
    if ms and tonumber(ms) <= cutoff then
      for i, e in ipairs(call('LRANGE', l, 0, 999)) do
        ms = string.match(e, '^(%d+):')
        if not ms or tonumber(ms) > cutoff then break end
        n = i
      end
    end
  end
  local excess = call('LLEN', l) - keep
  if excess > n then n = excess end
  if n > 1000 then n = 1000 end
  if n <= 0 then return end
  local keys, ids = {}, {}
  for _, e in ipairs(call('LRANGE', l, 0, n - 1)) do
    local id = string.match(e, '^%d+:(.*)$')
    if id then
      keys[#keys + 1] = jp .. id
      ids[#ids + 1] = id
    end
  end
  if #keys > 0 then
    call('DEL', unpack(keys))
    if marks then call('HDEL', marks, unpack(ids)) end
  end
  call('LTRIM', l, n, -1)
end
