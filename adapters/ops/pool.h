/* ops/pool.h -- the backend ops of the worker pool, XX(ID, name, command)
 * as in FLEET__OP_MAP (adapters/backend.h), with KEYS, ARGV and reply.
 *
 * Every op gets the pool's hash tag T = "{<prefix>:<pool>}" as KEYS[1] and
 * builds its keys from it (docs/pool.md has the schema):
 *
 *   T:id:<node>   string the random nonce of the live node instance that
 *                        holds the id (expires after the worker TTL)
 *   T:nodes       zset   node id -> keep-alive deadline (server ms), for
 *                        the nodes with workers
 *   T:workers     zset   worker id -> creation sequence (T:wseq)
 *   T:wnode       hash   worker id -> node id
 *   T:nw:<node>   set    the node's worker ids
 *   T:wj:<worker> set    the keys of the jobs the worker owns
 *   T:jobs        hash   job key -> "<token>:<state>:<worker>"; state s
 *                        (starting), r (running), m (moving: stop sent,
 *                        next owner in T:next), x (stopping), o (orphaned:
 *                        no owner, worker "")
 *   T:pay         hash   job key -> payload
 *   T:disp        hash   job key -> the node waiting for its start result
 *   T:next        hash   job key -> the owner a moving job goes to
 *   T:ev:<node>   list   the node's events, six strings each: kind, key,
 *                        worker, token, data, from; kinds s (start), x
 *                        (stop; data "stop" or "move"), n (notify), r
 *                        (a start's result; data the status), m (the
 *                        membership or the orphans changed), S (shutdown)
 *   T:wake:<node> channel  published on each push to T:ev:<node>
 *   T:fence, T:rev, T:wseq  counters: tokens, membership revision,
 *                        worker creation order; T:life  ms an unread event
 *                        list lives
 *   T:tk:<name>   hash   a ticker: period, next (server ms), seq, lost,
 *                        c<seq> per claimed tick not acknowledged; or
 *                        stopped, for a while after a stop
 *   T:sk:<name>   set    the keys a schedule started
 *
 * Every deadline is computed from the server's TIME. Every op that changes
 * a job on behalf of its owner presents the owner's token.
 *
 * A node presents its instance nonce with its id; while another live
 * instance holds the id (T:id:<node>), POOL_JOIN and POOL_EVENTS fail with
 * FLEET_ECONFLICT naming the id, and POOL_KEEPALIVE and POOL_LEAVE change
 * nothing.
 *
 *   POOL_JOIN  ARGV: node, nonce, worker ttl ms, event life ms, "1" when
 *         the node joins again (else "0"), n, n worker ids, then (job key,
 *         worker, payload) per job the node re-asserts (its jobs after the
 *         pool's data was lost): each is admitted with a new token, state
 *         r, only when the key is absent. Reply: {revision, new token or 0
 *         (refused) per job} | {-1} when a node joining again has an
 *         unread shutdown in its event list (nothing changed). Claims the
 *         id; a node with no worker (and not a member) holds the id only.
 *   POOL_KEEPALIVE  KEYS: the tags of n nodes' pools. ARGV: for each,
 *         node, nonce, worker ttl ms, "1" when lapsed on the node's clock
 *         (it leaves) else "0", "1" when the node joined with workers.
 *         Also removes lapsed nodes. Reply: per node, {1 alive | -1 not in
 *         the pool or the id lapsed | -2 another instance holds the id,
 *         revision}.
 *   POOL_MEMBERS  ARGV: none. Reply: {revision, worker, node, creation
 *         sequence (a string), ...} in creation order.
 *   POOL_DISPATCH  ARGV: key, payload, revision, worker, dispatcher node,
 *         max jobs (0: none). Reply: {1, token} | {0, 0} exists | {-1, 0}
 *         revision stale | {-2, 0} full.
 *   POOL_STARTED  ARGV: key, worker, token, status. Reply: 1 | 0 stale.
 *   POOL_EVENTS  ARGV: node, max events, nonce. Reply: six strings per
 *         event.
 *   POOL_NOTIFY  ARGV: key, payload. Reply: 1 | 0 no job | -1 no owner.
 *   POOL_STOP  ARGV: key. Reply: 1 | 0 no job.
 *   POOL_STOPPED  ARGV: key, worker, token, status for a waiting
 *         dispatcher. Reply: 1 | 0 stale.
 *   POOL_MOVE  ARGV: revision, then key, token, new worker per job.
 *         Reply: jobs moved | -1 revision stale.
 *   POOL_JOBS  ARGV: none. Reply: {key, owner record, ...}.
 *   POOL_PAYLOAD  ARGV: key. Reply: payload | nil.
 *   POOL_LEAVE  ARGV: node, nonce. Gives the id up. Reply: 1 | 0 not in
 *         the pool | -1 another instance holds the id (nothing changed).
 *   POOL_SHUTDOWN  ARGV: none. Reply: the number of nodes told.
 *   POOL_TICK  ARGV: ticker name, period ms, claimer, lease ms, horizon
 *         ms, a seq the claimer acknowledges or "0". Claims the due tick
 *         of the hash T:tk:<name> (period, next, seq, lost, c<seq> =
 *         "<deadline>:<scheduled>:<claimer>" per unacknowledged claim;
 *         stopped), or first the oldest claim whose lease lapsed (then
 *         redelivered is 1; older than the horizon: counted in lost, the
 *         next tick's missed). Reply: {1, seq, scheduled ms, missed, ms to
 *         the next, redelivered} | {0, 0, 0, 0, ms to the next, 0} |
 *         {-1, 0, 0, 0, 0, 0} stopped.
 *   POOL_WORKER_REMOVE  ARGV: node, worker, "d" (drain: the worker
 *         leaves the membership; rebalances move its jobs away) | "f"
 *         (forget: its remaining jobs are orphaned, one being stopped
 *         leaves the pool; the worker is gone), nonce.
 *         Reply: "d": 1 | 0 not a member (or another instance holds the
 *         id); "f": jobs orphaned.
 *   POOL_TICK_ACK  ARGV: ticker name, claimer, seqs. Ends the leases the
 *         claimer holds on them. Reply: how many.
 *   POOL_TICK_STOP  ARGV: ticker name, ms the stop marker stays. Reply: 1
 *         | 0 was not running.
 *   POOL_PLAN  ARGV: schedule name, "a" (stop all others) | "r" (reset) |
 *         "", n, n start keys, keys to stop. Keeps the set T:sk:<name> of
 *         the keys the schedule started. Reply: {{indexes of the start
 *         keys not in the pool}, {keys to stop}}.
 *
 * POOL_DISPATCH, POOL_JOIN, POOL_MOVE and POOL_STOPPED, which assign jobs
 * with T:fence tokens, are fenced ops: each takes one ARGV more than listed
 * here, last, the failover epoch, which the adapter appends when it writes
 * the command (adapters/backend.h, "Fenced ops"); the tokens come from
 * lib/fence.lua (lib/pool_int.lua: next_token), so that they never repeat
 * or go back across a failover. */
