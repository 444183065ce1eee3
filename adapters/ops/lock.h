/* ops/lock.h -- the backend ops of the lock primitive, XX(ID, name, command)
 * as in FLEET__OP_MAP (adapters/backend.h), with KEYS, ARGV and reply.
 *
 * Each op gets the lock's hash tag "{prefix:N}" (N the lock name) as its
 * KEYS[1] and builds its keys from it, as backend.h says. The lease is
 * "<tag>:lock", a string "<token>:<owner>" with a TTL (PX), which the
 * server expires on its own clock, with a "*" in front while some owner
 * waits for it; "<tag>:fence" holds the last token issued (INCR) and never
 * expires. Releases are published on "<tag>:released".
 *
 *   LOCK_ACQUIRE  KEYS: tag. ARGV: owner, ttl ms (a positive integer), "1"
 *       to mark a busy lease as waited for (else "0"). Takes a new token
 *       (INCR fence, also when the lease is busy) and sets the lease to
 *       "<token>:<owner>" if it is free (SET NX PX). Reply: the token, an
 *       integer, when taken; else an array {lease value (with its "*" mark
 *       if any), pttl of the lease}. A wrong type gives FLEET_EWRONGTYPE; a
 *       fence that is not an integer, FLEET_EBACKEND.
 *   LOCK_RELEASE  KEYS: tag. ARGV: "<token>:<owner>". Deletes the lease if
 *       it holds that value (marked or not) and, if it was marked,
 *       publishes the value on the released channel. Reply: integer 1 when
 *       waiters were woken, else 0. Error: FLEET_ESTALE when the lease
 *       holds another value or none.
 *   LOCK_RENEW  KEYS: the tags of n locks (n >= 1, any names). ARGV: for
 *       each, "<token>:<owner>" then the ttl ms. Extends each lease that
 *       holds its value to a full ttl (PEXPIRE). Reply: an array of n
 *       integers: 1 extended, 0 not held with that value, -1 the lease
 *       holds another type.
 *   LOCK_QUERY  KEYS: tag. ARGV: none. Reply: {lease value or "" when
 *       free, pttl of the lease, the fence as a string ("0" before the
 *       first token)}. */
#ifndef FLEET_OPS_LOCK_H
#define FLEET_OPS_LOCK_H

#define FLEET__OPS_LOCK(XX)                                                    \
  XX(LOCK_ACQUIRE, "lock_acquire", NULL)                                       \
  XX(LOCK_RELEASE, "lock_release", NULL)                                       \
  XX(LOCK_RENEW, "lock_renew", NULL)                                           \
  XX(LOCK_QUERY, "lock_query", NULL)

#endif /* FLEET_OPS_LOCK_H */
