/* args.h -- what every primitive shares to talk to its ops: the one rule
 * for names and sizes, the builder of a call's arguments, and readers of
 * reply elements. */
#ifndef FLEET_SRC_ARGS_H
#define FLEET_SRC_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"

/* Longest object name (a lock, leader, queue, worker, store collection),
 * in bytes, and the longest id (an owner, a job id, a record id). */
#define FLEET__NAME_MAX 512

/* The one validation rule for names, ids and other bounded strings:
 * `s` is a NUL-terminated string of 1 to `max` bytes. Returns 0 (and its
 * length in `*len`, which may be NULL), FLEET_EINVAL (NULL or empty) or
 * FLEET_E2BIG (longer than `max`). */
int fleet__str_check(const char *s, size_t max, size_t *len);

/* The same rule for byte strings: 1 to `max` bytes. */
int fleet__bytes_check(fleet_bytes_t b, size_t max);

/* The arguments of one backend call, built into reusable storage: the
 * backend copies them, so one builder serves every call of a handle.
 * Numbers are formatted into `nums`, reserved up front so that the
 * pointers handed out stay valid until the call is sent. */
typedef struct {
  fleet_bytes_t *argv;
  size_t argc, argv_cap;
  char *nums;
  size_t nums_len, nums_cap;
} fleet__args_t;

/* Starts a call with room for `nargs` arguments of which up to `nnums`
 * are numbers. Returns 0 or FLEET_ENOMEM (then nothing may be added). */
int fleet__args_begin(fleet__args_t *a, size_t nargs, size_t nnums);
void fleet__args_bytes(fleet__args_t *a, const void *p, size_t len);
void fleet__args_str(fleet__args_t *a, const char *s); /* NULL: "" */
void fleet__args_u64(fleet__args_t *a, uint64_t v);
void fleet__args_i64(fleet__args_t *a, int64_t v);
void fleet__args_free(fleet__args_t *a);

/* Grows an array to hold `n` items of `size` bytes (doubling). Returns 0
 * or FLEET_ENOMEM (the array is unchanged). */
int fleet__grow(void **arr, size_t *cap, size_t n, size_t size);

/* Reply readers: each returns 0 or FLEET_EPROTO (wrong type or range). */
static inline int fleet__reply_is_array(const fleet__reply_t *r, size_t n) {
  return r != NULL && r->type == FLEET__REPLY_ARRAY && r->nelem >= n;
}
int fleet__reply_u64(const fleet__reply_t *r, uint64_t *out);
int fleet__reply_i64(const fleet__reply_t *r, int64_t *out);
int fleet__reply_bytes(const fleet__reply_t *r, fleet_bytes_t *out);
/* A string holding a decimal integer (as HGET returns numbers). */
int fleet__reply_u64_str(const fleet__reply_t *r, uint64_t *out);

#endif /* FLEET_SRC_ARGS_H */