#ifndef FLEET_OPS_POOL_H
#define FLEET_OPS_POOL_H

#define FLEET__OPS_POOL(XX)                                                    \
  XX(POOL_JOIN, "pool_join", NULL)                                             \
  XX(POOL_KEEPALIVE, "pool_keepalive", NULL)                                   \
  XX(POOL_MEMBERS, "pool_members", NULL)                                       \
  XX(POOL_DISPATCH, "pool_dispatch", NULL)                                     \
  XX(POOL_STARTED, "pool_started", NULL)                                       \
  XX(POOL_EVENTS, "pool_events", NULL)                                         \
  XX(POOL_NOTIFY, "pool_notify", NULL)                                         \
  XX(POOL_STOP, "pool_stop", NULL)                                             \
  XX(POOL_STOPPED, "pool_stopped", NULL)                                       \
  XX(POOL_MOVE, "pool_move", NULL)                                             \
  XX(POOL_JOBS, "pool_jobs", NULL)                                             \
  XX(POOL_PAYLOAD, "pool_payload", NULL)                                       \
  XX(POOL_LEAVE, "pool_leave", NULL)                                           \
  XX(POOL_SHUTDOWN, "pool_shutdown", NULL)                                     \
  XX(POOL_TICK, "pool_tick", NULL)                                             \
  XX(POOL_TICK_STOP, "pool_tick_stop", NULL)                                   \
  XX(POOL_TICK_ACK, "pool_tick_ack", NULL)                                     \
  XX(POOL_WORKER_REMOVE, "pool_worker_remove", NULL)                           \
  XX(POOL_PLAN, "pool_plan", NULL)

#endif /* FLEET_OPS_POOL_H */
