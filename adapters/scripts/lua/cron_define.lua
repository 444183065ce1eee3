-- cron_define.lua -- creates or updates a definition in the registry. The
-- definition's "from" time (no occurrence at or before it is fired or caught
-- up) is the creation time, and moves to now when the expression, the zone or
-- the target change, or when it is enabled again. The bounds: no occurrence
-- before start or after end fires, and none after max_fires fires (counted
-- by cron_fire in the occurrences' slot since the creation; the registry's
-- "fired" and "done" are cron_mark's hints). The target of a definition with
-- a fire limit cannot change (its count lives in the target's slot). The
-- target is a queue, a worker pool (its keyed job "<key>@<fire_ms>" is
-- dispatched by the node that claimed the occurrence), or neither (the fire
-- callback).
-- KEYS[1]: the registry's tag. Parts: cron:defs (hash key -> created ms),
--   cron:def:<key> (hash of the definition), cron:rev, cron:changed.
-- ARGV: key, mode ('create', 'update' or 'upsert'), expr, tz, payload,
--   queue ('' for a callback definition), catch_up ('skip', 'latest',
--   'all'), catch_up_max, catch_up_window_ms, metadata, enabled ('1'/'0'),
--   start_ms, end_ms (0: none), max_fires (0: no limit), pool ('' for none;
--   not with a queue).
-- Returns: {1 created or 0 updated, the new revision}. Errors:
--   FLEET_EEXIST (create of an existing key), FLEET_ENOTFOUND (update of a
--   missing one), FLEET_ECONFLICT (a new target for a definition with a fire
--   limit, before or after).
--#include cron_int
local key, mode = ARGV[1], ARGV[2]
local def = T .. ':cron:def:' .. key
local now = fmt('%d', now_ms())
local old = redis.call('HMGET', def, 'expr', 'tz', 'queue', 'enabled',
                       'created', 'from', 'max_fires', 'fired', 'pool')
local exists = old[5] ~= false and old[5] ~= nil
if exists and mode == 'create' then
  error({err = 'FLEET_EEXIST cron definition exists: ' .. key})
end
if not exists and mode == 'update' then
  error({err = 'FLEET_ENOTFOUND no cron definition: ' .. key})
end
local max = tonumber(ARGV[14])
local moved = exists and (old[3] ~= ARGV[6] or (old[9] or '') ~= ARGV[15])
if moved and (max > 0 or tonumber(old[7] or '0') > 0) then
  error({err = 'FLEET_ECONFLICT cron definition ' .. key ..
        ' has a fire limit: its target cannot change (remove it first)'})
end
local created, from = now, now
if exists then
  created = old[5]
  from = old[6] or now
  if old[1] ~= ARGV[3] or old[2] ~= ARGV[4] or moved or
     (old[4] ~= '1' and ARGV[11] == '1') then
    from = now
  end
end
redis.call('HSET', def, 'expr', ARGV[3], 'tz', ARGV[4], 'payload', ARGV[5],
           'queue', ARGV[6], 'catch_up', ARGV[7], 'catch_up_max', ARGV[8],
           'catch_up_window', ARGV[9], 'meta', ARGV[10], 'enabled', ARGV[11],
           'created', created, 'updated', now, 'from', from, 'start',
           ARGV[12], 'end', ARGV[13], 'max_fires', ARGV[14], 'pool', ARGV[15])
-- A raised (or removed) limit lets a finished definition fire again; should
-- the "fired" hint be behind, the next fire call answers "limit" and the
-- node marks it done again.
if exists and (max == 0 or tonumber(old[8] or '0') < max) then
  redis.call('HDEL', def, 'done')
end
redis.call('HSET', T .. ':cron:defs', key, created)
local rev = changed()
if exists then return {0, rev} end
return {1, rev}
