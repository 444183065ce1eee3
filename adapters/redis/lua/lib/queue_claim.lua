-- queue_claim.lua -- included by queue scripts (--#include queue_claim):
-- claim(n, ttl) moves due delayed jobs to pending, then claims up to n
-- pending jobs (highest priority first, oldest first within a priority)
-- with a claim_ttl of `ttl` ms, and returns the reply of queue_claim.lua.
-- Each claim gets a new fencing token and the deadline now + ttl, both in
-- the claims hash (id -> "<token>\0<attempt>\0<deadline_ms>"); recover_at
-- keeps a lower bound of the earliest deadline. Expects `call`, `tag`,
-- `now`, and queue_int and queue_rec included before it.
--
-- Redis keeps what a script wrote before an error: every record is read
-- and checked before anything is written, so that one fleet cannot read
-- stays where it is and the call answers FLEET_EPROTO; an error can only
-- come before claim() writes anything. An id whose record is gone is only
-- a stale reference, dropped.
local function claim(n, ttl)
  -- A paused queue (queue_admin_pause.lua) claims and promotes nothing, and
  -- tells that nothing is pending or delayed, so that workers go idle; the
  -- resume publishes a wake-up.
  if call('EXISTS', tag .. ':paused') == 1 then
    return {now, now + ttl, -1, 0}
  end
  local jobs = tag .. ':jobs'
  local pending = tag .. ':pending'
  local prio = tag .. ':pending:prio'
  local delayed = tag .. ':delayed'
  local due = call('ZRANGEBYSCORE', delayed, '-inf', now, 'LIMIT', 0, 1000)
  local list, zp = {}, {}
  local was_empty = true
  if #due > 0 then
    local o = call('HMGET', tag .. ':opts', unpack(due))
    local there = call('HMGET', jobs, unpack(due))
    local prios = {}
    for i, id in ipairs(due) do
      if there[i] then prios[i] = opts_read(o[i], id) end
    end
    local seq = call('INCRBY', tag .. ':seq', #due) - #due
    for i, id in ipairs(due) do
      local p = prios[i]
      if p == 0 then
        list[#list + 1] = id
      elseif p then
        zp[#zp + 1] = (1000 - p) * PRIO_UNIT + seq + i
        zp[#zp + 1] = id
      end
    end
    was_empty = call('LLEN', pending) == 0 and call('ZCARD', prio) == 0
    call('ZREM', delayed, unpack(due))
    if #list > 0 then call('RPUSH', pending, unpack(list)) end
    if #zp > 0 then call('ZADD', prio, unpack(zp)) end
  end

  local deadline = now + ttl
  local out = {now, deadline, -1, 0}
  if n > 0 then
    -- Higher priorities (scores below 1000 * 2^42), then the default
    -- priority's list, then lower priorities: read now, removed once every
    -- record has been checked.
    local hi = call('ZRANGEBYSCORE', prio, '-inf', '(4398046511104000',
                    'LIMIT', 0, n)
    local mid, lo = {}, {}
    if #hi < n then mid = call('LRANGE', pending, 0, n - #hi - 1) end
    if #hi + #mid < n then
      lo = call('ZRANGE', prio, #hi, n - #mid - 1)
    end
    local nz = #hi + #lo
    local ids = hi
    for _, id in ipairs(mid) do ids[#ids + 1] = id end
    for _, id in ipairs(lo) do ids[#ids + 1] = id end
    if #ids > 0 then
      local recs = call('HMGET', jobs, unpack(ids))
      local parsed = {}
      for i, id in ipairs(ids) do
        local rec = recs[i]
        if rec then
          local attempts, max, _, _, k, l = rec_read(rec, id)
          parsed[i] = {attempts + 1, max, k, l}
        end
      end
      if #mid > 0 then call('LTRIM', pending, #mid, -1) end
      if nz > 0 then call('ZREMRANGEBYRANK', prio, 0, nz - 1) end
      local token = call('INCRBY', tag .. ':fence', #ids) - #ids
      local tail = '\0' .. string.format('%d', deadline)
      local claims, o, c = {}, 4, 0
      for i, id in ipairs(ids) do
        local p = parsed[i]
        if p then
          token = token + 1
          local rec, k, l = recs[i], p[3], p[4]
          claims[c + 1] = id
          claims[c + 2] = token .. '\0' .. p[1] .. tail
          c = c + 2
          out[o + 1] = id
          out[o + 2] = sub(rec, k + 1, l - 1)
          out[o + 3] = sub(rec, l + 1)
          out[o + 4] = p[1]
          out[o + 5] = p[2]
          out[o + 6] = token
          o = o + 6
        end
      end
      if c > 0 then
        call('HSET', tag .. ':claims', unpack(claims))
        local ra = call('GET', tag .. ':recover_at')
        if not ra or deadline < tonumber(ra) then
          call('SET', tag .. ':recover_at', deadline)
        end
      end
    end
  end
  local left = call('LLEN', pending) + call('ZCARD', prio)
  out[4] = left
  local first = call('ZRANGE', delayed, 0, 0, 'WITHSCORES')
  if first[2] then out[3] = tonumber(first[2]) end
  if #due > 0 and was_empty and left > 0 then
    call('PUBLISH', tag .. ':jobs:wake', 'wake')
  end
  return out
end
