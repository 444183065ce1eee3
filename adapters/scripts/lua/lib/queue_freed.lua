-- queue_freed.lua -- included by the scripts that end claims (complete,
-- fail, release, recover; --#include queue_freed): claim_group(v) and
-- flow_ended(vals), what flow control does when claims end
-- (lib/queue_flow.lua). Expects `call`, `tag` and publish_wake
-- (lib/wake.lua, through queue_int). Includes queue_deps, the flows'
-- deps_ended(), gated on what flow_ended() returns, and queue_life
-- (results, progress and events).
--#include queue_deps
--#include queue_life

-- The group of a claim value "<token>\0<attempt>\0<deadline>[\0<group>]",
-- '' for none.
local function claim_group(v)
  local p = string.find(v, '\0', 1, true)
  p = p and string.find(v, '\0', p + 1, true)
  p = p and string.find(v, '\0', p + 1, true)
  return p and string.sub(v, p + 1) or ''
end

-- The read of T:limits that ends claims: a group concurrency limit
-- (T:grun is kept only then), a claim waiting for a slot, flows, unique
-- keys held until their jobs end, for lib/queue_life.lua subscribed
-- events, per-job result retention and kept results of given ids, and
-- for lib/queue_stop.lua whether claims may carry the mark (a job with a
-- timeout was enqueued, tmo; a running job was cancelled, cxl).
local function limits_read()
  return call('HMGET', tag .. ':limits', 'gconc', 'slotwait', 'deps', 'uniq',
              'events', 'rttl', 'res', 'tmo', 'cxl')
end

-- The read limits_marked() made, for the next flow_ended() of the call,
-- which takes it (nil: none).
local lim_read

-- Whether claims of the queue may carry the mark of lib/queue_stop.lua:
-- only then is each claim ended looked at for it. The read is the one
-- flow_ended() would make: kept for it, so that it costs no command.
local function limits_marked()
  lim_read = lim_read or limits_read()
  return lim_read[8] or lim_read[9]
end

-- Claims of groups that ended (claim values `vals`, a list): counts them
-- down in T:grun while it is kept (a group concurrency limit), and wakes
-- the workers when a claim waits for a slot. Call it after the claims went.
-- Returns the flags of T:limits that ask more of the scripts that end
-- jobs, as fields of a table (each false or nil when unset): deps (the
-- queue takes part in flows: call deps_ended() for the jobs that ended for
-- good, lib/queue_deps.lua) and uniq (jobs hold unique keys until they
-- end: call unique_ended(), lib/queue_unique.lua).
local function flow_ended(vals)
  if #vals == 0 then return {} end
  -- One read of T:limits tells all (limits_read), made before when
  -- limits_marked() asked.
  local f = lim_read or limits_read()
  lim_read = nil
  life_limits(f[5], f[6])
  life.res = f[7] and true or false
  if f[1] and call('EXISTS', tag .. ':grun') == 1 then
    local by = {}
    for _, v in ipairs(vals) do
      local g = claim_group(v)
      if g ~= '' then by[g] = (by[g] or 0) + 1 end
    end
    for g, k in pairs(by) do
      if call('HINCRBY', tag .. ':grun', g, -k) <= 0 then
        call('HDEL', tag .. ':grun', g)
      end
    end
  end
  if f[2] then
    call('HDEL', tag .. ':limits', 'slotwait')
    publish_wake(tag .. ':jobs:wake', 'wake')
  end
  return {deps = f[3], uniq = f[4]}
end
