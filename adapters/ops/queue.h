/* ops/queue.h -- what the queue's scripts share (the scripts
 * adapters/scripts/lua/queue_*.lua: each one's header states its KEYS,
 * ARGV and reply; the admin ops queue_admin_* serve the tools: the fleet
 * CLI and the dashboard).
 *
 * Every queue op takes one key, KEYS[1], the queue's hash tag
 * "{<prefix>:<queue>}"; each key it touches is that tag followed by a
 * suffix (docs/queue.md lists the schema), so one script touches one
 * cluster slot. Times are ms on the backend clock (TIME). Integers travel
 * as decimal strings. An id, a type and a token are strings; a token is
 * the decimal fencing token the claim returned.
 *
 * QUEUE_ENQUEUE (which claims jobs for parked workers), QUEUE_CLAIM and
 * QUEUE_COMPLETE_CLAIM are fenced ops (adapters/backend.h, "Fenced ops"); claim
 * tokens come from T:fence through lib/fence.lua, so that they never repeat or
 * go back across a failover.
 *
 * Per-claim result codes of the batch ops: 1 done, 2 that claim already
 * ended (completed, failed or released with this token), 0 stale (the job
 * is not held with this token: recovered, re-claimed, or never claimed),
 * -1 no such job.
 *
 * Job data that fleet did not write (a field that is not an integer, a
 * malformed backoff) gives the error FLEET_EPROTO; a key of the wrong type
 * gives WRONGTYPE, as Redis does; either way the script wrote nothing.
 * QUEUE_CLAIM and QUEUE_RECOVER do not refuse for one job they cannot
 * read: they move it to dead (docs/queue.md, "Jobs fleet cannot read")
 * and end their reply with id, reason, 0 for it (after a claim's jobs,
 * whose entries are id, record[, group], their tokens counted from the
 * reply's token0: adapters/scripts/lua/queue_claim.lua).
 *
 * Flow control (docs/queue.md, "Flow control"; lib/queue_flow.lua): the
 * claim scripts apply the limits of T:limits, take the jobs of groups
 * from their own pending sets in the rotation T:groups, and say in their
 * reply's fifth number when a held claim may claim again; QUEUE_LIMITS
 * sets and reads the limits, QUEUE_GROUPS lists the groups.
 *
 * Flows (docs/queue.md, "Flows"; lib/queue_deps.lua): QUEUE_ADD_FLOW adds
 * a parent and its children, its KEYS the parent queue's tag, then the
 * children's other queues' tags (one Redis Cluster slot: the caller
 * checks); QUEUE_CHILDREN reads a parent's children. The scripts that end
 * a job (complete, fail, recover, cancel) count a child for its parent,
 * in the parent's queue, when T:limits has "deps". For a child in another
 * queue, that touches keys of a tag the op was not given (the parent's,
 * read from T:parent): a departure from the rule of adapters/backend.h,
 * safe because both queues share one slot (on a Redis Cluster,
 * fleet_queue_add_flow() refuses children of another slot). */
