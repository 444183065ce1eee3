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
-- Drops from done the later claims of an id that came more than once in
-- the batch (vals, res and marks kept in step with it): the first of them
-- completes, a later one is answered '2' (done a moment ago) when it holds
-- the same token, else '0' (out: the codes of the batch, '1' for every
-- claim done held). Returns the count left in done. complete() looks for
-- repeated ids only when its HDEL deleted fewer claims than it completed:
-- a table of the ids seen cost every batch about 2% of its server
-- instructions (a hash insert and its growth per claim).
local function complete_dups(ids, a, out, nd, done, vals, res, marks)
  local first, x, w = {}, 0, 0
  for i = 1, #ids do
    if out[i] == '1' then
      x = x + 1
      local id, tok = ids[i], ARGV[a + 2 * i - 1]
      if string.find(tok, '\0', 1, true) then tok = res_split(tok) end
      if first[id] then
        out[i] = first[id] == tok and '2' or '0'
      else
        first[id] = tok
        w = w + 1
        done[w], vals[w] = done[x], vals[x]
        if res then res[w] = res[x] end
        if marks then
          marks[2 * w + 1] = marks[2 * x + 1]
          marks[2 * w + 2] = marks[2 * x + 2]
        end
      end
    end
  end
  for y = w + 1, nd do
    done[y], vals[y] = nil, nil
    if res then res[y] = nil end
    if marks then marks[2 * y + 1], marks[2 * y + 2] = nil, nil end
  end
  return w
end

-- The batch's codes `out` (made for n claims when nil) with '1' in every
-- place up to `upto` that holds none yet.
local function complete_ones(out, n, upto)
  out = out or presized(n)
  for x = 1, upto do out[x] = out[x] or '1' end
  return out
end

local function complete(keep, keep_s, a)
  -- out[i]: the code of claim i, a character: one string in the reply,
  -- not a reply element per claim; nil while every claim so far
  -- completed (the rule): the string is then '1' times their number.
  local out
  local nids = math.floor((#ARGV + 1 - a) / 2) -- (ids at a, a + 2, ...)
  if nids <= 0 then return {now, ''} end
  local ids = presized(nids)
  for i = 1, nids do ids[i] = ARGV[a + 2 * i - 2] end
  -- (Results and events take the script's clock: lib/queue_life.lua.)
  if not life.t then life.t = now end
  local claims = tag .. ':claims'
  local held = call('HMGET', claims, unpack(ids))
  local stops = stop_calls(ids, held, a, true)
  -- seen: the ids met, only when some claim was stopped (the stopped
  -- ones' codes depend on it); else a repeated id is found after the
  -- loop (complete_dups). (Sized once: presized, lib/queue_int.lua.)
  local done, nd, vals = presized(nids), 0, presized(nids)
  local seen = stops and {}
  local marks
  if keep > 0 then
    marks = presized(2 + 2 * nids)
    marks[1], marks[2] = '', HASH_MARK
  end
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
    elseif seen and seen[id] then
      -- Completed a moment ago by this batch.
      code = seen[id] == tok and '2' or '0'
    elseif v and byte(v, #tok + 1) == 0 and sfind(v, tok, 1, true) == 1 then
      if seen then seen[id] = tok end
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
    if code and not out then out = complete_ones(nil, nids, i - 1) end
    if out then out[i] = code or '1' end
  end
  if nd > 0 then
    if call('HDEL', claims, unpack(done)) < nd and not seen then
      out = complete_ones(out, nids, nids)
      nd = complete_dups(ids, a, out, nd, done, vals, res, marks)
    end
    call('HINCRBY', tag .. ':stats', 'completed', dec(nd))
    hist_add('c', nd)
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
        for x = 1, nd do rl[x] = res[x] or '' end
      end
      deps_ended(done, 'c', rl)
    end
    if fl.uniq then unique_ended(tag, done) end
  end
  return {now, out and table.concat(out) or string.rep('1', nids)}
end
