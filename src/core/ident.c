/* ident.c -- identities of nodes: the random nonce that tells two
 * instances of one id apart, and the ids fleet makes when a program
 * leaves the choice to it. */
#include <stdio.h>
#include <string.h>

#include <uv.h>

#include "internal.h"

/* Fills `out` with `n` random bytes: the system's generator, or, when it
 * fails, the per-object PRNG seeded from the clock, the process id and
 * the buffer's address (distinct enough to tell instances apart). */
static void ident_random(unsigned char *out, size_t n) {
  fleet__rng_t rng;
  size_t i;

  if (uv_random(NULL, NULL, out, n, 0, NULL) == 0)
    return;
  fleet__rng_seed(&rng, uv_hrtime() ^ ((uint64_t)uv_os_getpid() << 32) ^
                            (uint64_t)(uintptr_t)out);
  for (i = 0; i < n; i++)
    out[i] = (unsigned char)fleet__rng_next(&rng);
}

void fleet__ident_nonce(char out[FLEET__NONCE_LEN + 1]) {
  unsigned char b[FLEET__NONCE_LEN / 2];
  size_t i;

  ident_random(b, sizeof(b));
  for (i = 0; i < sizeof(b); i++) {
    out[2 * i] = "0123456789abcdef"[b[i] >> 4];
    out[2 * i + 1] = "0123456789abcdef"[b[i] & 15];
  }
  out[FLEET__NONCE_LEN] = '\0';
}

char *fleet__ident_make(void) {
  char host[64], rnd[FLEET__NONCE_LEN + 1], id[128];
  size_t len = sizeof(host), i;

  if (uv_os_gethostname(host, &len) != 0 || len == 0)
    memcpy(host, "host", 5);
  /* The id rules forbid '/'; a host name never has one, but keep the id
   * to the characters a host name may hold. */
  for (i = 0; host[i] != '\0'; i++)
    if (!((host[i] >= 'a' && host[i] <= 'z') ||
          (host[i] >= 'A' && host[i] <= 'Z') ||
          (host[i] >= '0' && host[i] <= '9') || host[i] == '-' ||
          host[i] == '.'))
      host[i] = '-';
  fleet__ident_nonce(rnd);
  rnd[8] = '\0';
  snprintf(id, sizeof(id), "%s-%ld-%s", host, (long)uv_os_getpid(), rnd);
  return fleet__strdup(id);
}
