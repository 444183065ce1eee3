/* internal.h -- helpers shared by src/ and the adapters: URLs, backoff,
 * small allocation helpers. Nothing here is public. */
#ifndef FLEET_INTERNAL_H
#define FLEET_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "fleet.h"

/* ------------------------------------------------------------------------ */
/* URLs                                                                     */

typedef enum {
  FLEET__URL_REDIS, /* redis://[[user]:pass@]host[:port][/db] */
  FLEET__URL_UNIX,  /* unix:///path[?db=N] */
  FLEET__URL_MEMORY /* memory:// */
} fleet__url_scheme_t;

/* Longest URL fleet accepts, in bytes. */
#define FLEET__URL_MAX 4096

typedef struct fleet__url_s {
  fleet__url_scheme_t scheme;
  char *host;     /* REDIS: host name or IP literal, without brackets */
  uint16_t port;  /* REDIS: default 6379 */
  char *path;     /* UNIX: socket path */
  char *user;     /* NULL when absent; percent-decoded */
  char *password; /* NULL when absent; percent-decoded */
  int db;         /* default 0 */
} fleet__url_t;

/* Parses `text` into `out` (zeroed first). Returns 0, FLEET_EBADURL with
 * nothing allocated, or FLEET_ENOMEM. Release with fleet__url_free(). */
int fleet__url_parse(const char *text, fleet__url_t *out);

/* Frees what fleet__url_parse() allocated; safe on a zeroed url. */
void fleet__url_free(fleet__url_t *url);

/* ------------------------------------------------------------------------ */
/* Backoff                                                                  */

/* Exponential backoff with jitter: attempt 0 waits about `initial_ms`,
 * each next attempt twice as long, capped at `max_ms`; then a jitter of up
 * to `jitter_pct` percent of the delay is subtracted, chosen by `rnd` (any
 * 32-bit random value). With i = max(initial_ms, 1) and
 * m = max(max_ms, i), the result is always in
 * [base - base * jitter_pct / 100, base] where base = min(m, i * 2^attempt),
 * and at least 1 ms. */
uint64_t fleet__backoff_delay(uint32_t initial_ms, uint32_t max_ms,
                              uint32_t jitter_pct, uint32_t attempt,
                              uint32_t rnd);

/* A small, fast, non-cryptographic PRNG (xorshift64*), seeded per object so
 * that no global state is shared between clients. */
typedef struct {
  uint64_t s;
} fleet__rng_t;

void fleet__rng_seed(fleet__rng_t *rng, uint64_t seed);
uint32_t fleet__rng_next(fleet__rng_t *rng);

/* ------------------------------------------------------------------------ */
/* Allocation                                                               */

/* strdup/memdup that return NULL on failure (and on NULL input for
 * fleet__strdup). fleet__memdup adds a NUL after the copy. */
char *fleet__strdup(const char *s);
char *fleet__memdup(const void *p, size_t len);

int fleet__status_transient(int status); /* the rule is in src/errors.c */

#define FLEET__ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* container_of, for intrusive structures. */
#define FLEET__CONTAINER_OF(ptr, type, member)                                 \
  ((type *)((char *)(ptr)-offsetof(type, member)))

#endif /* FLEET_INTERNAL_H */
