/* keys.h -- names of fleet objects and the keys built from them. */
#ifndef FLEET_SRC_KEYS_H
#define FLEET_SRC_KEYS_H

#include <stddef.h>

#include "args.h"
#include "fleet.h"

/* A key built into a caller-owned buffer. */
typedef struct {
  char *base;
  size_t len;
  size_t cap;
} fleet__key_t;

/* Builds "{<prefix>:<name>}:<part>" into `key` (growing its buffer; reuse
 * one fleet__key_t to avoid allocating per call). All keys of one object
 * share the hash tag "{<prefix>:<name>}", so a script that touches them
 * runs on one Redis Cluster slot. `part` may be NULL for the bare tag.
 * Returns 0 or FLEET_ENOMEM. */
int fleet__key_build(fleet__key_t *key, const char *prefix, size_t prefix_len,
                     const void *name, size_t name_len, const char *part);

void fleet__key_free(fleet__key_t *key);

/* The key as bytes, for a backend call. */
static inline fleet_bytes_t fleet__key_bytes(const fleet__key_t *key) {
  fleet_bytes_t b = {key->base, key->len};
  return b;
}

#endif /* FLEET_SRC_KEYS_H */
