/* ops_queue_int.h -- what the memory queue ops share: the op context (the
 * queue's tag and the time), key building, strict integer parsing, the
 * trim of kept job records and the wake-up publish. Only ops_queue*.c
 * include it. */
#ifndef FLEET_MEMORY_OPS_QUEUE_INT_H
#define FLEET_MEMORY_OPS_QUEUE_INT_H

#include "memory/ops.h"

/* One queue op in progress. */
typedef struct {
  fleet__mem_ctx_t *ctx;
  fleet__ks_t *ks;
  fleet_bytes_t tag; /* KEYS[1] */
  int64_t now;       /* ms, as TIME gives it inside the script */
} fleet__mq_t;

/* Starts a queue op: checks that there is exactly one key and sets the
 * time. Returns 0 or FLEET_EBACKEND (a wrong number of keys, which the
 * script would trip over). */
int fleet__mq_begin(fleet__mq_t *q, fleet__mem_ctx_t *ctx,
                    const fleet_bytes_t *keys, size_t nkeys);

/* The key tag .. suffix .. extra (extra may be {NULL, 0}), in scratch
 * space. Returns 0 or FLEET_ENOMEM. */
int fleet__mq_key(fleet__mq_t *q, const char *suffix, fleet_bytes_t extra,
                  fleet_bytes_t *out);

/* The key of job `id`: tag .. ":job:" .. id. */
static inline int fleet__mq_job_key(fleet__mq_t *q, fleet_bytes_t id,
                                    fleet_bytes_t *out) {
  return fleet__mq_key(q, ":job:", id, out);
}

/* A job field as the scripts' int() reads it: an optional '-' and 1 to 18
 * digits. Returns 0, or FLEET_EPROTO for anything else (nil included). */
int fleet__mq_int(fleet_bytes_t v, int64_t *out);

/* An argument the scripts pass to tonumber(): fleet always sends a decimal
 * integer. Returns 0 or FLEET_EBACKEND (the script would fail on it). */
int fleet__mq_arg(fleet_bytes_t v, int64_t *out);

/* Formats `v` in decimal into scratch space. Returns 0 or FLEET_ENOMEM. */
static inline int fleet__mq_istr(fleet__mq_t *q, int64_t v,
                                 fleet_bytes_t *out) {
  return fleet__ks_fmt_int(q->ks, v, out);
}

/* The score of the first member of the zset `key`: returns 1 and sets
 * `*score`, 0 when the zset is empty, or a keyspace error. */
int fleet__mq_first_score(fleet__mq_t *q, fleet_bytes_t key, double *score);

/* The trim of kept job records, as in queue_complete.lua: the list
 * tag .. `lsuffix` holds "<finished_ms>:<id>" entries, oldest first; drops
 * those finished more than keep_s seconds ago (when keep_s > 0), then those
 * beyond `keep`, at most 1000, deleting their job records and their entries
 * in the hash tag .. `marks` (when not NULL). Returns 0 or a keyspace
 * error. */
int fleet__mq_trim(fleet__mq_t *q, const char *lsuffix, int64_t keep,
                   int64_t keep_s, const char *marks);

/* The token of a done hash value "<finished_ms>:<token>:..." (the scripts'
 * '^%d+:(%d+):'): 1 and `*token` set, or 0. */
int fleet__mq_done_token(fleet_bytes_t v, fleet_bytes_t *token);

/* Parses a kept-job entry "<ms>:<id>" (the scripts' '^(%d+):(.*)$'). Returns
 * 1 and sets `*ms` (INT64_MAX when the digits do not fit) and `*id`, or 0
 * when malformed. */
int fleet__mq_entry(fleet_bytes_t e, int64_t *ms, fleet_bytes_t *id);

/* Parses a claims hash value "<token>:<attempt>" (the scripts'
 * '^(%d+):(%d+)$'). Returns 1 and points `*token` and `*attempt` at the
 * digits, or 0 when malformed. */
int fleet__mq_claim(fleet_bytes_t v, fleet_bytes_t *token,
                    fleet_bytes_t *attempt);

/* PUBLISH tag:jobs:wake "wake". Returns 0 or FLEET_ENOMEM. */
int fleet__mq_wake(fleet__mq_t *q);

/* HSET key with `n` field/value items given as C-string fields and byte
 * values. Returns the keyspace's result. */
int64_t fleet__mq_hset(fleet__mq_t *q, fleet_bytes_t key,
                       const char *const *fields, const fleet_bytes_t *values,
                       size_t n);

#endif /* FLEET_MEMORY_OPS_QUEUE_INT_H */
