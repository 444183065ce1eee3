/* hash.h -- routing a key to one of n owners: a 64-bit hash of the key's
 * bytes and the jump consistent hash over it. The pool routes its jobs'
 * keys with them, and the warm pool its ids to a shard: both must agree
 * with every other node, so the two functions never change. A leaf. */
#ifndef FLEET_COMMON_HASH_H
#define FLEET_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>

/* A 64-bit hash of `len` bytes at `key`: FNV-1a, then the splitmix64
 * finalizer. */
uint64_t fleet__key_hash(const void *key, size_t len);

/* The bucket, 0 to n - 1, of the hash `key` among `n` buckets (n > 0):
 * when buckets are added, a key stays or moves to a new one. */
uint32_t fleet__jump_hash(uint64_t key, uint32_t n);

#endif /* FLEET_COMMON_HASH_H */
