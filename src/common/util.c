/* util.c -- small allocation helpers and the per-object PRNG. */
#include <stdlib.h>
#include <string.h>

#include "util.h"

char *fleet__strdup(const char *s) {
  if (s == NULL)
    return NULL;
  return fleet__memdup(s, strlen(s));
}

int fleet__hex_digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

char *fleet__memdup(const void *p, size_t len) {
  char *copy = malloc(len + 1);
  if (copy == NULL)
    return NULL;
  if (len > 0)
    memcpy(copy, p, len);
  copy[len] = '\0';
  return copy;
}

void fleet__rng_seed(fleet__rng_t *rng, uint64_t seed) {
  /* splitmix64 once, so that nearby seeds give unrelated states; xorshift
   * must never start from 0. */
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  rng->s = z != 0 ? z : 0x2545f4914f6cdd1dULL;
}

uint32_t fleet__rng_next(fleet__rng_t *rng) {
  uint64_t x = rng->s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  rng->s = x;
  return (uint32_t)((x * 0x2545f4914f6cdd1dULL) >> 32);
}

const char *fleet__name_at(const char *const *names, size_t n, long long i) {
  return i >= 0 && (unsigned long long)i < n ? names[i] : "unknown";
}
