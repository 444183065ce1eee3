-- cron_claim.lua -- included, after cron_int, cron_occ and fence, by the
-- scripts that claim occurrences (--#include cron_claim): cron_fire.lua
-- (one definition, any target) and cron_fire_many.lua (many callback
-- definitions in one call).
--
-- cron_claim(c, out) settles the occurrences of one definition, by the
-- server clock c.now (an occurrence up to c.ahead ms after it is due: a
-- scheduler claims ahead, docs/cron.md; nil: 0), and appends a status and
-- a token per occurrence to `out` (the statuses of cron_fire.lua); it
-- returns the fires counted (0 without a limit). `c` holds: S (the definition's keys, cron_occ.lua),
-- node, keep (keep_count), age (keep_age_ms, 0: none), mintok, target
-- ('' none, 'p' a pool job, '1' a queue job: c.enqueue(t, now) adds it),
-- max (max_fires, 0: none), gen, start, stop (end, 0: none), and the
-- occurrences, oldest first: c.times[i] (fire ms, a string) and c.acts[i]
-- ('f' fire, 'm' log as missed, 't' fire a trigger: an occurrence that is
-- not one of the expression's, fired once whatever the latest fire, which
-- it leaves as it was, so that a scheduled occurrence before it still
-- fires); c.added, the one occurrence the caller has logged already with
-- its ZADD NX (due and not before start), or nil; c.now_s, the
-- decimal of c.now when the caller made it (else made here); c.occ, S:occ
-- when the caller made it (else made here).
--
-- An occurrence is logged (ZADD NX) before anything else is looked at, so
-- that a losing node pays one command per occurrence, the ZADD that finds
-- it logged; the winner takes it out again (ZREM) when it turns out not to
-- fire (at or below the floor, past the end, over the limit; rare) or when
-- its fencing token cannot be had. The latest fire and the trim floor are
-- the fields "top" and "floor" of S:ent, read in one HMGET for an
-- occurrence not logged yet and written with the entry of each fire, in
-- its HSET (a definition last fired by an older fleet has them in the
-- strings S:top and S:floor, read once, when S:ent has no "top"). The log
-- is trimmed to keep entries, none older than age, up to 1000 per call, in
-- batches: with a fire whose token is a multiple of ceil(keep / 2), before
-- its entry is written (whose HSET then carries the new floor), and after
-- a call that logs a missed occurrence; so the log holds about 1.5 x keep
-- entries at most and a fire pays half a trim of four or five commands.
local function cron_claim(c, out)
  local S = c.S
  local OCC, ENT = c.occ or S .. ':occ', S .. ':ent'
  local max, now = c.max, c.now
  local horizon = now + (c.ahead or 0)
  local floor, top, fired, counted
  -- top and floor as the decimals they were read as or set from (nil:
  -- formatted when written), so that a fire writes them back unconverted.
  local top_s, floor_s
  local function state()
    if floor then return end
    local v = redis.call('HMGET', ENT, 'top', 'floor')
    top, floor = (v[1] or '-1') + 0, (v[2] or '-1') + 0
    top_s, floor_s = v[1], v[2]
    if not v[1] then
      -- Nothing fired since an older fleet (or ever): its strings, and the
      -- higher floor of the two (a missed occurrence's trim writes the
      -- field alone).
      local w = redis.call('MGET', S .. ':top', S .. ':floor')
      top, top_s = tonumber(w[1] or '-1'), w[1]
      if tonumber(w[2] or '-1') > floor then
        floor, floor_s = tonumber(w[2]), w[2]
      end
    end
    fired = 0
    if max > 0 then
      local k = redis.call('GET', S .. ':fired')
      local g, n = string.match(k or '', '^(%d+):(%d+)$')
      if g == c.gen then fired = tonumber(n) end
    end
    counted = fired
  end
  -- Trims the oldest entries beyond the bounds (never `keep_t`, the entry
  -- about to be written); floor becomes the latest one trimmed, so that a
  -- trimmed occurrence is never fired again. Returns whether it moved.
  local function trim(keep_t)
    local old = redis.call('ZRANGE', OCC, 0, -(c.keep + 1))
    while #old > 1000 do old[#old] = nil end
    if c.age > 0 and #old < 1000 then
      local more = redis.call('ZRANGEBYSCORE', OCC, '-inf',
                              string.format('%d', now - c.age), 'LIMIT',
                              #old, 1000 - #old)
      for _, v in ipairs(more) do
        if v ~= keep_t then old[#old + 1] = v end
      end
    end
    if #old == 0 then return false end
    redis.call('ZREM', OCC, unpack(old))
    redis.call('HDEL', ENT, unpack(old))
    if tonumber(old[#old]) > floor then
      floor, floor_s = tonumber(old[#old]), old[#old]
      return true
    end
    return false
  end
  if max > 0 then state() end
  local missed = false
  local step = math.max(1, math.ceil(c.keep / 2))
  for i = 1, #c.times do
    local t, act = c.times[i], c.acts[i]
    local tn = t + 0
    if tn > horizon then
      out[#out + 1] = -1
      out[#out + 1] = 0
    elseif tn < c.start or
           (t ~= c.added and redis.call('ZADD', OCC, 'NX', t, t) == 0) then
      -- Before start, or logged already (the ZADD that logs it is the
      -- check).
      out[#out + 1] = 0
      out[#out + 1] = 0
    else
      state()
      local st
      if tn <= floor then
        st = 0
      elseif (c.stop > 0 and tn > c.stop) or
             (act ~= 'm' and max > 0 and fired >= max) then
        st = 3
      end
      if st then
        redis.call('ZREM', OCC, t)
        out[#out + 1] = st
        out[#out + 1] = 0
      elseif (act == 'f' and tn > top) or act == 't' then
        local ok, f = pcall(fence_next, S .. ':fence', 1, c.mintok)
        if not ok then
          redis.call('ZREM', OCC, t)
          error(f)
        end
        if f % step == 0 then trim(t) end
        if act == 'f' then top, top_s = tn, t end
        c.now_s = c.now_s or string.format('%d', now)
        -- Claimed ahead: handed out at its time, which the log shows.
        local e = entry_s(string.format('%d', f), c.node,
                          tn > now and t or c.now_s, '0',
                          c.target == 'p' and 'pending' or 'dispatched')
        redis.call('HSET', ENT, t, e, 'top', top_s or string.format('%d', top),
                   'floor', floor_s or string.format('%d', floor))
        if c.target == 'p' then redis.call('ZADD', S .. ':pend', now, t) end
        if c.target == '1' then c.enqueue(t, now) end
        fired = fired + 1
        out[#out + 1] = 1
        out[#out + 1] = f
      else
        redis.call('HSET', ENT, t, entry(0, c.node, now, now, 'missed'))
        missed = true
        out[#out + 1] = 2
        out[#out + 1] = 0
      end
    end
  end
  if max > 0 and fired ~= counted then
    redis.call('SET', S .. ':fired', c.gen .. ':' .. fired)
  end
  if missed and trim(nil) then
    redis.call('HSET', ENT, 'floor', string.format('%d', floor))
  end
  return fired or 0
end
