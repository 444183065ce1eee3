/* metrics_int.h -- the metrics block of a handle (src/core/metrics.c). */
#ifndef FLEET_SRC_METRICS_INT_H
#define FLEET_SRC_METRICS_INT_H

#include <stdint.h>

#include "fleet/metrics.h"

/* Kept in every handle's base (fleet__handle_t.mblock); the base's
 * `metrics` points at the block its events count into (its own, or the
 * block of the handle that made it: a leader's lock counts into the
 * leader). */
/* The job types a handle counts apart (docs/metrics.md, "Job types"): the
 * first FLEET__METRICS_TYPES distinct ones of up to FLEET__METRICS_TYPE_MAX
 * bytes; every other job counts under FLEET__METRICS_TYPE_OTHER, the slot
 * after them. */
#define FLEET__METRICS_TYPES 16
#define FLEET__METRICS_TYPE_MAX 64
#define FLEET__METRICS_TYPE_OTHER "_other"

typedef struct {
  char name[FLEET__METRICS_TYPE_MAX];
  size_t len;
  uint64_t counters[FLEET_METRIC_COUNTER_MAX];
} fleet__metrics_type_t;

typedef struct fleet__metrics_s {
  uint64_t counters[FLEET_METRIC_COUNTER_MAX];
  fleet_histogram_t histograms[FLEET_METRIC_HISTOGRAM_MAX];
  /* The handle's name, in memory the primitive keeps until its free. */
  const char *name;
  size_t name_len;
  /* The counts by job type (FLEET__METRICS_TYPES + 1 slots, made at the
   * first typed count; NULL before), and how many types have a slot. */
  fleet__metrics_type_t *types;
  size_t ntypes;
} fleet__metrics_t;

static inline void fleet__metrics_add(fleet__metrics_t *m,
                                      fleet_metric_counter_t c, uint64_t n) {
  if (m != NULL)
    m->counters[c] += n;
}

/* Adds `n` to counter `c` and to its count for the job type `type`
 * (`len` bytes): the counters of jobs a worker claims, completes, fails,
 * retries and loses. The total counts even when the type's slot cannot be
 * made (out of memory). */
void fleet__metrics_add_type(fleet__metrics_t *m, fleet_metric_counter_t c,
                             const char *type, size_t len, uint64_t n);

/* Frees what the block holds (its job types); the handle's free. */
void fleet__metrics_free(fleet__metrics_t *m);

/* Records one observation of `us` microseconds. */
void fleet__metrics_observe(fleet__metrics_t *m, fleet_metric_histogram_t hg,
                            uint64_t us);

/* Sets the name from the hash tag "{prefix:name}" the handle keeps. */
void fleet__metrics_name_from_tag(fleet__metrics_t *m, const char *tag,
                                  size_t tag_len, size_t prefix_len);

/* Escapes a Prometheus label value (\\, \", \n) into `out` (NUL-terminated
 * when cap > 0); returns the length the whole escape needs, as snprintf. */
size_t fleet__prom_escape(char *out, size_t cap, const char *v, size_t len);

#endif /* FLEET_SRC_METRICS_INT_H */
