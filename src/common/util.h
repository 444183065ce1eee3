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

/* The name at `i` of the `n` names in `names`, or "unknown" when `i` is
 * negative or out of range. */
const char *fleet__name_at(const char *const *names, size_t n, long long i);
/* fleet__name_at() on a table whose size its type gives. */
#define FLEET__NAME_AT(names, i)                                               \
  fleet__name_at((names), FLEET__ARRAY_SIZE(names), (long long)(i))

/* Defines `const char *fn(type value)`, which names each value of an
 * X-macro map of XX(NAME, "name") lines: the names in the map's order, from
 * 0, and "unknown" for any other value. The one name table of every enum
 * the library shows by name (states, levels, reasons). */
#define FLEET__NAME_XX(name, str) str,
/* The initializer of a name table from an X-macro map:
 * `static const char *const names[] = FLEET__NAMES(MAP);`. */
#define FLEET__NAMES(MAP)                                                      \
  { MAP(FLEET__NAME_XX) }
#define FLEET__NAME_FN(fn, type, MAP)                                          \
  const char *fn(type value) {                                                 \
    static const char *const names_[] = {MAP(FLEET__NAME_XX)};                 \
    return fleet__name_at(names_, FLEET__ARRAY_SIZE(names_),                   \
                          (long long)value);                                   \
  }

/* container_of, for intrusive structures. */
#define FLEET__CONTAINER_OF(ptr, type, member)                                 \
  ((type *)((char *)(ptr)-offsetof(type, member)))

#endif /* FLEET_COMMON_UTIL_H */
