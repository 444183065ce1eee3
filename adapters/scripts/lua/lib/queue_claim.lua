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
-- `now`, and queue_int, queue_rec and queue_pend included before it.
--
-- Flow control (docs/queue.md, "Flow control"; lib/queue_flow.lua has the
-- keys): a
-- hold, the queue's concurrency and rate limits cut the jobs a claim may
-- take; with groups, the claim takes from the sets of the rotation in
-- turn, each up to its weight and its group's limits. A claim held back
-- while jobs are pending says when to claim again (the reply's fifth
-- number: a time, or -1 for when a running job finishes). `ca`, when
-- given, is where the completions of queue_complete_claim.lua start in
-- ARGV: the claims they end count as free for the concurrency limit.
--
-- Jobs fleet cannot read (docs/queue.md, "Jobs fleet cannot read"): a
-- pending or due job without a record, or whose record or options fleet
-- cannot split, is moved aside (move_aside, lib/queue_rec.lua: dead, with
-- the reason) and the claim goes on, so that it never blocks the jobs
-- behind it; the reply ends with {id, reason, 0} for each, which the
-- client reports through the error callback. Redis keeps what a script
-- wrote before an error: every record is read and checked before
-- anything is written. A job moved aside that takes part in a flow
-- counts as dead for it (deps_aside, lib/queue_deps.lua).
--#include queue_deps

-- The claims a rate window holds at `now`: drops from window `key` (a
-- list of "<ms>:<n>", newest first) the entries older than `ms`, given
-- `count`, what it held. Returns what it holds now and the time of its
-- oldest entry left (nil: none).
local function window_trim(key, count, ms, now)
  local cut = now - ms
  while count > 0 do
    local tail = call('LRANGE', key, -8, -1)
    if #tail == 0 then return 0, nil end
    local drop = 0
    for x = #tail, 1, -1 do
      local t, k = string.match(tail[x], '^(%d+):(%d+)$')
      t = tonumber(t)
      if t and t > cut then
        if drop > 0 then call('LTRIM', key, 0, -drop - 1) end
        return count, t
      end
      drop = drop + 1
      count = count - (tonumber(k) or 0)
    end
    call('LTRIM', key, 0, -drop - 1)
    if count < 0 then count = 0 end
  end
  call('DEL', key)
  return 0, nil
end

