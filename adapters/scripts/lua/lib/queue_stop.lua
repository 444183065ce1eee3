-- queue_stop.lua -- included by the queue scripts that claim, refresh and
-- end claims (--#include queue_stop): cancelling a running job and the
-- maximum run time (docs/queue.md, "Cancelling a running job", "Maximum
-- run time"). Expects `call`, `tag` and `now`; includes what it uses.
--
-- Keys: T:cancel (id -> the token of the claim whose job was cancelled
-- while it ran), T:timeout (id -> the job's maximum run time in ms, from
-- the enqueue's ext item `t`), T:rundl (id -> the run deadline of the
-- running claim of a job that has a timeout: its claim time plus the
-- timeout, unix ms), T:limits field `tmo` (set once a job with a
-- timeout was enqueued: only then does a claim read T:timeout) and
-- T:limits field `cxl` (set while T:cancel holds a cancel).
--
-- The mark: a claim whose end was asked for (cancelled, or with a run
-- deadline) has the deadline of its claim value written with a leading
-- "0" ("<token>\0<attempt>\0" .. "0<deadline>"). It is still a number,
-- which every reader of the claims reads as before; the scripts that read
-- the claim anyway (refresh, complete, fail, release, recover) read
-- T:cancel and T:rundl only for the claims that have it, so that a claim
-- of a queue that never cancels a running job nor has timeouts costs no
-- command more. Completions and releases look for the mark only while
-- T:limits has `tmo` or `cxl` (limits_marked, lib/queue_freed.lua: the
-- read of T:limits they make anyway): a mark is written only by a claim
-- of a job with a timeout (after its enqueue set `tmo`) or by a cancel
-- (which sets `cxl`, deleted with the last entry of T:cancel).
--#include queue_int
--#include queue_rec
--#include queue_trim
--#include queue_flow
--#include queue_freed
--#include queue_errs
local lbyte = string.byte
-- A claim with a run deadline lasts at most this long (ms) past it: a
-- finish after the run deadline is turned into the timeout's failure, and
-- the handler, told at the run deadline by its worker's clock, has this
-- long to finish before recovery fails the job without it.
local STOP_RUN_GRACE = 1000

-- The position of the separator before the deadline of claim value v when
-- the claim has the mark, else nil.
local function stop_marked(v)
  local p = find(v, '\0', 1, true)
  local q = p and find(v, '\0', p + 1, true)
  if q and lbyte(v, q + 1) == 48 then return q end
  return nil
end

-- The claim value v with its deadline made `dl` (unix ms), with the mark.
local function stop_with_deadline(v, dl)
  local p = find(v, '\0', 1, true)
  local q = find(v, '\0', p + 1, true)
  local r = find(v, '\0', q + 1, true)
  return sub(v, 1, q) .. '0' .. dec(dl) .. (r and sub(v, r) or '')
end

-- The deadline of claim value v (a number), as the claim holds it.
local function stop_deadline(v)
  local p = find(v, '\0', 1, true)
  local q = find(v, '\0', p + 1, true)
  local r = find(v, '\0', q + 1, true)
  return tonumber(sub(v, q + 1, r and r - 1 or -1))
end

-- The attempt of claim value v.
local function stop_attempt(v)
  local p = find(v, '\0', 1, true)
  local q = find(v, '\0', p + 1, true)
  return tonumber(sub(v, p + 1, q - 1)) or 0
end

-- What ended a marked claim's run: 'c' when its job was cancelled while
-- it held it (`c`, the T:cancel value, is its token), 't' when its run
-- deadline (`r`, the T:rundl value) has passed, else nil.
local function stop_why(v, c, r)
  if c and sub(v, 1, #c + 1) == c .. '\0' then return 'c' end
  r = r and tonumber(r)
  if r and now >= r then return 't' end
  return nil
end

-- The error of a job that ran past its maximum run time.
local function stop_timeout_error(id)
  local t = call('HGET', tag .. ':timeout', id)
  return 'timed out after ' .. (t or '?') .. ' ms'
end

-- The backoff before attempt `attempt` + 1 of a job whose options say
-- `backoff` ("<kind>:<base>:<max>:<jitter>"): base * 2^(attempt - 1) for
-- 'exp' (at most max), base for 'fixed', minus a jitter of up to jitter
-- percent chosen by rnd; at least 1 ms. The same formula as
-- fleet__backoff_delay() in C. Returns nil for a backoff fleet cannot
-- read.
local function backoff_delay(backoff, attempt, rnd)
  local kind, base, cap, jitter = string.match(backoff,
                                               '^(%a+):(%d+):(%d+):(%d+)$')
  if (kind ~= 'fixed' and kind ~= 'exp') or #base > 18 or #cap > 18 or
      #jitter > 18 then
    return nil
  end
  local delay = tonumber(base)
  if delay < 1 then delay = 1 end
  cap = tonumber(cap)
  if kind == 'fixed' or cap < delay then cap = delay end
  local doublings = kind == 'exp' and attempt - 1 or 0
  while doublings > 0 and delay < cap do
    delay = delay * 2
    doublings = doublings - 1
  end
  if delay > cap then delay = cap end
  jitter = tonumber(jitter)
  if jitter > 100 then jitter = 100 end
  jitter = math.floor(delay * jitter / 100)
  if jitter > 0 then delay = delay - rnd % (jitter + 1) end
  if delay < 1 then delay = 1 end
  return delay
end

-- Ends the claims of ids (their values vals), still held and marked, whose
-- run ended (why[i]: 'c' cancelled, 't' past the run deadline), and
-- forgets the marks of the others (whose claims the caller ends as it
-- would any). A cancelled job is dead with the reason "cancelled" and its
-- unique key goes; a job past its run deadline fails with the error
-- "timed out after <ms> ms": retried after its backoff, or dead past
-- max_attempts. Neither keeps the claim's token in its info, so that the
-- former holder's later calls are stale. Kept dead jobs are trimmed to
-- keep, keep_s when keep is given. Returns the jobs made dead.
-- Every record is read before anything is written; a job whose record or
-- options fleet cannot read is left to its claim's expiry (recovery moves
-- it aside).
local function stop_end(ids, vals, why, keep, keep_s)
  local ended, evals, whys = {}, {}, {}
  for x, id in ipairs(ids) do
    if why[x] then
      ended[#ended + 1] = id
      evals[#evals + 1] = vals[x]
      whys[#ended] = why[x]
    end
  end
  local recs = recs_get(tag, ended)
  local o = #ended > 0 and call('HMGET', tag .. ':opts', unpack(ended))
  if call('HDEL', tag .. ':cancel', unpack(ids)) > 0 and
      call('EXISTS', tag .. ':cancel') == 0 then
    call('HDEL', tag .. ':limits', 'cxl')
  end
  call('HDEL', tag .. ':rundl', unpack(ids))
  if #ended == 0 then return 0 end
  local recw, info, dead, gone, retry, gvals = {}, {}, {}, {}, {}, {}
  local evs = {} -- the events of the ends (lib/queue_life.lua)
  local now_s = dec(now)
  local first
  for x, id in ipairs(ended) do
    local v = evals[x]
    local _, max, i = false, nil, nil
    if recs[x] then _, max, i = rec_split(recs[x]) end
    local p, backoff, unique = opts_split(o[x])
    local w = whys[x]
    if i and p then
      local attempt = stop_attempt(v)
      gone[#gone + 1] = id
      gvals[#gone] = v
      recw[#recw + 1] = id
      recw[#recw + 1] = dec(attempt) .. sub(recs[x], i)
      local delay = w == 't' and attempt < max and
                        backoff_delay(backoff, attempt, now)
      info[#info + 1] = id
      if w == 'c' then
        info[#info + 1] = now_s .. '\0\0dead\0cancelled'
        dead[#dead + 1] = id
        if unique then
          local ukey = tag .. ':unique:' .. unique
          if call('GET', ukey) == id then call('DEL', ukey) end
        end
        evs[#evs + 1] = {'cancelled', id, 0, ''}
      elseif delay then
        info[#info + 1] = '\0\0\0' .. stop_timeout_error(id)
        evs[#evs + 1] = {'failed', id, 1, stop_timeout_error(id)}
        retry[#retry + 1] = now + delay
        retry[#retry + 1] = id
        if not first or now + delay < first then first = now + delay end
      else
        info[#info + 1] = now_s .. '\0\0dead\0' .. stop_timeout_error(id)
        evs[#evs + 1] = {'failed', id, 0, stop_timeout_error(id)}
        evs[#evs + 1] = {'dead', id, 0, stop_timeout_error(id)}
        dead[#dead + 1] = id
      end
      opts_group(id, o[x], claim_group(v))
      errs_add(id, attempt, now,
               w == 'c' and 'cancelled' or stop_timeout_error(id))
    end
  end
  if #gone == 0 then return 0 end
  call('HDEL', tag .. ':claims', unpack(gone))
  recs_set(tag, recw)
  call('HSET', tag .. ':info', unpack(info))
  if #retry > 0 then
    local delayed = tag .. ':delayed'
    local f = call('ZRANGE', delayed, 0, 0, 'WITHSCORES')
    call('ZADD', delayed, unpack(retry))
    if not f[2] or first < tonumber(f[2]) then
      publish_wake(tag .. ':jobs:wake', 'wake')
    end
  end
  if #dead > 0 then
    call('RPUSH', tag .. ':dead', unpack(dead))
    call('HINCRBY', tag .. ':stats', 'dead', #dead)
    if keep then trim(tag .. ':dead', tag .. ':info', keep, keep_s) end
  end
  local fl = flow_ended(gvals)
  -- Jobs that ended for good: their flows' parents, and the unique keys
  -- held until they end (lib/queue_deps.lua, lib/queue_unique.lua).
  if #dead > 0 and fl.deps then deps_ended(dead, 'd') end
  if #dead > 0 and fl.uniq then unique_ended(tag, dead) end
  ev_publish(evs)
  return #dead
end

-- Of the claims ids[i] (values vals[i], nil for none) a script holds and
-- will end, the marked ones: ends those whose run ended (stop_end) and
-- forgets the marks of the others, and with `finish` (a completion: the
-- job will not run again) their timeouts. Returns a table id -> 3
-- (ended as cancelled) or 4 (failed: timed out) of those it ended, which
-- the caller leaves alone, and the number of jobs made dead; or nil when
-- none was marked. One HMGET of each
-- of T:cancel and T:rundl, only when a claim is marked.
local function stop_claims(ids, vals, finish, keep, keep_s)
  local mids, mvals, seen = {}, {}, {}
  for x, id in ipairs(ids) do
    local v = vals[x]
    if v and not seen[id] and stop_marked(v) then
      seen[id] = true
      mids[#mids + 1] = id
      mvals[#mvals + 1] = v
    end
  end
  if #mids == 0 then return nil end
  local c = call('HMGET', tag .. ':cancel', unpack(mids))
  local r = call('HMGET', tag .. ':rundl', unpack(mids))
  local why, out, fin = {}, {}, {}
  for x, v in ipairs(mvals) do
    why[x] = stop_why(v, c[x], r[x])
    if why[x] then
      out[mids[x]] = why[x] == 'c' and 3 or 4
    elseif finish then
      fin[#fin + 1] = mids[x]
    end
  end
  if #fin > 0 then call('HDEL', tag .. ':timeout', unpack(fin)) end
  return out, stop_end(mids, mvals, why, keep, keep_s)
end

-- stop_claims() of the claims a call names as id, token pairs from
-- ARGV[a] (`ids`, their ids), whose values `held` holds: those held with
-- their token. Only while claims may carry the mark (limits_marked, no
-- command of its own); then per claim, one find and one byte when it has
-- none.
local function stop_calls(ids, held, a, finish, keep, keep_s)
  if not limits_marked() then return nil end
  local vals
  for i = 1, #ids do
    local v = held[i]
    local tok = v and ARGV[a + 2 * i - 1]
    local q = tok and find(v, '\0', #tok + 2, true)
    if q and lbyte(v, q + 1) == 48 and sub(v, 1, #tok + 1) == tok .. '\0' then
      vals = vals or {}
      vals[i] = v
    end
  end
  if not vals then return nil end
  return stop_claims(ids, vals, finish, keep, keep_s)
end

-- The heartbeat of marked claims: `w` holds the id, value pairs the
-- refresh would write (values with the deadline `dl`, the marked ones as
-- they are), and at[k] the index in `out` of the answer for the marked
-- pair k. A cancelled claim keeps its
-- deadline (the cancel's grace) and is answered 2, "cancel requested"; a
-- claim with a run deadline is moved no further than STOP_RUN_GRACE past
-- it. Returns the pairs to write.
local function stop_refresh(w, at, dl, out)
  local mids, mk = {}, {}
  for k = 2, #w, 2 do
    if stop_marked(w[k]) then
      mids[#mids + 1] = w[k - 1]
      mk[#mids] = k
    end
  end
  if #mids == 0 then return w end
  local c = call('HMGET', tag .. ':cancel', unpack(mids))
  local r = call('HMGET', tag .. ':rundl', unpack(mids))
  local skip = {}
  for x = 1, #mids do
    local k = mk[x]
    local v = w[k]
    if c[x] and sub(v, 1, #c[x] + 1) == c[x] .. '\0' then
      skip[k] = true
      out[at[k / 2]] = 2
    else
      local d = r[x] and tonumber(r[x]) + STOP_RUN_GRACE or dl
      if d > dl then d = dl end
      w[k] = stop_with_deadline(v, d)
    end
  end
  local kept = {}
  for k = 2, #w, 2 do
    if not skip[k] then
      kept[#kept + 1] = w[k - 1]
      kept[#kept + 1] = w[k]
    end
  end
  return kept
end

-- The claim of ids (whose attempts att[i] are set for the jobs claimed):
-- the run deadlines of those with a timeout (T:timeout), written to
-- T:rundl. Returns a table index -> run deadline, and `first` the
-- earliest claim deadline they make, or nil when none has one. Called
-- only when T:limits has `tmo`.
local function stop_claimed(ids, att)
  local t = call('HMGET', tag .. ':timeout', unpack(ids))
  local out, w = nil, {}
  for i = 1, #ids do
    local ms = att[i] and tonumber(t[i])
    if ms then
      local g = now + ms + STOP_RUN_GRACE
      out = out or {first = g}
      out[i] = now + ms
      if g < out.first then out.first = g end
      w[#w + 1] = ids[i]
      w[#w + 1] = dec(now + ms)
    end
  end
  if out then call('HSET', tag .. ':rundl', unpack(w)) end
  return out
end

-- The claim value v of a job whose run deadline is `rundl`, and the group
-- element of its claim's reply: the claim's deadline no later than
-- STOP_RUN_GRACE past the run deadline, with the mark; the group `g`, then
-- a NUL and the run deadline (a group never holds a NUL), which the
-- client reads.
local function stop_claim(v, rundl, g)
  local d = stop_deadline(v)
  if rundl + STOP_RUN_GRACE < d then d = rundl + STOP_RUN_GRACE end
  return stop_with_deadline(v, d), g .. '\0' .. dec(rundl)
end

-- The failure of the claim v of job `id`, held, with the error `err`:
-- returns nil when its job was cancelled (the claim is ended here, as
-- cancelled), else the error to record: the timeout's when the run
-- deadline passed, else `err`. Reads T:cancel and T:rundl only for a
-- marked claim.
local function stop_fail(id, v, err, keep, keep_s)
  if not stop_marked(v) then return err end
  local why = stop_why(v, call('HGET', tag .. ':cancel', id),
                       call('HGET', tag .. ':rundl', id))
  if why == 'c' then
    stop_end({id}, {v}, {why}, keep, keep_s)
    return nil
  end
  call('HDEL', tag .. ':rundl', id)
  if why == 't' then return stop_timeout_error(id) end
  return err
end

-- Asks the claim v of job `id` to stop (queue_cancel.lua): T:cancel gets
-- its token, its deadline is capped at now + grace and marked, and the
-- workers hear "cancel\0<id>\0<token>" on the wake channel. A claim
-- cancelled already keeps its deadline. Returns 2. A claim fleet cannot
-- read is refused (FLEET_EPROTO) with nothing written.
local function stop_cancel(id, v, grace)
  local p = find(v, '\0', 1, true)
  local q = p and find(v, '\0', p + 1, true)
  local r = q and find(v, '\0', q + 1, true)
  local d = q and tonumber(sub(v, q + 1, r and r - 1 or -1))
  if not d or p == 1 then
    return redis.error_reply('FLEET_EPROTO bad claim: ' .. id)
  end
  local tok = sub(v, 1, p - 1)
  if call('HGET', tag .. ':cancel', id) == tok then return 2 end
  call('HSET', tag .. ':cancel', id, tok)
  call('HSET', tag .. ':limits', 'cxl', '1')
  if now + grace < d then d = now + grace end
  call('HSET', tag .. ':claims', id, stop_with_deadline(v, d))
  local ra = tonumber(call('GET', tag .. ':recover_at'))
  if not ra or d < ra then call('SET', tag .. ':recover_at', dec(d)) end
  publish_wake(tag .. ':jobs:wake', 'cancel\0' .. id .. '\0' .. tok)
  return 2
end
