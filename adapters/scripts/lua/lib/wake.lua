-- wake.lua -- publish_wake(channel, message), included (--#include wake)
-- by every script that publishes a wake-up. The channel always carries
-- the object's tag, so on a Redis Cluster the message goes over sharded
-- pub/sub (SPUBLISH: it stays on the shard that owns the tag's slot, where
-- fleet subscribes with SSUBSCRIBE); elsewhere (one Redis, the memory
-- backend) it is a plain PUBLISH. The library's build sets wake_sharded
-- below in each copy of a script by rewriting the text of its line, which
-- must stay as it is (cmake/embed_lua.cmake, lib/README): false in the one
-- the Redis adapter and the memory backend run, true in the one the
-- cluster adapter runs, so no call asks. This file as it stands (a script
-- run by hand, or by another language) asks once per script run, when it
-- first publishes, with CLUSTER MYID, an error on one Redis. Returns the
-- number of clients that received the message (on a cluster: on that
-- shard).
local wake_sharded
local function publish_wake(channel, message)
  if wake_sharded == nil then
    wake_sharded = type(redis.pcall('CLUSTER', 'MYID')) == 'string'
  end
  return redis.call(wake_sharded and 'SPUBLISH' or 'PUBLISH', channel,
                    message)
end
