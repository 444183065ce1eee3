/* ops/lock.h -- the backend ops of the lock primitive, XX(ID, name, command)
 * as in FLEET__OP_MAP (adapters/backend.h), with KEYS, ARGV and reply.
 *
 * Each op gets the hash tag "{prefix:N}" of each lock it works on (N the
 * lock name) in KEYS and builds its keys from it, as backend.h says; the
 * ops on n locks treat each lock on its own and answer a fixed number of
 * reply elements per lock, so that the client's batcher can carry the
 * acquires, releases and renewals of many handles in one call. The lease is
 * "<tag>:lock", a string "<token>:<owner>" with a TTL (PX), which the
 * server expires on its own clock, with a "*" in front while some owner
 * waits for it; "<tag>:fence" holds the last token issued (INCR, raised to
 * epoch * 2^32 after a failover: lib/fence.lua) and never expires.
 * Releases are published on "<tag>:released".
 *
 *   LOCK_ACQUIRE  KEYS: the tags of n locks (n >= 1, any names). ARGV:
 *       for each, owner, ttl ms (a positive integer), "1" to mark a busy
 *       lease as waited for (else "0"); last, the failover epoch, which
 *       the adapter appends (a fenced op: adapters/backend.h). For each
 *       lock, takes a new token (fence_next(), also when the lease is
 *       busy) and sets the lease to "<token>:<owner>" if it is free (SET
 *       NX PX). Reply: an array of 2n
 *       integers, {r, pttl} per lock: r the token when taken (pttl 0); r 0
 *       when busy, pttl that of the lease; r -1 when the lease or the fence
 *       holds another type, r -2 when the fence is not an integer (nothing
 *       written; pttl 0). Any other error (FLEET_EOOM, FLEET_EREADONLY,
 *       FLEET_E2BIG for an epoch out of range, ...) fails the whole call,
 *       possibly after earlier locks were taken.
 *   LOCK_RELEASE  KEYS: the tags of n locks (n >= 1, any names). ARGV: for
 *       each, "<token>:<owner>". Deletes each lease that holds its value
 *       (marked or not) and, if it was marked, publishes the value on its
 *       released channel. Reply: an array of n integers: 2 deleted and
 *       waiters woken, 1 deleted, 0 not held with that value (nothing
 *       changed), -1 the lease holds another type. Any other error fails
 *       the whole call.
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
