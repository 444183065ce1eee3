-- pool_jobs.lua -- every job of the pool with its owner record.
-- KEYS[1]: the pool's hash tag. Parts: jobs.
-- ARGV: none.
-- Returns: {key_1, "<token>:<state>:<worker>", key_2, ...}; the field ""
--   (the mark that keeps T:jobs a hash table, lib/pool_int.lua) is no
--   job and is left out.
local all = redis.call('HGETALL', KEYS[1] .. ':jobs')
for i = 1, #all, 2 do
  if all[i] == '' then
    -- (Moved from the end into its place: the order is the hash's own.)
    local n = #all
    all[i], all[i + 1] = all[n - 1], all[n]
    all[n], all[n - 1] = nil, nil
    break
  end
end
return all
