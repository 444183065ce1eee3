-- queue_errs.lua -- included by queue scripts (--#include queue_errs):
-- each job's attempt history (docs/queue.md, "Attempt history"), kept in
-- T:errs (id -> the failed attempts of the job, oldest first), beside the
-- last error that T:info holds. Defines errs_add(id, attempt, t, err) and
-- errs_del(ids, n). Expects `call` and `tag` defined before its include
-- line.
--
-- A value is entries "<attempt>:<time_ms>:<len>:<error bytes>" one after
-- the other, oldest first: the length makes the error binary-safe (a NUL,
-- a newline or a ":" in it is data). It holds at most ERRS_KEEP entries
-- and ERRS_BYTES bytes: an entry past either bound drops the oldest ones;
-- an error is cut to ERRS_ERR_MAX bytes (T:info keeps the last one whole).
--
-- The history is written only where T:info gets a failed attempt (a
-- failure, a timeout, a cancel of a running job, an expired claim) and
-- deleted wherever T:info's entry is: an id has a history only while it
-- has an info, so that the scripts delete it only when their HDEL of
-- T:info deleted something, and a queue whose jobs never failed pays no
-- command for it.
local ERRS_KEEP, ERRS_BYTES, ERRS_ERR_MAX = 10, 8192, 1024

-- Adds the failure of attempt `attempt` of job `id` at `t` (unix ms) with
-- the error `err` to its history, dropping the oldest entries past the
-- bounds. A value fleet cannot read is started again. (With redis.pcall:
-- the history comes after the job's own writes, and a T:errs of another
-- type, which only a foreign write leaves, must not stop them half way.)
local function errs_add(id, attempt, t, err)
  local k = tag .. ':errs'
  local old = redis.pcall('HGET', k, id)
  if #err > ERRS_ERR_MAX then err = string.sub(err, 1, ERRS_ERR_MAX) end
  local e = string.format('%d:%d:%d:', attempt, t, #err) .. err
  -- The starts of the entries of the old value, all of it read.
  local starts, at = {}, 1
  if type(old) ~= 'string' then old = '' end
  while at <= #old do
    local _, q, n = string.find(old, '^%d+:%d+:(%d+):', at)
    local nx = q and #n <= 9 and q + 1 + tonumber(n)
    if not nx or nx > #old + 1 then
      starts, old = {}, ''
      break
    end
    starts[#starts + 1] = at
    at = nx
  end
  local first = 1
  while first <= #starts and (#starts - first + 2 > ERRS_KEEP or
        #old - starts[first] + 1 + #e > ERRS_BYTES) do
    first = first + 1
  end
  if first <= #starts then e = string.sub(old, starts[first]) .. e end
  redis.pcall('HSET', k, id, e)
end

-- Deletes the histories of `ids` (one HDEL), unless `n`, the number of
-- entries the caller's HDEL of T:info for the same ids deleted, is 0:
-- then none of them has a history.
local function errs_del(ids, n)
  if n == 0 or #ids == 0 then return end
  redis.pcall('HDEL', tag .. ':errs', unpack(ids))
end
