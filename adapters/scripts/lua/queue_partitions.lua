-- queue_partitions.lua -- records or reads the partition count of a queue
-- (docs/queue.md, "Partitioned queues"). A queue of P partitions is P
-- one-slot queues: partition 0 is the queue itself, partition i (1 to
-- P - 1) the queue named "<queue>~<i>"; the count is recorded once, in
-- "<tag>:partitions" of partition 0, and never changes: recording another
-- count is refused. A queue with no record has one partition. The mode
-- "drop" deletes the record, whatever it holds: fleet_queue_remove() of
-- a partitioned queue, once every partition is removed.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: partitions.
-- ARGV[1]: the count to record, 1 to 256, 0 to only read it, or "drop".
-- Returns: the recorded count (1 when none is recorded and ARGV[1] is 0);
--   with "drop", 1 when a record was deleted, else 0. Errors
--   FLEET_EINVAL (a count out of range), FLEET_ECONFLICT (another count
--   is recorded: "queue has <n> partitions").
local key = KEYS[1] .. ':partitions'
local want = ARGV[1]
if want == 'drop' then return redis.call('DEL', key) end
if not string.find(want or '', '^%d%d?%d?$') or tonumber(want) > 256 then
  return redis.error_reply('FLEET_EINVAL partitions must be 0 to 256')
end
local cur = redis.call('GET', key)
if cur and not string.find(cur, '^[1-9]%d?%d?$') then
  return redis.error_reply('FLEET_EPROTO partition count is not a number')
end
if want == '0' then return tonumber(cur or '1') end
if cur then
  if cur ~= want then
    return redis.error_reply('FLEET_ECONFLICT queue has ' .. cur ..
                               ' partitions')
  end
  return tonumber(cur)
end
redis.call('SET', key, want)
return tonumber(want)
