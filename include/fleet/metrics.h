/* SPDX-License-Identifier: Apache-2.0 */
/* fleet/metrics.h -- per-handle counters and latency histograms, and their
 * Prometheus text exposition.
 *
 * Every handle keeps a metrics block from its init to its close: counters
 * and histograms with fixed log-scale buckets, updated in place (nothing is
 * allocated per observation). Which metrics move depends on the handle:
 *
 *   queue           jobs_enqueued_total
 *   worker          jobs_claimed_total, jobs_completed_total,
 *                   jobs_failed_total, jobs_retried_total,
 *                   jobs_recovered_total, jobs_lost_total,
 *                   job_claim_to_complete_seconds, job_wait_seconds
 *   lock, leader    lock_acquisitions_total, lock_renewals_total,
 *                   lock_losses_total
 *   pool_node       pool_dispatches_total
 *   cron_scheduler  cron_fires_total, cron_lateness_seconds
 *
 * See docs/metrics.md for what each one counts. */
#ifndef FLEET_METRICS_H
#define FLEET_METRICS_H

#include "fleet/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The counters: enum name, exposition name (after "fleet_"), help text. */
#define FLEET_METRIC_COUNTER_MAP(XX)                                           \
  XX(JOBS_ENQUEUED, "jobs_enqueued_total", "Jobs accepted by enqueue calls.")  \
  XX(JOBS_CLAIMED, "jobs_claimed_total", "Jobs claimed by the worker.")        \
  XX(JOBS_COMPLETED, "jobs_completed_total",                                   \
     "Completions of the worker's jobs accepted by the backend.")              \
  XX(JOBS_FAILED, "jobs_failed_total",                                         \
     "Failures of the worker's jobs accepted by the backend.")                 \
  XX(JOBS_RETRIED, "jobs_retried_total",                                       \
     "Failed jobs of the worker scheduled for another attempt.")               \
  XX(JOBS_RECOVERED, "jobs_recovered_total",                                   \
     "Stale claims the worker's recovery requeued or buried.")                 \
  XX(JOBS_LOST, "jobs_lost_total",                                             \
     "Claims lost while the handler had the job.")                             \
  XX(LOCK_ACQUISITIONS, "lock_acquisitions_total", "Leases acquired.")         \
  XX(LOCK_RENEWALS, "lock_renewals_total", "Lease renewals confirmed.")        \
  XX(LOCK_LOSSES, "lock_losses_total", "Held leases lost.")                    \
  XX(POOL_DISPATCHES, "pool_dispatches_total",                                 \
     "Dispatches the pool accepted.")                                          \
  XX(CRON_FIRES, "cron_fires_total", "Cron occurrences handed to the user.")

/* The histograms, in seconds. */
#define FLEET_METRIC_HISTOGRAM_MAP(XX)                                         \
  XX(JOB_LATENCY, "job_claim_to_complete_seconds",                             \
     "Time from a job's claim to its accepted completion.")                    \
  XX(CRON_LATENESS, "cron_lateness_seconds",                                   \
     "Time from a cron occurrence's scheduled time to its dispatch.")          \
  XX(JOB_WAIT, "job_wait_seconds",                                             \
     "Time from a job's enqueue to its first claim.")

typedef enum {
#define FLEET__METRIC_ENUM(name, str, help) FLEET_METRIC_##name,
  FLEET_METRIC_COUNTER_MAP(FLEET__METRIC_ENUM) FLEET_METRIC_COUNTER_MAX
#undef FLEET__METRIC_ENUM
} fleet_metric_counter_t;

typedef enum {
#define FLEET__METRIC_ENUM(name, str, help) FLEET_METRIC_##name,
  FLEET_METRIC_HISTOGRAM_MAP(FLEET__METRIC_ENUM) FLEET_METRIC_HISTOGRAM_MAX
#undef FLEET__METRIC_ENUM
} fleet_metric_histogram_t;

/* Histogram buckets: bucket i (0 <= i < FLEET_METRICS_BUCKETS) counts the
 * observations above the bound of bucket i-1 and at most
 * fleet_metrics_bucket_bound_us(i) = 1 ms * 2^i (1 ms .. 524.288 s); the
 * last slot, buckets[FLEET_METRICS_BUCKETS], counts those above it. The
 * counts are per bucket, not cumulative; their sum is `count`. */
#define FLEET_METRICS_BUCKETS 20

typedef struct {
  uint64_t count;
  uint64_t sum_us; /* sum of the observations, microseconds */
  uint64_t buckets[FLEET_METRICS_BUCKETS + 1];
} fleet_histogram_t;

/* A copy of one handle's metrics. */
typedef struct {
  fleet_handle_type_t type;
  /* The handle's name (queue, lock, leader, pool or cron namespace), not
   * NUL-terminated; valid while the handle is open. */
  const char *name;
  size_t name_len;
  uint64_t counters[FLEET_METRIC_COUNTER_MAX];
  fleet_histogram_t histograms[FLEET_METRIC_HISTOGRAM_MAX];
} fleet_metrics_t;

/* Copies the metrics of `handle` into `out`. Returns 0, or FLEET_EINVAL
 * (NULL, or not initialized). Works on a closing handle. */
FLEET_EXTERN int fleet_metrics_read(const fleet_handle_t *handle,
                                    fleet_metrics_t *out);

/* The name of a counter or histogram without the "fleet_" prefix
 * ("jobs_completed_total"); "unknown" when out of range. */
FLEET_EXTERN const char *fleet_metric_counter_name(fleet_metric_counter_t m);
FLEET_EXTERN const char *
fleet_metric_histogram_name(fleet_metric_histogram_t m);

/* The upper bound of bucket `i`, in microseconds; UINT64_MAX for
 * i >= FLEET_METRICS_BUCKETS. */
FLEET_EXTERN uint64_t fleet_metrics_bucket_bound_us(unsigned i);

/* Renders the metrics of every handle of `client` (as fleet_client_walk()
 * shows them) in the Prometheus text exposition format 0.0.4:
 *
 *   # HELP fleet_jobs_completed_total Completions of ...
 *   # TYPE fleet_jobs_completed_total counter
 *   fleet_jobs_completed_total{kind="queue",name="emails"} 42
 *
 * It begins with fleet_build_info{version="..."} 1. Labels: `kind`, the
 * handle's type (queue and worker "queue", lock "lock", leader "leader",
 * pool node "pool", cron scheduler "cron"), and its name as `name`, a cron
 * scheduler's namespace as `cron_namespace`; the counters of a worker's
 * jobs (claimed, completed, failed, retried, lost) also have `type`, the
 * job's type: the first 16 types a handle sees, then "_other" (see
 * docs/metrics.md, "Job types"). Label values are escaped (\\, \", \n).
 * Handles with the same kind and name (two workers on one queue) are
 * summed into one series. Histograms come as _bucket{le="..."}
 * (cumulative, le="+Inf" last), _sum (seconds) and _count. A family
 * appears only when a handle it applies to exists.
 *
 * On success `*text` is a NUL-terminated string of `*len` bytes to be
 * freed with fleet_metrics_free(). Returns 0, FLEET_EINVAL (NULL argument
 * or closed client) or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_metrics_prometheus(fleet_client_t *client, char **text,
                                          size_t *len);

/* Frees a text of fleet_metrics_prometheus(); NULL is fine. */
FLEET_EXTERN void fleet_metrics_free(char *text);

#ifdef __cplusplus
}
#endif

#endif /* FLEET_METRICS_H */
