-- queue_enqueue.lua -- adds jobs to a queue: pending, or delayed until a
-- run-at time. Job ids and pending order come from one counter. A job with
-- the default options is one field of the jobs hash and one element of the
-- pending list; its other options go to the options hash. A job runs at
-- max(run_at_ms, now + delay_ms): delayed when that is in the future, else
-- pending. Onto an empty queue, the new jobs of priority 0 that are due go
-- first to the parked workers (parked, see queue_claim.lua), claimed for them
-- and published on their channels (docs/queue.md: delivery to idle workers).
-- Publishes on the wake channel when it adds jobs nobody took to an empty
-- pending set, or adds the earliest delayed job. A fenced op
-- (adapters/backend.h): its last ARGV is the failover epoch.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: recs:<c>, jobs, opts,
--   pending, pending:prio, delayed, seq, unique:<key>, uniq, jobs:wake,
--   parked, jobs:w:<worker>, claims, recover_at, fence, limits, groups,
--   gp:<g>, gz:<g>, rttl.
-- ARGV[1]: n, the number of jobs; then 12 per job: id ('' for a generated
--   one), type, payload, priority (-1000..1000), run_at_ms (0: none),
--   delay_ms, max_attempts, backoff ('fixed|exp:<base>:<max>:<jitter>'),
--   unique key ('' for none), unique_ttl_ms, group ('' for none: a group's
--   jobs wait in its own set, lib/queue_flow.lua), ext (the job's other
--   options: '' for none, else items "<key>=<value>" separated by "\n",
--   lib/queue_add.lua; "u=1": the unique key is held until the job ends,
--   unique_ttl_ms then 0 or a safety bound; "h=<headers>": the job's
--   headers, lib/queue_hdr.lua). Last: the failover epoch,
--   which the adapter appends (lib/fence.lua), for the claims of jobs
--   delivered to parked workers.
-- Returns: {status, id} per job, flattened: status 1 when added, 0 when the
--   id exists already or the unique key is held (id: the holder).
local call = redis.call
local tag = KEYS[1]
--#include queue_int
--#include fence
--#include queue_pend
--#include queue_add
--#include time
local now = now_ms()
return queue_add(KEYS[1], now, tonumber(ARGV[1]), ARGV, 2)
