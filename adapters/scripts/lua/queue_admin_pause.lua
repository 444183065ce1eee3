-- queue_admin_pause.lua -- pauses or resumes a queue, or tells whether it is
-- paused. While "<tag>:paused" exists the claim scripts (lib/queue_claim.lua)
-- claim nothing and promote nothing, and answer pending_left 0 and no delayed
-- job; jobs can still be enqueued, cancelled and retried, and running claims
-- finish as usual. Resuming publishes on the wake channel, so that idle
-- workers claim at once. Pausing forgets the parked workers
-- (lib/queue_claim.lua), so that no enqueue delivers to them; their next
-- claims find the pause.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: paused, parked,
--   jobs:wake.
-- ARGV[1]: "pause", "resume" or "status".
-- Returns: {paused after the call (1 or 0), 1 if it changed, else 0}.
--#include wake
local call = redis.call
local key = KEYS[1] .. ':paused'
local was = call('EXISTS', key)
local what = ARGV[1]
if what == 'pause' then
  if was == 0 then call('SET', key, '1') end
  call('DEL', KEYS[1] .. ':parked')
  return {1, 1 - was}
elseif what == 'resume' then
  if was == 1 then
    call('DEL', key)
    publish_wake(KEYS[1] .. ':jobs:wake', 'wake')
  end
  return {0, was}
elseif what == 'status' then
  return {was, 0}
end
return redis.error_reply('FLEET_EINVAL unknown pause action ' .. tostring(what))
