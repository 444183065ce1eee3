-- queue_claim.lua -- included by queue scripts (--#include queue_claim):
-- claim(n, ttl, wid, dttl) moves due delayed jobs to pending, then claims
-- up to n pending jobs (highest priority first, oldest first within a
-- priority) with a claim_ttl of `ttl` ms, and returns the reply of
-- queue_claim.lua.
--
-- Parking (docs/queue.md, "Delivery to idle workers"): a worker that
-- names itself (`wid`, not '') and asks for more jobs than are pending is
-- parked: the parked hash gets wid -> "<room>:<dttl>", room being the jobs
-- it asked for and did not get. The next enqueue onto an empty queue
-- (lib/queue_add.lua) claims its jobs for a parked worker, with the
-- deadline now + dttl, and publishes them on the worker's channel
-- "<tag>:jobs:w:<wid>" instead of waking every worker to claim them: one
-- call per job fewer at low rates. A claim that does not park its worker
-- (the jobs filled it, or some are left) removes its entry: the worker
-- has no room, or will claim again.
-- Each claim gets a new fencing token and the deadline now + ttl, both in
-- the claims hash (id -> "<token>\0<attempt>\0<deadline_ms>"); recover_at
-- keeps a lower bound of the earliest deadline. Expects `call`, `tag`,
-- `now`, and queue_int and queue_rec included before it.
--
-- Jobs fleet cannot read (docs/queue.md, "Jobs fleet cannot read"): a
-- pending or due job without a record, or whose record or options fleet
-- cannot split, is moved aside (move_aside, lib/queue_rec.lua: dead, with
-- the reason) and the claim goes on, so that it never blocks the jobs
-- behind it; the reply ends with {id, reason, 0} for each, which the
-- client reports through the error callback. Redis keeps what a script
-- wrote before an error: every record is read and checked before
-- anything is written.
local function claim(n, ttl, wid, dttl)
  -- A paused queue (queue_admin_pause.lua) claims and promotes nothing, and
  -- tells that nothing is pending or delayed, so that workers go idle; the
  -- resume publishes a wake-up. It parks no worker.
  if call('EXISTS', tag .. ':paused') == 1 then
    if wid and wid ~= '' then call('HDEL', tag .. ':parked', wid) end
    return {now, now + ttl, -1, 0}
  end
  local pending = tag .. ':pending'
  local prio = tag .. ':pending:prio'
  local delayed = tag .. ':delayed'
  -- The earliest delayed job first: the range of due ones only when one is.
  local first = call('ZRANGE', delayed, '0', '0', 'WITHSCORES')
  local due = {}
  if first[2] and tonumber(first[2]) <= now then
    due = call('ZRANGEBYSCORE', delayed, '-inf', dec(now), 'LIMIT', '0',
               '1000')
  end
  local list, zp, bad = {}, {}, {}
  local was_empty = true
  if #due > 0 then
    local o = call('HMGET', tag .. ':opts', unpack(due))
    local there = recs_get(tag, due)
    local prios = {}
    for i, id in ipairs(due) do
      local rec = there[i]
      local ok, why = rec, nil
      if rec then ok, why = rec_split(rec) end
      if not rec then
        local raw
        why, raw = rec_missing(tag, id)
        bad[#bad + 1] = {id, why, raw, true}
      elseif not ok then
        bad[#bad + 1] = {id, why, rec, true}
      else
        -- (A record fleet can read keeps its place; only the options go.)
        prios[i], why = opts_split(o[i])
        if not prios[i] then bad[#bad + 1] = {id, why, nil, false} end
      end
    end
    -- (Read before the first write: a pending list or zset of another
    -- type refuses the call here, with nothing written.)
    was_empty = call('LLEN', pending) == 0 and call('ZCARD', prio) == 0
    local seq = call('INCRBY', tag .. ':seq', dec(#due)) - #due
    for i, id in ipairs(due) do
      local p = prios[i]
      if p == 0 then
        list[#list + 1] = id
      elseif p then
        zp[#zp + 1] = (1000 - p) * PRIO_UNIT + seq + i
        zp[#zp + 1] = id
      end
    end
    call('ZREM', delayed, unpack(due))
    if #list > 0 then call('RPUSH', pending, unpack(list)) end
    if #zp > 0 then call('ZADD', prio, unpack(zp)) end
  end

  local deadline = now + ttl
  local out = {now, deadline, -1, 0}
  local left -- pending jobs left, when known without asking
  if n > 0 then
    -- Higher priorities (scores below 1000 * 2^42), then the default
    -- priority's list, then lower priorities: read now, removed once every
    -- record has been checked.
    -- (The zset is read only when it exists: most queues have none.)
    local hi, mid, lo = {}, {}, {}
    local has_prio = call('EXISTS', prio) == 1
    if has_prio then
      hi = call('ZRANGEBYSCORE', prio, '-inf', '(4398046511104000', 'LIMIT',
                '0', dec(n))
    end
    if #hi < n then mid = call('LRANGE', pending, '0', dec(n - #hi - 1)) end
    if has_prio and #hi + #mid < n then
      lo = call('ZRANGE', prio, dec(#hi), dec(n - #mid - 1))
    end
    -- The list gave fewer than asked and there is no zset: all taken.
    if not has_prio and #mid < n then left = 0 end
    local nz = #hi + #lo
    local ids = mid
    if nz > 0 then
      ids = hi
      for _, id in ipairs(mid) do ids[#ids + 1] = id end
      for _, id in ipairs(lo) do ids[#ids + 1] = id end
    end
    if #ids > 0 then
      -- Every record is checked (rec_read) before anything is written;
      -- the attempt the claim makes is kept as a string: "1" for a job
      -- never tried, which is the common case and needs no formatting.
      local recs = recs_get(tag, ids)
      local att = {}
      for i = 1, #ids do
        local rec = recs[i]
        if rec then
          -- (sep1, the first separator, is at 1: no attempts yet.)
          local attempts, why, sep1 = rec_split(rec)
          if attempts then
            att[i] = sep1 == 1 and '1' or dec(attempts + 1)
          else
            bad[#bad + 1] = {ids[i], why, rec, true}
          end
        else
          -- No record: a generated id's may be in T:jobs, where fleet
          -- before the chunks kept it (docs/queue.md, "Migration").
          local why, raw = rec_missing(tag, ids[i])
          bad[#bad + 1] = {ids[i], why, raw, true}
        end
      end
      if #mid > 0 then call('LTRIM', pending, dec(#mid), '-1') end
      if nz > 0 then call('ZREMRANGEBYRANK', prio, '0', dec(nz - 1)) end
      -- fence_next: lib/fence.lua, which the script includes.
      local token = fence_next(tag .. ':fence', #ids) - 1
      local tail = '\0' .. dec(deadline)
      -- The tokens' decimals without formatting a number per job: the
      -- digits above the last three once per thousand tokens, the last
      -- three digit by digit (tokens below 1000 are formatted as they are).
      local top = math.floor(token / 1000)
      local low = token - top * 1000
      local d1, d2, d3 = math.floor(low / 100), math.floor(low / 10) % 10,
                         low % 10
      local ts = dec(top)
      -- The mark goes with every write: see HASH_MARK (queue_int).
      local claims, o, c = {'', HASH_MARK}, 4, 2
      for i, id in ipairs(ids) do
        local a = att[i]
        if a then
          token = token + 1
          d3 = d3 + 1
          if d3 == 10 then
            d3, d2 = 0, d2 + 1
            if d2 == 10 then
              d2, d1 = 0, d1 + 1
              if d1 == 10 then
                d1, top = 0, top + 1
                ts = dec(top)
              end
            end
          end
          claims[c + 1] = id
          if top > 0 then
            claims[c + 2] = ts .. DIGITS[d1 + 1] .. DIGITS[d2 + 1] ..
                              DIGITS[d3 + 1] .. '\0' .. a .. tail
          else
            claims[c + 2] = dec(token) .. '\0' .. a .. tail
          end
          c = c + 2
          out[o + 1] = id
          out[o + 2] = recs[i]
          out[o + 3] = token
          o = o + 3
        end
      end
      if c > 2 then claims_put(tag, claims, deadline) end
    end
  end
  if not left then left = call('LLEN', pending) + call('ZCARD', prio) end
  out[4] = left
  local got = (#out - 4) / 3
  if #bad > 0 then
    for _, v in ipairs(move_aside(tag, now, bad)) do out[#out + 1] = v end
  end
  if wid and wid ~= '' then
    if left == 0 and got < n then
      call('HSET', tag .. ':parked', wid, dec(n - got) .. ':' .. dttl)
    else
      call('HDEL', tag .. ':parked', wid)
    end
  end
  if #due > 0 then first = call('ZRANGE', delayed, '0', '0', 'WITHSCORES') end
  if first[2] then out[3] = tonumber(first[2]) end
  if #due > 0 and was_empty and left > 0 then
    publish_wake(tag .. ':jobs:wake', 'wake')
  end
  return out
end
