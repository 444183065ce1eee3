-- queue_ended.lua -- included by queue scripts (--#include queue_ended):
-- ended(id, tok) answers a call on a claim that is not held (any more):
-- 2 when that claim ended (the job's info or done record has its token),
-- -1 when the job is gone, 0 when another claim ended it (stale). Expects
-- `call` and `tag`.
local sub, byte = string.sub, string.byte
local function has_token(v, tok)
  return v and sub(v, 1, #tok) == tok and byte(v, #tok + 1) == 0
end

local function ended(id, tok)
  if call('HEXISTS', rec_key(tag, id), id) == 0 then return -1 end
  -- Both records are "<finished_ms>\0<token>\0...".
  for _, part in ipairs({':info', ':done'}) do
    local v = call('HGET', tag .. part, id)
    local p = v and string.find(v, '\0', 1, true)
    if p and has_token(sub(v, p + 1), tok) then return 2 end
  end
  return 0
end
