/* reply_builder.h -- how a memory op writes its reply: values appended in
 * order into one growable buffer, turned into a fleet__reply_t tree when
 * the reply is delivered. */
#ifndef FLEET_MEMORY_REPLY_BUILDER_H
#define FLEET_MEMORY_REPLY_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"

/* A reply being built. A reply is one value; an array of n is followed by
 * its n children, each written the same way (arrays nest). The builder
 * counts the values still due, so it knows when the reply is complete.
 *
 * Errors are sticky: once a call fails (FLEET_ENOMEM, or FLEET_EPROTO for a
 * value past the end of a complete reply), every later call returns that
 * error and fleet__rb_build() reports it, so an op may write its whole
 * reply and leave the checking to the caller. Buffers keep their capacity
 * across fleet__rb_reset(), so a pooled builder does not allocate. */
typedef struct {
  char *buf; /* Encoded values. */
  size_t len;
  size_t cap;
  fleet__reply_t *nodes; /* The tree, made by fleet__rb_build(). */
  size_t nodes_cap;
  size_t nvalues; /* Values written. */
  size_t due;     /* Values still needed to complete the reply. */
  int err;
} fleet__rb_t;

/* Initializes an empty builder; it allocates nothing yet. */
void fleet__rb_init(fleet__rb_t *rb);

/* Empties the builder for a new reply, keeping its buffers. */
void fleet__rb_reset(fleet__rb_t *rb);

/* Empties the builder and frees its buffers if they exceed `max_bytes`
 * together (0 frees them always). */
void fleet__rb_trim(fleet__rb_t *rb, size_t max_bytes);

/* Each appends one value and returns 0 or the builder's error. */
int fleet__rb_nil(fleet__rb_t *rb);
int fleet__rb_int(fleet__rb_t *rb, int64_t v);
/* Copies `len` bytes. */
int fleet__rb_str(fleet__rb_t *rb, const void *p, size_t len);
/* A string, or nil for {NULL, 0} (the keyspace's nil). */
int fleet__rb_bytes(fleet__rb_t *rb, fleet_bytes_t b);
/* A status reply ("OK", "PONG"); `s` is NUL-terminated and copied. */
int fleet__rb_status(fleet__rb_t *rb, const char *s);
/* An array; the next `n` values are its elements. */
int fleet__rb_array(fleet__rb_t *rb, size_t n);

/* Returns 0 when the builder holds a complete reply, its error, or
 * FLEET_EPROTO when the reply is incomplete. */
int fleet__rb_check(const fleet__rb_t *rb);

/* Turns the builder's values into a tree and points `*out` at its root.
 * The tree points into the builder and stays valid until the builder is
 * reset, trimmed or built again. Returns 0, what fleet__rb_check()
 * returns, or FLEET_ENOMEM. */
int fleet__rb_build(fleet__rb_t *rb, const fleet__reply_t **out);

#endif /* FLEET_MEMORY_REPLY_BUILDER_H */
