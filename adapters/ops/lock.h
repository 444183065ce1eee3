/* ops/lock.h -- the backend ops of the lock primitive, XX(ID, name, command)
 * as in FLEET__OP_MAP (adapters/backend.h), with KEYS, ARGV and reply.
 *
 * A lease of lock name N lives in two keys sharing one hash tag:
 * "{prefix:N}:lock", a string "<token>:<owner>" with a TTL (PX), which the
 * server expires on its own clock, with a "*" in front while some owner
 * waits for it; and "{prefix:N}:fence", the last token issued (INCR), which
 * never expires. Releases are published on "{prefix:N}:released".
 *
 *   LOCK_ACQUIRE  KEYS: lease, fence. ARGV: owner, ttl ms (a positive
 *       integer), "1" to mark a busy lease as waited for (else "0").
 *       Takes a new token (INCR fence, also when the lease is busy) and
 *       sets the lease to "<token>:<owner>" if it is free (SET NX PX).
 *       Reply: the token, an integer, when taken; else an array {lease
 *       value (with its "*" mark if any), pttl of the lease}. A wrong type
 *       gives FLEET_EWRONGTYPE; a fence that is not an integer,
 *       FLEET_EBACKEND.
 *   LOCK_RELEASE  KEYS: lease. ARGV: "<token>:<owner>", the released
 *       channel. Deletes the lease if it holds that value (marked or not)
 *       and, if it was marked, publishes the value on the channel.
 *       Reply: integer 1 when waiters were woken, else 0. Error:
 *       FLEET_ESTALE when the lease holds another value or none.
 *   LOCK_RENEW  KEYS: the leases of n locks (n >= 1, any names). ARGV: for
 *       each, "<token>:<owner>" then the ttl ms. Extends each lease that
 *       holds its value to a full ttl (PEXPIRE). Reply: an array of n
 *       integers: 1 extended, 0 not held with that value, -1 the key holds
 *       another type.
 *   LOCK_QUERY  KEYS: lease, fence. ARGV: none.
 *       Reply: {lease value or "" when free, pttl of the lease, the fence
 *       as a string ("0" before the first token)}. */
#ifndef FLEET_OPS_LOCK_H
#define FLEET_OPS_LOCK_H

#define FLEET__OPS_LOCK(XX)                                                    \
  XX(LOCK_ACQUIRE, "lock_acquire", NULL)                                       \
  XX(LOCK_RELEASE, "lock_release", NULL)                                       \
  XX(LOCK_RENEW, "lock_renew", NULL)                                           \
  XX(LOCK_QUERY, "lock_query", NULL)

#endif /* FLEET_OPS_LOCK_H */