-- Takes up to `take` jobs from the pending set of list l and zset z
-- (has_z: z exists): higher priorities, the default priority, lower
-- priorities. Returns their ids and whether the set is empty after.
local function pend_take(l, z, has_z, take)
  local hi, mid, lo = {}, {}, {}
  if has_z then
    hi = call('ZRANGEBYSCORE', z, '-inf', '(4398046511104000', 'LIMIT', '0',
              dec(take))
  end
  local empty = false
  if #hi < take then
    -- One more than taken: whether the list is left empty.
    mid = call('LRANGE', l, '0', dec(take - #hi))
    if #mid > take - #hi then
      mid[#mid] = nil
    elseif not has_z then
      empty = true
    end
  end
  if has_z and #hi + #mid < take then
    lo = call('ZRANGE', z, dec(#hi), dec(take - #mid - 1))
  end
  if #mid > 0 then call('LTRIM', l, dec(#mid), '-1') end
  local nz = #hi + #lo
  if nz > 0 then call('ZREMRANGEBYRANK', z, '0', dec(nz - 1)) end
  if has_z then empty = call('EXISTS', l, z) == 0 end
  local ids = hi
  for _, id in ipairs(mid) do ids[#ids + 1] = id end
  for _, id in ipairs(lo) do ids[#ids + 1] = id end
  return ids, empty
end

-- The keys of the pending sets of groups `win`, for one EXISTS: their
-- lists when `lists`, and their zsets where one may be (the set without a
-- group's; every group's when `zall`).
local function win_keys(win, lists, zall)
  local keys = {}
  for _, g in ipairs(win) do
    local l, z = pend_keys(g)
    if lists then keys[#keys + 1] = l end
    if zall or g == '' then keys[#keys + 1] = z end
  end
  return keys
end

-- The claim's turn of the rotation (lib/queue_flow.lua): takes up to n
-- jobs from the sets at the head of T:groups (nrot of them), each up to
-- its turn (its weight times T:limits gturn, 10 by default: each group
-- visited costs a command, so a turn of several jobs keeps a claim's cost
-- near one without groups) and its group's hold, concurrency and rate
-- limits (L: the limits' fields as claim() read them), and moves the sets it
-- visited to the tail (those it emptied go). What the rotation needs of
-- T:limits comes with the claim's one read of it: whether T:ghold may
-- hold a hold (ghold) and the turn a full claim cut (gleft, "<jobs
-- left>:<group>", the group at the head). Returns the ids, the jobs taken
-- per group, the window counts of the groups whose window it read,
-- `retry` made the earliest time a held group may claim again (-1: when a
-- running job finishes) if no job was taken, the sets left in the
-- rotation, and the last position in ids of each set's jobs with its
-- group ('': none) (runs, rgs: each job's claim carries its group).
local function claim_rotation(n, nrot, L, retry)
  local rot = tag .. ':groups'
  local gmax, gms, gconc = tonumber(L[3]), tonumber(L[4]), tonumber(L[6])
  local holds = L[13]
  -- (gn, the jobs taken per group, only for the groups' limits.)
  local ids, gn, gcount = nil, (gconc or gmax) and {}, {}
  -- The last position in ids of each set's jobs, and its group. (Sized
  -- for the sets a claim visits: a table grown an element at a time is
  -- rebuilt at each power of two, and a claim of groups makes several.)
  local runs, rgs = presized(8), presized(8)
  local held -- the earliest time a held group frees; -1 for a slot
  local slot -- a group waits for a slot
  local turn = tonumber(L[11]) or 10
  local gp, dturn = tag .. ':gp:', dec(turn)
  -- What is left of the turn that a claim cut, and its group.
  local lleft, lg
  if L[14] then lleft, lg = string.match(L[14], '^(%d+):(.*)$') end
  local cut_turn -- the turn this claim cuts, "<left>:<group>"
  local left_rot = nrot -- the sets in the rotation
  local nids = 0 -- #ids
  local drain -- the next window's length while sets are found empty
  while nids < n and nrot > 0 do
    -- The sets a claim of the jobs still wanted visits at most, if each
    -- gives a whole turn, and two more: the head's turn a claim cut, and
    -- a set found empty (a turn that took a group's last jobs cannot
    -- tell, and its next visit finds it empty), so that a claim seldom
    -- reads the rotation twice.
    local k = math.floor((n - nids - 1) / turn) + 3
    if k > n - nids + 1 then k = n - nids + 1 end
    local k0 = k -- (the window without drain)
    if drain and drain > k then k = drain end
    if k > nrot then k = nrot end
    local win = call('LRANGE', rot, '0', dec(k - 1))
    if #win == 0 then break end
    k = #win
    nrot = nrot - k
    -- After a visit found a set empty (the turn before took its last
    -- jobs, and the LPOP could not tell), the window is first asked
    -- whether any of its sets holds a job, with one EXISTS: sets left
    -- empty leave the rotation together, in windows twice as long each
    -- time, rather than a visit each (a backlog spread over many groups,
    -- a turn each, ends with all of them found empty).
    local dropped = false
    -- (A group's zset is looked for once T:limits gprio, L[10], is set.)
    if drain and call('EXISTS', unpack(win_keys(win, true, L[10]))) == 0 then
      call('LTRIM', rot, dec(k), '-1')
      call('HDEL', tag .. ':grot', unpack(win))
      left_rot = left_rot - k
      -- (At most 1024 sets a window: unpack's bound is far above.)
      drain, dropped = drain < 512 and drain * 2 or 1024, true
    elseif drain then
      -- Some hold jobs: the claim visits the usual window.
      drain = nil
      if k > k0 then
        for x = k0 + 1, k do win[x] = nil end
        nrot, k = nrot + k - k0, k0
      end
    end
    if not dropped then
      -- The zsets of groups are looked for only once a group had one.
      local anyz = L[10] and
                     call('EXISTS', unpack(win_keys(win, false, true))) > 0
      local W = L[9] and call('HMGET', tag .. ':gweight', unpack(win))
      local H = holds and call('HMGET', tag .. ':ghold', unpack(win))
      local R = gconc and call('HMGET', tag .. ':grun', unpack(win))
      local C = gmax and gms and call('HMGET', tag .. ':grn', unpack(win))
      -- The sets it emptied (nil: none; then those visited go back as
      -- they are in win).
      local gone
      local v = 0 -- the sets visited: those after stay at the head
      for x, g in ipairs(win) do
        if nids >= n then break end
        v = x
        -- A turn gives the group's weight times gturn (default 10); a turn
        -- a claim cut goes on at the next claim.
        local full = (W and tonumber(W[x]) or 1) * turn
        local left = full
        if g == lg then
          left = tonumber(lleft)
          lg = nil
          if left > full then left = full end
        end
        local take = left
        if take > n - nids then take = n - nids end
        local cut = take < left -- (by the claim's size)
        local wait
        if g ~= '' and (H or R or C) then
          local h = H and tonumber(H[x])
          if h and h > now then
            take, wait = 0, h
          elseif h then
            call('HDEL', tag .. ':ghold', g) -- (a hold that ended)
            if call('EXISTS', tag .. ':ghold') == 0 then
              call('HDEL', tag .. ':limits', 'ghold')
              holds = nil
            end
          end
          if R then
            local r = tonumber(R[x]) or 0
            if r >= gconc then
              take, wait = 0, wait or -1
            elseif gconc - r < take then
              take = gconc - r
            end
          end
          if C and take > 0 then
            local c, old = window_trim(tag .. ':grl:' .. g, tonumber(C[x]) or 0,
                                       gms, now)
            gcount[g] = c
            if c >= gmax then
              take, wait = 0, (old or now) + gms
            elseif gmax - c < take then
              take = gmax - c
            end
          end
        end
        local empty = false
        if take > 0 then
          local got
          if g == '' or anyz then
            local l, z = pend_keys(g)
            got, empty = pend_take(l, z, call('EXISTS', z) == 1, take)
          else
            -- A group's list alone (pend_keys: T:gp:<g>): one LPOP. Taking
            -- fewer than asked, it is empty; taking all, it may be, and its
            -- next turn finds it.
            got = call('LPOP', gp .. g, take == turn and dturn or dec(take)) or
                    {}
            empty = #got < take
          end
          local base, ng = nids, #got
          -- (A visit that found nothing: the sets after may be empty too.)
          if ng == 0 and empty then drain = 8 end
          if ng > 0 then
            -- (The first set's reply is the ids: no copy.)
            if ids then
              for j = 1, ng do ids[base + j] = got[j] end
            else
              ids = got
            end
            nids = base + ng
            runs[#runs + 1] = nids
            rgs[#runs] = g
          end
          if gn and g ~= '' then gn[g] = (gn[g] or 0) + ng end
          -- The claim is full in the middle of the turn: the set stays at
          -- the head with what is left of its turn.
          if cut and not wait and not empty and #got == take then
            cut_turn = dec(left - take) .. ':' .. g
            v = x - 1
            break
          end
        end
        if wait == -1 then
          slot = true
          held = held or -1
        elseif wait and (not held or held == -1 or wait < held) then
          held = wait
        end
        if empty then
          gone = gone or {}
          gone[#gone + 1] = x
        end
      end
      if v > 0 then
        call('LTRIM', rot, dec(v), '-1')
        if not gone then
          call('RPUSH', rot, unpack(win, 1, v))
        else
          local back, out, gi = {}, {}, 1
          for x = 1, v do
            if gone[gi] == x then
              out[gi] = win[x]
              gi = gi + 1
            else
              back[#back + 1] = win[x]
            end
          end
          if #back > 0 then call('RPUSH', rot, unpack(back)) end
          call('HDEL', tag .. ':grot', unpack(out))
          left_rot = left_rot - #out
        end
      end
    end
  end
  -- (One write of T:limits gleft: the turn cut now, or none.)
  if cut_turn then
    call('HSET', tag .. ':limits', 'gleft', cut_turn)
  elseif L[14] then
    call('HDEL', tag .. ':limits', 'gleft')
  end
  if nids == 0 and held and retry == 0 then retry = held end
  if slot then call('HSET', tag .. ':limits', 'slotwait', '1') end
  return ids or {}, gn, gcount, retry, left_rot, runs, rgs
end

local function claim(n, ttl, wid, dttl, ca)
  -- A paused queue (queue_admin_pause.lua) claims and promotes nothing, and
  -- tells that nothing is pending or delayed, so that workers go idle; the
  -- resume publishes a wake-up. It parks no worker.
  if call('EXISTS', tag .. ':paused') == 1 then
    if wid and wid ~= '' then call('HDEL', tag .. ':parked', wid) end
    return {now, now + ttl, -1, 0, 0, 0, 0, 2, ''}
  end
  local L = call('HMGET', tag .. ':limits', 'rate_max', 'rate_ms',
                 'grate_max', 'grate_ms', 'conc', 'gconc', 'hold', 'rl_n',
                 'weighted', 'gprio', 'gturn', 'tmo', 'ghold', 'gleft')
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
  local bad = {}
  local was_empty = true
  if #due > 0 then
    local o = call('HMGET', tag .. ':opts', unpack(due))
    local there = recs_get(tag, due)
    local prios, grps = {}, {}
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
        local _
        prios[i], why, _, grps[i] = opts_split(o[i])
        if not prios[i] then bad[#bad + 1] = {id, why, nil, false} end
      end
    end
    -- (Read before the first write: a pending list or zset of another
    -- type refuses the call here, with nothing written.)
    local chk = {}
    for i = 1, #due do
      local g = grps[i]
      if prios[i] and not chk[g] then
        chk[g] = true
        local l, z = pend_keys(g)
        call('LLEN', l)
        call('ZCARD', z)
      end
    end
    local seq = call('INCRBY', tag .. ':seq', dec(#due)) - #due
    -- By set: the jobs of each group go to its own (lib/queue_flow.lua).
    local sets, order = {}, {}
    for i, id in ipairs(due) do
      local p = prios[i]
      if p then
        local g = grps[i]
        local st = sets[g]
        if not st then
          st = {{}, {}}
          sets[g] = st
          order[#order + 1] = g
        end
        if p == 0 then
          st[1][#st[1] + 1] = id
        else
          st[2][#st[2] + 1] = (1000 - p) * PRIO_UNIT + seq + i
          st[2][#st[2] + 1] = id
        end
      end
    end
    call('ZREM', delayed, unpack(due))
    was_empty = false
    for _, g in ipairs(order) do
      if pend_add(g, sets[g][1], sets[g][2]) then was_empty = true end
    end
  end

  -- Flow control: what the claim may take, and when to claim again
  -- (retry: 0, none; -1, when a running job finishes; else a time).
  local retry = 0
  local hold = tonumber(L[7])
  if n > 0 and hold and hold > now then
    n, retry = 0, hold
  end
  local conc = tonumber(L[5])
  if n > 0 and conc then
    local h = call('HLEN', tag .. ':claims')
    local running = h > 0 and h - 1 or 0
    -- (Read only when the limit is near: most claims are far from it.)
    if ca and ca <= #ARGV - 2 and running + n > conc then
      -- The claims the completions of this call end are free.
      local cids = {}
      for i = ca, #ARGV - 1, 2 do cids[#cids + 1] = ARGV[i] end
      local held = call('HMGET', tag .. ':claims', unpack(cids))
      for i = 1, #cids do
        local v, tok = held[i], ARGV[ca + 2 * i - 1]
        if v and string.sub(v, 1, #tok) == tok and
            string.byte(v, #tok + 1) == 0 then
          running = running - 1
        end
      end
    end
    if running >= conc then
      n, retry = 0, -1
    elseif conc - running < n then
      n = conc - running
    end
  end
  local rmax, rms = tonumber(L[1]), tonumber(L[2])
  local rcount, roldest, rwas
  if n > 0 and rmax and rms then
    rwas = tonumber(L[8]) or 0
    rcount, roldest = window_trim(tag .. ':rl', rwas, rms, now)
    if rcount >= rmax then
      n, retry = 0, (roldest or now) + rms
    elseif rmax - rcount < n then
      n = rmax - rcount
    end
  end
  local rot = tag .. ':groups'
  local nrot = n > 0 and call('LLEN', rot) or 0

  local deadline = now + ttl
  local out -- the reply (see the header of queue_claim.lua)
  local got = 0 -- the jobs claimed
  local left -- pending jobs left, when known without asking
  local ids -- the jobs taken
  local gn, gcount -- jobs taken per group; window counts per group
  -- The last position in ids of each set's jobs, and its group (nil:
  -- none without groups).
  local runs, rgs
  -- What is known empty without asking again (below, `left`): the
  -- rotation, when its length was read as 0 or it emptied, and the zset
  -- of priorities, when it was found missing.
  local rot_empty, prio_empty = n > 0, false
  if nrot > 0 then
    ids, gn, gcount, retry, left, runs, rgs =
        claim_rotation(n, nrot, L, retry)
    -- (The rotation's sets left; none: the jobs without a group, below.)
    if left == 0 then left = nil else rot_empty = false end
  elseif n > 0 then
    -- Higher priorities (scores below 1000 * 2^42), then the default
    -- priority's list, then lower priorities: read now, removed once every
    -- record has been checked.
    -- (The zset is read only when it exists: most queues have none.)
    local hi, mid, lo = {}, {}, {}
    local has_prio = call('EXISTS', prio) == 1
    prio_empty = not has_prio
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
    ids = mid
    if nz > 0 then
      ids = hi
      for _, id in ipairs(mid) do ids[#ids + 1] = id end
      for _, id in ipairs(lo) do ids[#ids + 1] = id end
    end
    if #mid > 0 then call('LTRIM', pending, dec(#mid), '-1') end
    if nz > 0 then call('ZREMRANGEBYRANK', prio, '0', dec(nz - 1)) end
  end
  local nids = ids and #ids or 0
  -- (Sized for the usual stride, 2: presized, lib/queue_int.lua.)
  out = presized(9 + 2 * nids)
  out[1], out[2], out[3], out[4], out[5] = now, deadline, -1, 0, 0
  out[6], out[7], out[8], out[9] = 0, 0, 2, ''
  if nids > 0 then
    do
      -- Every record is checked (rec_read) before anything is written;
      -- the attempt the claim makes is kept as a string: "1" for a job
      -- never tried, which is the common case and needs no formatting.
      local recs = recs_get(tag, ids)
      local att = presized(nids)
      for i = 1, nids do
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
      -- Run deadlines, once a job with a timeout was enqueued
      -- (lib/queue_stop.lua).
      local R = L[12] and stop_claimed(ids, att)
      -- fence_next: lib/fence.lua, which the script includes.
      local token = fence_next(tag .. ':fence', nids) - 1
      -- The claimed jobs' tokens follow the reply's sixth number, one by
      -- one in the order of the jobs: none goes in the reply per job.
      out[6] = token
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
      local claims, o, c = presized(2 + 2 * nids), 9, 2
      claims[1], claims[2] = '', HASH_MARK
      -- A job's entry is its id and record, and its group element only
      -- when a job of the claim may have a run deadline (the eighth
      -- number, the stride: 2 or 3); else the groups of the rotation's
      -- runs of jobs go once per run, in the ninth element (ra: the jobs
      -- of each run moved aside, which it does not claim, once one is).
      local st = R and 3 or 2
      out[8] = st
      local byrun, ra = runs and not R, nil
      -- The group of each run of jobs (runs, rgs), and the claim value's
      -- group part, made once per run.
      local ri, rend, g, gt = 1, nids, '', ''
      if runs then
        rend, g = runs[1], rgs[1]
        gt = g ~= '' and '\0' .. g or ''
      end
      for i = 1, nids do
        local id = ids[i]
        if i > rend then
          ri = ri + 1
          rend, g = runs[ri], rgs[ri]
          gt = g ~= '' and '\0' .. g or ''
        end
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
                              DIGITS[d3 + 1] .. '\0' .. a .. tail .. gt
          else
            claims[c + 2] = dec(token) .. '\0' .. a .. tail .. gt
          end
          c = c + 2
          out[o + 1] = id
          out[o + 2] = recs[i]
          if st == 3 then
            out[o + 3] = g
            if R[i] then
              claims[c], out[o + 3] = stop_claim(claims[c], R[i], g)
            end
          end
          o = o + st
        else
          if byrun then
            ra = ra or {}
            ra[ri] = (ra[ri] or 0) + 1
          end
          -- Moved aside: it does not count against its group.
          if gn and g ~= '' then gn[g] = gn[g] - 1 end
        end
      end
      got = (c - 2) / 2
      if byrun then
        -- "<jobs>\0<group>" per run, joined by NULs (a group never holds
        -- one).
        local w, nw, from = presized(2 * #runs), 0, 0
        for x = 1, #runs do
          local k = runs[x] - from - (ra and ra[x] or 0)
          from = runs[x]
          if k > 0 then
            w[nw + 1], w[nw + 2] = dec(k), rgs[x]
            nw = nw + 2
          end
        end
        out[9] = table.concat(w, '\0')
      end
      if c > 2 then
        claims_put(tag, claims, R and R.first < deadline and R.first or
                       deadline)
      end
    end
  end
  if not left then
    left = rot_empty and 0 or call('LLEN', rot)
    if left == 0 then
      left = call('LLEN', pending) + (prio_empty and 0 or call('ZCARD', prio))
    end
  end
  out[4] = left
  out[7] = got
  -- What the claims take of the windows and the running counts. A
  -- window entry is stamped with the end of the ms the claim ran in (now
  -- + 1): TIME is finer than the ms, and a claim late in ms T and one
  -- early in ms T + rate_ms would be less than rate_ms apart.
  local stamp = dec(now + 1) .. ':'
  if rcount then
    if got > 0 then
      -- (The queue's window holds at most rate_max entries: left to the
      -- next claim's trim, it needs no expiry; a group's, below, one of
      -- many, expires with its last entry.)
      call('LPUSH', tag .. ':rl', stamp .. dec(got))
      rcount = rcount + got
      roldest = roldest or now + 1
    end
    if rcount ~= rwas then call('HSET', tag .. ':limits', 'rl_n', rcount) end
    if rcount >= rmax and left > 0 and retry == 0 then
      retry = roldest + rms
    end
  end
  -- (Groups' running counts and windows, kept under their limits only.)
  if gn and (tonumber(L[6]) or next(gcount)) then
    local grun = tonumber(L[6]) and tag .. ':grun'
    for g, k in pairs(gn) do
      if k > 0 then
        if grun then call('HINCRBY', grun, g, k) end
        if gcount[g] then
          local key = tag .. ':grl:' .. g
          call('LPUSH', key, stamp .. dec(k))
          call('PEXPIRE', key, dec(tonumber(L[4]) + 1))
          gcount[g] = gcount[g] + k
        end
      end
    end
    for g, c in pairs(gcount) do
      if c > 0 then
        call('HSET', tag .. ':grn', g, c)
      else
        call('HDEL', tag .. ':grn', g)
      end
    end
  end
  if left == 0 then retry = 0 end
  if retry == -1 then call('HSET', tag .. ':limits', 'slotwait', '1') end
  out[5] = retry
  if #bad > 0 then
    deps_aside(bad)
    for _, v in ipairs(move_aside(tag, now, bad)) do out[#out + 1] = v end
  end
  if wid and wid ~= '' then
    if left == 0 and got < n and retry == 0 then
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
