-- queue_int.lua -- included by queue scripts (--#include queue_int): int(v)
-- reads an integer field of a record fleet wrote, and refuses anything
-- else with FLEET_EPROTO rather than computing with garbage; HASH_MARK,
-- dec(n) and claims_put() below.
--#include wake
local function int(v)
  local d = type(v) == 'string' and string.match(v, '^%-?(%d+)$')
  if not d or #d > 18 then
    error({err = 'FLEET_EPROTO job field is not an integer'})
  end
  return tonumber(v)
end

-- The hashes written per job (jobs, claims, done) hold, beside one field
-- per job, the field "" (an id fleet never gives) with this value: longer
-- than the 64 bytes of Redis's hash-max-listpack-value, it keeps the hash a
-- hash table, whose lookups cost the same at any size, where a listpack
-- (up to hash-max-listpack-entries fields) is scanned field by field: a
-- worker's 50 claims made that a sixth of a claim's and completion's
-- server time. The writes that add jobs to such a hash (enqueue, claim,
-- a kept completion) write it too; readers skip it (a lookup by id never
-- meets it).
local HASH_MARK =
  'fleet: this field keeps this hash a hash table (see docs/queue.md)'
-- A number given to redis.call() as a string: Redis 7.0 spells a Lua
-- number argument with "%.17g", a floating-point formatting that costs
-- several times an integer's, so the scripts' calls pass dec(n).
local function dec(n) return string.format('%d', n) end

-- Writes claims (`claims`: the mark, then id, value pairs) to T:claims of
-- the queue `tag`, and lowers T:recover_at to `deadline`, the earliest
-- deadline among them, when it is later: recovery reads T:claims only once
-- recover_at has passed.
local function claims_put(tag, claims, deadline)
  redis.call('HSET', tag .. ':claims', unpack(claims))
  local ra = redis.call('GET', tag .. ':recover_at')
  if not ra or deadline < tonumber(ra) then
    redis.call('SET', tag .. ':recover_at', dec(deadline))
  end
end
