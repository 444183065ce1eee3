-- pool_int.lua -- included by pool scripts (--#include pool_int): the
-- server clock (lib/time.lua), event delivery to a node, the parsing of a job's owner
-- record, and the removal of dead nodes (adapters/ops/pool.h).
-- T is the pool being worked on; a script over several pools sets it.
--#include time
--#include wake
--#include fence
local T = KEYS[1]

-- The hashes written per job on the dispatch path (T:jobs, T:pay,
-- T:disp) hold the field "" with HASH_MARK (lib/hash_mark.lua; job keys
-- are 1 to 512 bytes): the dispatch's writes of T:pay and T:disp and the
-- start's write of T:jobs carry it; pool_jobs.lua leaves it out and the
-- count of the pool's jobs does not count it.
--#include hash_mark

-- T:life of the pools whose value a script read with other keys
-- (pool_read(): pool_dispatch, pool_started), by tag: false when unset.
local lives = {}

-- The event list of a node expires `life` ms (T:life, written by the
-- joins) after its oldest unread event was pushed (a dead node).
local function ev_expire(ev)
  local life = lives[T]
  if life == nil then
    life = redis.call('GET', T .. ':life')
  end
  redis.call('PEXPIRE', ev, life or '600000')
end

-- Reads T:life with the pool's keys `parts` (T .. part each) in one MGET,
-- so that the pushes of this script need no GET of their own. Returns the
-- values of `parts`, in order (false: no such key).
local function pool_read(parts)
  local keys = {T .. ':life'}
  for i, part in ipairs(parts) do
    keys[i + 1] = T .. part
  end
  local got = redis.call('MGET', unpack(keys))
  lives[T] = got[1]
  return {unpack(got, 2, #keys)}
end

-- The wake-up of a node whose event list was empty: the event itself when
-- the push was one start ('s') or one dispatch result ('r') whose key holds
-- no NUL byte and whose data is at most 1024 bytes, as "<kind>\0<token>\0
-- <worker>\0<from>\0<key>\0<data>": the node handles it from the message
-- at once, and reads the list as after any wake-up, where it finds the
-- event again and skips it (src/pool/pool_events.c, "Events in the
-- wake-up"); else the kind alone, as a wake-up only.
local function wake_msg(kind, key, worker, token, data, from)
  if (kind == 's' or kind == 'r') and type(data) == 'string' and
      #data <= 1024 and not string.find(key, '\0', 1, true) then
    return kind .. '\0' .. token .. '\0' .. worker .. '\0' .. from .. '\0' ..
             key .. '\0' .. data
  end
  return kind
end

-- Appends one event of six fields to the node's event list and, when the
-- list was empty, sets its expiry and wakes the node (wake_msg). A list
-- that held events already had its wake-up published when it became
-- non-empty, and the node reads until the list is empty (pool_events
-- takes every event up to its batch, and reads again after a full one),
-- so this event is read with those: the wake-up and the expiry would be
-- redundant. A wake-up missed by the node's subscription is covered, as
-- before, by the reads after the subscription becomes live, after each
-- join and each keep-alive.
local function push(node, kind, key, worker, token, data, from)
  local ev = T .. ':ev:' .. node
  if redis.call('RPUSH', ev, kind, key, worker, token, data, from) == 6 then
    ev_expire(ev)
    publish_wake(T .. ':wake:' .. node,
                 wake_msg(kind, key, worker, token, data, from))
  end
end

-- push() of several events at once: `fields` holds six per event, in
-- order (at most a few thousand, for unpack). One event alone wakes the
-- node as push() does; several wake it with the first one's kind.
local function push_many(node, fields)
  local ev = T .. ':ev:' .. node
  if redis.call('RPUSH', ev, unpack(fields)) == #fields then
    ev_expire(ev)
    publish_wake(T .. ':wake:' .. node,
                 #fields == 6 and wake_msg(unpack(fields)) or fields[1])
  end
end

-- Adds an event (push()'s six fields) for `node` to `evs` (node -> the
-- fields of its events, for push_many()), and a node's first to `order`.
local function ev_add(evs, order, node, kind, key, worker, token, data, from)
  local e = evs[node]
  if not e then
    e = {}
    evs[node] = e
    order[#order + 1] = node
  end
  local m = #e
  e[m + 1], e[m + 2], e[m + 3], e[m + 4], e[m + 5], e[m + 6] =
    kind, key, worker, token, data, from
end

-- A job's owner record "<token>:<state>:<worker>", split; nil when there
-- is no such job. A record fleet did not write is FLEET_EPROTO.
local function job(key)
  local v = redis.call('HGET', T .. ':jobs', key)
  if not v then
    return nil
  end
  local t, s, w = string.match(v, '^(%d+):(%a):(.*)$')
  if not t then
    error({err = 'FLEET_EPROTO pool job record is malformed'})
  end
  return t, s, w
end

-- The next fencing token. A missing fence (a new pool, or its data lost
-- to FLUSHDB) starts at the server's clock in ms, so that tokens keep
-- growing across a loss of data, as long as fewer than one assignment per
-- ms was made before it. After a failover (epoch > 0, lib/fence.lua) the
-- fence is raised to fence_base() + the clock at every grant: a promoted
-- replica that missed the last assignments still grants above them, and
-- above the clock-seeded tokens of the epochs before.
local function next_token()
  local f = T .. ':fence'
  if fence_epoch() > 0 then
    return fence_next(f, 1, fence_base() + now_ms())
  end
  -- INCR of a missing fence gives 1: seed it then (one command when the
  -- fence exists). A fence is never 0 otherwise: it starts at the clock.
  local v = redis.call('INCR', f)
  if v == 1 then
    v = now_ms() + 1
    redis.call('SET', f, string.format('%d', v))
  end
  return v
end

local function set_job(key, token, state, worker)
  redis.call('HSET', T .. ':jobs', key, token .. ':' .. state .. ':' .. worker)
end

-- Tells every live node that the membership or the jobs needing an owner
-- changed: each rebalances.
local function broadcast()
  local nodes = redis.call('ZRANGE', T .. ':nodes', 0, -1)
  for i = 1, #nodes do
    push(nodes[i], 'm', '', '', '', '', '')
  end
end

-- Removes the workers of `node` from the pool and the node itself; their
-- jobs lose their owner (state "o", orphaned) until a node rebalances,
-- except a job being stopped on request: it leaves the pool (its owner
-- is gone, so it is stopped), and a waiting dispatcher hears
-- FLEET_ECANCELED (-5).
local function drop_node(node)
  local nw = T .. ':nw:' .. node
  local workers = redis.call('SMEMBERS', nw)
  for i = 1, #workers do
    local w = workers[i]
    local wj = T .. ':wj:' .. w
    local keys = redis.call('SMEMBERS', wj)
    for j = 1, #keys do
      local key = keys[j]
      local t, s = job(key)
      if t and s == 'x' then
        local from = redis.call('HGET', T .. ':disp', key)
        if from and from ~= '' then
          push(from, 'r', key, w, t, '-5', '')
        end
        redis.call('HDEL', T .. ':jobs', key)
        redis.call('HDEL', T .. ':pay', key)
        redis.call('HDEL', T .. ':disp', key)
        redis.call('HDEL', T .. ':next', key)
        redis.call('HDEL', T .. ':rq', key)
      elseif t then
        set_job(key, t, 'o', '')
        redis.call('HDEL', T .. ':next', key)
      end
    end
    redis.call('DEL', wj)
    redis.call('ZREM', T .. ':workers', w)
    redis.call('HDEL', T .. ':wnode', w)
  end
  redis.call('DEL', nw)
  redis.call('ZREM', T .. ':nodes', node)
  redis.call('INCR', T .. ':rev')
end

-- Removes every node whose keep-alive lapsed by the server clock. Returns
-- how many.
local function reap(now)
  local dead = redis.call('ZRANGEBYSCORE', T .. ':nodes', '-inf', now)
  for i = 1, #dead do
    drop_node(dead[i])
    redis.call('DEL', T .. ':ev:' .. dead[i])
  end
  if #dead > 0 then
    broadcast()
  end
  return #dead
end

local function rev()
  return tonumber(redis.call('GET', T .. ':rev') or '0')
end

-- A node's identity lease, T:id:<node>: the random nonce of the instance
-- that holds the id, expiring with the node's worker TTL. Returns 'mine'
-- when `nonce` holds it, 'free' when nobody does, 'other' when another
-- live instance does. `v`: the lease's value when the caller read it
-- (false: not there), else nil.
local function id_state(node, nonce, v)
  if v == nil then
    v = redis.call('GET', T .. ':id:' .. node)
  end
  if not v then
    return 'free'
  end
  return v == nonce and 'mine' or 'other'
end

-- The refusal of a node whose id another live instance holds.
local function id_conflict(node)
  error({err = 'FLEET_ECONFLICT pool node id "' .. node ..
    '" is already in use by a live node'})
end

-- Takes the event of `kind` ('s' or 'r') and token `tok` from the head of
-- node's event list, as its read would, for a node that handled the event
-- from its wake-up message (src/pool/pool_events.c). Returns 1 when taken
-- (0: not at the head, a read took it) and 1 when events are left in the
-- list (0: none); or 0, -1 when another live instance holds the node's id
-- (nothing taken). `idv`: the value of T:id:<node> when the caller read
-- it (false: not there), else nil.
local function take_head(node, nonce, kind, tok, idv)
  if id_state(node, nonce, idv) == 'other' then return 0, -1 end
  -- The head event, and whether one follows it (a seventh field).
  local ev = T .. ':ev:' .. node
  -- (Numbers as strings: Redis 7.0 formats a number argument with
  -- snprintf "%.17g", which costs more than the command.)
  local head = redis.call('LRANGE', ev, '0', '6')
  if head[1] == kind and head[4] == tok then
    redis.call('LTRIM', ev, '6', '-1')
    return 1, #head > 6 and 1 or 0
  end
  return 0, #head > 0 and 1 or 0
end
