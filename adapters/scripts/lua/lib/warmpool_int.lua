-- warmpool_int.lua -- included by the warm pool's scripts (--#include
-- warmpool_int): the key names, the server clock (lib/time.lua), the primary's fence and
-- the moves every script shares (adapters/ops/warmpool.h has the schema).
--#include time
--#include wake
local T = KEYS[1]
-- The keys an acquire or a release may touch, named at every call (the
-- function library runs these lines per call: a name is a concat).
local IDLE, BOR, WHO = T .. ':wp:idle', T .. ':wp:bor', T .. ':wp:who'
-- T:wp:who holds the field "" with HASH_MARK (lib/hash_mark.lua; ids are
-- 1 to FLEET_WARMPOOL_ID_MAX bytes), so that every release's HMGET finds
-- a hash table: each write of a borrow carries it; the count of borrows
-- leaves it out.
--#include hash_mark
local DEAD, WAKE = T .. ':wp:dead', T .. ':wp:wake'
-- The target's copy in a string (the hash's field stays the reference),
-- so that a release reads it in the MGET of its owner lease.
local TGT = T .. ':wp:tgt'
-- The other keys, named by wp_keys() in the scripts and functions that
-- use them, so that an acquire or a release makes no name it does not use.
local META, EXP, MK, DMK, SEQ, MKT

local function wp_keys()
  if META then return end
  META, EXP, MK = T .. ':wp:meta', T .. ':wp:exp', T .. ':wp:mk'
  DMK, SEQ, MKT = T .. ':wp:dmk', T .. ':wp:seq', T .. ':wp:mkt'
end

-- A number as Redis takes it (integers only, no exponent).
local function fmt(n)
  return string.format('%d', n)
end

-- Whether the primary's lease (the leader's lock "<T>:lock", value
-- "<token>:<owner>", "*" in front while someone waits) holds this token and
-- owner now: the fence every write of the primary passes.
local function is_primary(token, owner)
  local v = redis.call('GET', T .. ':lock')
  if not v then
    return false
  end
  if string.byte(v, 1) == 42 then
    v = string.sub(v, 2)
  end
  return v == token .. ':' .. owner
end

local function target()
  wp_keys()
  return tonumber(redis.call('HGET', META, 'target') or '0') or 0
end

-- Writes the target `t` (a string) into the meta hash and its copy.
local function set_target(t)
  wp_keys()
  redis.call('HSET', META, 'target', t)
  redis.call('SET', TGT, t)
end

-- Idle entries that may still be handed out: more than `minrem` ms left.
local function live(now, minrem)
  return redis.call('ZCOUNT', IDLE, '(' .. fmt(now + minrem), '+inf')
end

-- Moves the entries of zset `z` whose score is at most `upto` (at most
-- `max` of them) to the destroy set, unclaimed. Returns how many moved.
local function to_dead(z, upto, max)
  local ids = redis.call('ZRANGEBYSCORE', z, '-inf', fmt(upto), 'LIMIT', 0, max)
  for _, id in ipairs(ids) do
    redis.call('ZREM', z, id)
    if z == BOR then
      redis.call('HDEL', WHO, id)
    elseif z == MK then
      redis.call('HDEL', MKT, id)
    end
    redis.call('ZADD', DEAD, 0, id)
  end
  return #ids
end

-- Puts `id` into the destroy set, claimed by the caller until `until`.
local function claim(id, until_ms)
  redis.call('ZADD', DEAD, fmt(until_ms), id)
end

-- An owner id's lease, T:wp:own:<owner>: the random nonce of the node
-- instance that holds the id while it is started. Returns 'mine' when
-- `nonce` holds it, 'free' when nobody does, 'other' when another live
-- instance does.
local function own_key(owner)
  return T .. ':wp:own:' .. owner
end

-- The state of an owner lease whose value (GET) is `v`.
local function own_state(v, nonce)
  if not v then
    return 'free'
  end
  return v == nonce and 'mine' or 'other'
end

local function owner_state(owner, nonce)
  return own_state(redis.call('GET', own_key(owner)), nonce)
end

-- The refusal of a write by an instance whose owner id another live
-- instance holds (`v`: the owner lease's value, read by the caller):
-- nothing is written.
local function owner_refuse(owner, nonce, v)
  if own_state(v, nonce) == 'other' then
    error({err = 'FLEET_ECONFLICT warm pool owner id "' .. owner ..
      '" is already in use by a live node'})
  end
end

local function owner_check(owner, nonce)
  owner_refuse(owner, nonce, redis.call('GET', own_key(owner)))
end

-- The borrower of a resource as T:wp:who records it: the owner id and the
-- nonce of the instance that borrowed it, so that only that instance
-- releases or renews it.
local function borrower(owner, nonce)
  return owner .. '/' .. nonce
end

-- A T:wp:who value: "<expiry ms>:<owner>/<nonce>", the resource's expiry
-- in front of its borrower, so that a release reads both at once.
local function who_value(exp, owner, nonce)
  return fmt(exp) .. ':' .. borrower(owner, nonce)
end

-- Reads a T:wp:who value: the expiry (a number) and the borrower. A value
-- of an older fleet, the borrower alone, gives the expiry kept in T:wp:exp.
local function who_parse(v, id)
  local exp, who = string.match(v, '^(%d+):(.*)$')
  if exp then
    return exp + 0, who
  end
  wp_keys()
  return tonumber(redis.call('HGET', EXP, id) or '0') or 0, v
end

-- A new resource id: the creator's owner id and a sequence number.
local function new_id(owner)
  wp_keys()
  return owner .. '-' .. fmt(redis.call('INCR', SEQ))
end
