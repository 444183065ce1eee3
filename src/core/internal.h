/* internal.h -- what the core (src/) shares: the leaf helpers of
 * src/common/ (URLs, backoff, allocation, the PRNG, the transient-error
 * rule) and instance identities. Nothing here is public; the adapters
 * include src/common/ headers, never this one. */
#ifndef FLEET_INTERNAL_H
#define FLEET_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/backoff.h"
#include "common/errors.h"
#include "common/url.h"
#include "common/util.h"
#include "fleet.h"

/* ------------------------------------------------------------------------ */
/* Identities (ident.c)                                                     */

/* The length of an instance nonce, in hex digits. */
#define FLEET__NONCE_LEN 16

/* Writes a random instance nonce (FLEET__NONCE_LEN hex digits and a NUL):
 * what tells two instances of one node id apart. */
void fleet__ident_nonce(char out[FLEET__NONCE_LEN + 1]);

/* A new node id for a program that left the choice to fleet:
 * "<host name>-<pid>-<8 random hex digits>", at most 64 + 30 bytes, never
 * holding '/'. Returns it (owned by the caller), or NULL when out of
 * memory. */
char *fleet__ident_make(void);

#endif /* FLEET_INTERNAL_H */
