-- cron_list.lua -- reads the registry: every definition, or one.
-- KEYS[1]: the registry's tag (parts as in cron_define.lua, and
--   cron:last, hash key -> "<fire_ms>:<token>:<node>").
-- ARGV: key, or '' for every definition.
-- Returns: {revision, now_ms, then per definition: key, {field, value, ...}
--   (HGETALL of cron:def:<key>), the last-fired record or ''}. A key that is
--   not defined is absent from the reply.
--#include cron_int
local rev = tonumber(redis.call('GET', T .. ':cron:rev') or '0')
local out = {rev, now_ms()}
local keys
if ARGV[1] ~= '' then
  keys = {ARGV[1]}
else
  keys = redis.call('HGETALL', T .. ':cron:defs')
  local k = {}
  for i = 1, #keys, 2 do k[#k + 1] = keys[i] end
  keys = k
end
for _, key in ipairs(keys) do
  local h = redis.call('HGETALL', T .. ':cron:def:' .. key)
  if #h > 0 then
    out[#out + 1] = key
    out[#out + 1] = h
    out[#out + 1] = redis.call('HGET', T .. ':cron:last', key) or ''
  end
end
return out
