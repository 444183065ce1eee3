/* ops/warmpool.h -- the backend ops of the warm resource pool, XX(ID,
 * name, command) as in FLEET__OP_MAP (adapters/backend.h), with KEYS, ARGV
 * and reply.
 *
 * Every op but WARMPOOL_RENEW gets the pool's hash tag T =
 * "{<prefix>:<pool>}" as KEYS[1] and builds its keys from it
 * (docs/warmpool.md has the schema):
 *
 *   T:lock, T:fence  the primary's lease and fence: the leader election
 *                    named <pool> (adapters/ops/lock.h)
 *   T:wp:meta   hash  fp (definition fingerprint), target, fails (creation
 *                     failures in a row), backoff (server ms until which
 *                     no creation starts), err (the last failure's text)
 *   T:wp:idle   zset  idle resource id -> expiry (server ms)
 *   T:wp:exp    hash  id -> expiry, for every idle or borrowed resource
 *   T:wp:bor    zset  borrowed id -> borrow lease deadline (4e15: none)
 *   T:wp:who    hash  borrowed id -> "<borrower>/<nonce>": the owner id
 *                     and instance nonce of the node that borrowed it
 *   T:wp:own:<owner>  string  the nonce of the live node instance that
 *                     holds the owner id (expires: primary_ttl_ms)
 *   T:wp:mk     zset  id -> deadline: creations of a primary in flight
 *   T:wp:mkt    hash  id -> the token its creation was reserved under
 *   T:wp:dmk    zset  id -> deadline: creations on demand in flight
 *   T:wp:dead   zset  id -> claim deadline (0: unclaimed): to destroy
 *   T:wp:seq    counter of resource ids ("<owner>-<seq>")
 *   T:wp:wake   channel  published when the primary should act at once
 *
 * Every deadline is computed from the server's TIME. Every write of the
 * primary presents its token and owner, checked against T:lock.
 *
 * Every write under an owner id presents the node's instance nonce and
 * fails with FLEET_ECONFLICT (naming the id) while another live instance
 * holds the id.
 *
 *   WARMPOOL_START  ARGV: fingerprint, first target, owner, nonce, owner
 *         lease ms. Reply: {1, fp} (the owner lease taken) | {0, stored
 *         fp} (differs).
 *   WARMPOOL_ACQUIRE  ARGV: min remaining ms, lease ms (0 none), borrower,
 *         nonce. Reply: {1, id, expiry} | {0, "", 0} none idle.
 *   WARMPOOL_RELEASE  ARGV: id, borrower, min remaining ms, "1" destroy,
 *         claim ms, nonce. Reply: 1 idle | 2 caller destroys | 0 not
 *         borrowed by this instance.
 *   WARMPOOL_RENEW  KEYS: the tags of n items' pools. ARGV: id ("" for
 *         the owner lease), borrower, lease ms, nonce per item. Reply: n
 *         integers, 1 | 0 not borrowed | 2 owner lease taken again | -1
 *         owner id held by another instance.
 *   WARMPOOL_RECONCILE  ARGV: token, owner, min remaining ms, claim ms,
 *         max moved, creations wanted, warm-up deadline ms. Reply: {-1}
 *         stale | {1, nd, nc, backoff left, live idle, target, nd ids to
 *         destroy, nc ids to create}.
 *   WARMPOOL_PUT  ARGV: id, token, owner, idle ttl ms, min remaining ms,
 *         claim ms. Reply: 1 | 0 reservation gone | -1 stale | -2 full.
 *   WARMPOOL_FAIL  ARGV: id, text, backoff base ms, max ms. Reply:
 *         {failures, backoff ms}.
 *   WARMPOOL_DIRECT  ARGV: owner, deadline ms, nonce. Reply: the new id.
 *   WARMPOOL_ADOPT  ARGV: id, borrower, lease ms, idle ttl ms, claim ms,
 *         nonce. Reply: 1 | 0 reservation gone.
 *   WARMPOOL_DESTROYED  ARGV: ids. Reply: how many were to destroy.
 *   WARMPOOL_RESIZE  ARGV: target. Reply: the previous one (-1 none).
 *   WARMPOOL_DRAIN  ARGV: claim ms, max. Reply: the ids taken.
 *   WARMPOOL_SNAPSHOT  ARGV: min remaining ms. Reply: {target, live idle,
 *         idle, borrowed, creating, to destroy, failures, backoff left,
 *         last error, lease value, lease pttl, fingerprint}.
 *   WARMPOOL_LEAVE  ARGV: owner, nonce. Gives the owner lease up if this
 *         instance holds it. Reply: 1 | 0. */
#ifndef FLEET_OPS_WARMPOOL_H
#define FLEET_OPS_WARMPOOL_H

#define FLEET__OPS_WARMPOOL(XX)                                                \
  XX(WARMPOOL_START, "warmpool_start", NULL)                                   \
  XX(WARMPOOL_ACQUIRE, "warmpool_acquire", NULL)                               \
  XX(WARMPOOL_RELEASE, "warmpool_release", NULL)                               \
  XX(WARMPOOL_RENEW, "warmpool_renew", NULL)                                   \
  XX(WARMPOOL_RECONCILE, "warmpool_reconcile", NULL)                           \
  XX(WARMPOOL_PUT, "warmpool_put", NULL)                                       \
  XX(WARMPOOL_FAIL, "warmpool_fail", NULL)                                     \
  XX(WARMPOOL_DIRECT, "warmpool_direct", NULL)                                 \
  XX(WARMPOOL_ADOPT, "warmpool_adopt", NULL)                                   \
  XX(WARMPOOL_DESTROYED, "warmpool_destroyed", NULL)                           \
  XX(WARMPOOL_RESIZE, "warmpool_resize", NULL)                                 \
  XX(WARMPOOL_DRAIN, "warmpool_drain", NULL)                                   \
  XX(WARMPOOL_SNAPSHOT, "warmpool_snapshot", NULL)                             \
  XX(WARMPOOL_LEAVE, "warmpool_leave", NULL)

#endif /* FLEET_OPS_WARMPOOL_H */
