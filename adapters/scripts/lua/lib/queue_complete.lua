-- queue_complete.lua -- included by queue scripts (--#include
-- queue_complete): complete(keep, keep_s, a) completes the claims given
-- as id, token pairs in ARGV[a], ARGV[a + 1], ... and returns the reply
-- of queue_complete.lua. Each claim still held is dropped and counted;
-- with keep 0 the job's records go too, else the job is kept as
-- completed (the done hash gets its finish time and claim, the completed
-- list its id) and the kept ones are trimmed to `keep` jobs and an age of
-- keep_s seconds (0: no age bound). A claim whose job was cancelled or
-- ran past its run deadline ends as that says instead (lib/queue_stop.lua:
-- answered 3 or 4). Expects `call`, `tag`, `now`, and
-- queue_int, queue_trim, queue_ended and queue_freed included before it.
--#include queue_unique
--#include queue_hist
--#include queue_errs
-- A claim's result code (-1, 0, 2, 3 or 4) as the reply's character
-- (queue_complete.lua).
local function complete_code(c)
  if c == 0 then
    return '0'
  elseif c == 2 then
    return '2'
  elseif c == -1 then
    return '-'
  end
  return c == 3 and '3' or '4'
end
local function complete(keep, keep_s, a)
  -- out[i]: the code of claim i, a character: one string in the reply,
  -- not a reply element per claim; nil while every claim so far
  -- completed (the rule): the string is then '1' times their number.
  local out
  local ids = {}
  for i = a, #ARGV - 1, 2 do ids[#ids + 1] = ARGV[i] end
  if #ids == 0 then return {now, ''} end
  -- (Results and events take the script's clock: lib/queue_life.lua.)
  if not life.t then life.t = now end
  local claims = tag .. ':claims'
  local held = call('HMGET', claims, unpack(ids))
  local stops = stop_calls(ids, held, a, true)
  local done, marks, seen, nd, vals = {}, {'', HASH_MARK}, {}, 0, {}
  -- res[x]: the result of done[x], of the completions with one; ttl: their
  -- ttl_ms.
  local res, ttl
  local prefix = dec(now) .. '\0'
  local sfind = string.find
  for i, id in ipairs(ids) do
    local tok, r = ARGV[a + 2 * i - 1], nil
    -- (A token with a result: lib/queue_life.lua.)
    if sfind(tok, '\0', 1, true) then tok, ttl, r = res_split(tok) end
    local v = held[i]
    local code -- (nil: '1')
    if stops and stops[id] and not seen[id] and has_token(v, tok) then
      seen[id] = ''
      code = complete_code(stops[id])
    elseif seen[id] then
      -- Completed a moment ago by this batch.
      code = seen[id] == tok and '2' or '0'
    elseif v and byte(v, #tok + 1) == 0 and sfind(v, tok, 1, true) == 1 then
      seen[id] = tok
      nd = nd + 1
      done[nd] = id
      if keep > 0 then
        marks[2 * nd + 1] = id
        marks[2 * nd + 2] = prefix .. v
      end
      vals[nd] = v
      if r then
        res = res or {}
        res[nd] = r
      end
    elseif v then
      code = '0' -- held by another claim
    else
      code = complete_code(ended(id, tok))
    end
    if code and not out then
      out = {}
      for x = 1, i - 1 do out[x] = '1' end
    end
    if out then out[i] = code or '1' end
  end
  if #done > 0 then
    call('HDEL', claims, unpack(done))
    call('HINCRBY', tag .. ':stats', 'completed', dec(#done))
    hist_add('c', #done)
    if keep > 0 then
      call('HSET', tag .. ':done', unpack(marks))
      local len = call('RPUSH', tag .. ':completed', unpack(done))
      trim(tag .. ':completed', tag .. ':done', keep, keep_s, len)
    else
      recs_del(tag, done)
      if call('EXISTS', tag .. ':opts', tag .. ':info') > 0 then
        call('HDEL', tag .. ':opts', unpack(done))
        errs_del(done, call('HDEL', tag .. ':info', unpack(done)))
      end
    end
    local fl = flow_ended(vals)
    life_done(done, res, ttl)
    if fl.deps then
      -- (The children's results, in the order of `done`.)
      local rl
      if res then
        rl = {}
        for x = 1, #done do rl[x] = res[x] or '' end
      end
      deps_ended(done, 'c', rl)
    end
    if fl.uniq then unique_ended(tag, done) end
  end
  return {now, out and table.concat(out) or string.rep('1', #ids)}
end
