/* ops/warmpool.h -- what the warm resource pool's scripts share (the
 * scripts adapters/scripts/lua/warmpool_*.lua: each one's header states
 * its KEYS, ARGV and reply).
 *
 * Every op but WARMPOOL_RENEW gets the pool's hash tag T =
 * "{<prefix>:<pool>}" as KEYS[1] and builds its keys from it
 * (docs/warmpool.md has the schema):
 *
 *   T:lock, T:fence  the primary's lease and fence: the leader election
 *                    named <pool> (docs/lock.md)
 *   T:wp:meta   hash  fp (definition fingerprint), target, fails (creation
 *                     failures in a row), backoff (server ms until which
 *                     no creation starts), err (the last failure's text)
 *   T:wp:idle   zset  idle resource id -> expiry (server ms)
 *   T:wp:tgt    string  a copy of the target (the hash's field is the
 *                     reference), read by a release with its owner lease
 *   T:wp:exp    hash  no longer written (an older fleet's id -> expiry)
 *   T:wp:bor    zset  borrowed id with a borrow lease -> its deadline
 *   T:wp:who    hash  borrowed id -> "<expiry>:<borrower>/<nonce>": its
 *                     expiry (server ms), the owner id and instance nonce
 *                     of the node that borrowed it
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
 * holds the id. */
