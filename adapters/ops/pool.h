/* ops/pool.h -- what the worker pool's scripts share (the scripts
 * adapters/scripts/lua/pool_*.lua: each one's header states its KEYS,
 * ARGV and reply).
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
 *                        no owner, worker ""), q (requeued by its owner:
 *                        no owner until its due time in T:rqd)
 *   T:pay         hash   job key -> payload
 *   T:disp        hash   job key -> the node waiting for its start result
 *   T:next        hash   job key -> the owner a moving job goes to
 *   T:ev:<node>   list   the node's events, six strings each: kind, key,
 *                        worker, token, data, from; kinds s (start), x
 *                        (stop; data "stop" or "move"), n (notify), r
 *                        (a start's result; data the status), m (the
 *                        membership or the orphans changed), S (shutdown)
 *   T:wake:<node> channel  published on each push that finds T:ev:<node>
 *                        empty: the event itself ("<kind>\0<token>\0
 *                        <worker>\0<from>\0<key>\0<data>") when it is
 *                        one start or start result (lib/pool_int.lua:
 *                        wake_msg), else its kind
 *   T:fence, T:rev, T:wseq  counters: tokens, membership revision,
 *                        worker creation order; T:life  ms an unread event
 *                        list lives
 *   T:tk:<name>   hash   a ticker: period, next (server ms), seq, lost,
 *                        c<seq> per claimed tick not acknowledged; or
 *                        stopped, for a while after a stop
 *   T:sk:<name>   set    the keys a schedule started
 *   T:rq          hash   job key -> its requeues in a row (pool_requeue),
 *                        until a start reports
 *   T:rqd         zset   job key -> the server ms a requeued job is due
 *   T:down        string the server ms of the pool's shutdown; while it is
 *                        there, POOL_JOIN fails with FLEET_ESHUTDOWN (until
 *                        POOL_RESET)
 *
 * Every deadline is computed from the server's TIME. Every op that changes
 * a job on behalf of its owner presents the owner's token.
 *
 * A node presents its instance nonce with its id; while another live
 * instance holds the id (T:id:<node>), POOL_JOIN and POOL_EVENTS fail with
 * FLEET_ECONFLICT naming the id, and POOL_KEEPALIVE and POOL_LEAVE change
 * nothing.
 *
 * POOL_DISPATCH, POOL_JOIN, POOL_MOVE and POOL_STOPPED, which assign jobs
 * with T:fence tokens, are fenced ops (adapters/backend.h, "Fenced ops"); the
 * tokens come from lib/fence.lua (lib/pool_int.lua: next_token), so that they
 * never repeat or go back across a failover. */
