-- queue_ended.lua -- included by queue scripts (--#include queue_ended):
-- ended(id, tok, v) answers a call on a claim that is not held (any more),
-- v being the job's value in the claims hash: 0 when another claim holds
-- it (v set; stale); else 2 when that claim ended (the job's info or done
-- record has its token), -1 when the job is gone, 0 when another claim
-- ended it (stale).
-- claims_held(a) reads the claims given as id, token pairs from ARGV[a] to
-- the end: their ids, and their values in the claims hash (none read when
-- there is no id). Expects `call` and `tag`.
local sub, byte = string.sub, string.byte
local function has_token(v, tok)
  return v and sub(v, 1, #tok) == tok and byte(v, #tok + 1) == 0
end

local function claims_held(a)
  local ids = {}
  for i = a, #ARGV - 1, 2 do ids[#ids + 1] = ARGV[i] end
  if #ids == 0 then return ids end
  return ids, call('HMGET', tag .. ':claims', unpack(ids))
end

local function ended(id, tok, v)
  if v then return 0 end
  if call('HEXISTS', rec_key(tag, id), id) == 0 then return -1 end
  -- Both records are "<finished_ms>\0<token>\0...".
  for _, part in ipairs({':info', ':done'}) do
    local r = call('HGET', tag .. part, id)
    local p = r and string.find(r, '\0', 1, true)
    if p and has_token(sub(r, p + 1), tok) then return 2 end
  end
  return 0
end
