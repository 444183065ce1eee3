/* util.h -- small helpers anyone may use (util.c): allocation, hex
 * digits, the per-object PRNG, array and container macros. A leaf. */
#ifndef FLEET_COMMON_UTIL_H
#define FLEET_COMMON_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* strdup/memdup that return NULL on failure (and on NULL input for
 * fleet__strdup). fleet__memdup adds a NUL after the copy. */
char *fleet__strdup(const char *s);
char *fleet__memdup(const void *p, size_t len);

/* The value of the hex digit c (0-15), or -1 when c is not one. */
int fleet__hex_digit(char c);

/* A small, fast, non-cryptographic PRNG (xorshift64*), seeded per object so
 * that no global state is shared between clients. */
typedef struct {
  uint64_t s;
} fleet__rng_t;

void fleet__rng_seed(fleet__rng_t *rng, uint64_t seed);
uint32_t fleet__rng_next(fleet__rng_t *rng);

#define FLEET__ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Name tables over an X-macro map whose entries are XX(id, "name"): the
 * table is { MAP(FLEET__NAME_ENTRY) }, indexed by the enum the same map
 * makes, and FLEET__NAME_OF(table, i) is entry i, or "unknown" when i is
 * not one of its values. */
#define FLEET__NAME_ENTRY(id, name) name,
#define FLEET__NAME_OF(table, i)                                               \
  ((size_t)(i) < FLEET__ARRAY_SIZE(table) ? (table)[(size_t)(i)] : "unknown")

/* container_of, for intrusive structures. */
#define FLEET__CONTAINER_OF(ptr, type, member)                                 \
  ((type *)((char *)(ptr)-offsetof(type, member)))

#endif /* FLEET_COMMON_UTIL_H */
