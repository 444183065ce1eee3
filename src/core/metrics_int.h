/* metrics_int.h -- the metrics block of a handle (src/core/metrics.c). */
#ifndef FLEET_SRC_METRICS_INT_H
#define FLEET_SRC_METRICS_INT_H

#include <stdint.h>

#include "fleet/metrics.h"

/* Kept in every handle's base (fleet__handle_t.mblock); the base's
 * `metrics` points at the block its events count into (its own, or the
 * block of the handle that made it: a leader's lock counts into the
 * leader). */
typedef struct fleet__metrics_s {
  uint64_t counters[FLEET_METRIC_COUNTER_MAX];
  fleet_histogram_t histograms[FLEET_METRIC_HISTOGRAM_MAX];
  /* The handle's name, in memory the primitive keeps until its free. */
  const char *name;
  size_t name_len;
} fleet__metrics_t;

static inline void fleet__metrics_add(fleet__metrics_t *m,
                                      fleet_metric_counter_t c, uint64_t n) {
  if (m != NULL)
    m->counters[c] += n;
}

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
