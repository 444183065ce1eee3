/* hash.c -- the hashes that route a key to one of n owners (hash.h). */
#include "hash.h"

/* FNV-1a over the key, then the splitmix64 finalizer, so that keys which
 * differ in their last bytes still spread over every bucket. */
uint64_t fleet__key_hash(const void *key, size_t len) {
  const unsigned char *p = key;
  uint64_t h = 14695981039346656037ULL;
  size_t i;

  for (i = 0; i < len; i++) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  h ^= h >> 31;
  return h;
}

/* "A Fast, Minimal Memory, Consistent Hash Algorithm" (Lamping, Veach,
 * 2014): a key stays in its bucket when buckets are added, unless it
 * moves to a new one. */
uint32_t fleet__jump_hash(uint64_t key, uint32_t n) {
  int64_t b = -1, j = 0;

  while (j < (int64_t)n) {
    b = j;
    key = key * 2862933555777941757ULL + 1;
    j = (int64_t)((double)(b + 1) *
                  ((double)(1LL << 31) / (double)((key >> 33) + 1)));
  }
  return (uint32_t)b;
}
