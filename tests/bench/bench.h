/* bench.h -- what every fleet-bench subcommand shares: options, a client
 * on a loop, CPU accounting for this process and redis-server, latency
 * percentiles and the JSON-line output. */
#ifndef FLEET_BENCH_H
#define FLEET_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "fleet.h"

/* Options common to every subcommand. */
typedef struct {
  const char *url;    /* --url, default memory:// */
  const char *prefix; /* --prefix, default "fleet-bench-<pid>" */
  double seconds;     /* --seconds: time budget per measurement, default 2 */
  int argc;           /* what is left for the subcommand */
  char **argv;
} bench_opts_t;

/* Prints one result on stdout:
 * {"bench":"fleet-<bench>","metric":"<metric>","value":<v>,"unit":"<unit>"} */
void bench_emit(const char *bench, const char *metric, double value,
                const char *unit);

/* Opens a client on `loop` and runs the loop until it is ready. Returns 0,
 * or prints the reason on stderr and returns the error. */
int bench_client_open(uv_loop_t *loop, fleet_client_t *client,
                      const bench_opts_t *o);

/* Closes the client and runs the loop until it is closed. */
void bench_client_close(uv_loop_t *loop, fleet_client_t *client);

/* CPU time used so far, in microseconds: by this process (getrusage) and
 * by the redis-server behind `url` (INFO cpu used_cpu_sys + used_cpu_user,
 * as the Node anchors of sidebyside.sh measure it); -1 for the server on
 * memory:// or when unknown. */
typedef struct {
  int64_t self_us;
  int64_t server_us;
  uint64_t wall_ns;
  /* From INFO commandstats, -1 when unknown: script calls (EVALSHA and
   * EVAL), and the other commands, those the scripts ran included (INFO
   * and CONFIG left out). Counts, so steadier than CPU on a busy machine. */
  int64_t scripts;
  int64_t commands;
  /* With FLEET_BENCH_CMDSTATS set, INFO commandstats as sampled (never
   * freed: a diagnostic), and bench_emit_rates prints each command's calls
   * and usec per op between two samples on stderr; else NULL. */
  char *stats;
} bench_cpu_t;

/* Connects, once per process, to the server behind `url` for the samples
 * below and returns its pid from INFO server; 0 on memory:// or when the
 * server cannot be reached. Call before sampling. */
int bench_server_pid(const char *url);
void bench_cpu_sample(bench_cpu_t *s, int server_pid);

/* The server's INFO memory used_memory, in bytes; -1 when unknown. */
int64_t bench_server_memory(int server_pid);

/* Emits <label>_ops_per_s, <label>_client_cpu_us_per_op and (on Redis)
 * <label>_server_cpu_us_per_op, <label>_scripts_per_op and
 * <label>_commands_per_op for `ops` operations between two samples. */
void bench_emit_rates(const char *bench, const char *label, uint64_t ops,
                      const bench_cpu_t *start, const bench_cpu_t *end);

/* Latency samples, in nanoseconds. */
typedef struct {
  uint64_t *ns;
  size_t n;
  size_t cap;
} bench_lat_t;

void bench_lat_add(bench_lat_t *l, uint64_t ns);
/* The p-th percentile (0 < p <= 100), in microseconds; sorts the samples. */
double bench_lat_pct_us(bench_lat_t *l, double p);
/* Emits <label>_p50_us and <label>_p99_us, then forgets the samples. */
void bench_lat_emit(const char *bench, const char *label, bench_lat_t *l);
void bench_lat_free(bench_lat_t *l);

/* A closed-loop driver: keeps `inflight` operations going until `max_ops`
 * were started or `seconds` passed, recording each one's latency. The
 * subcommand supplies `start`, which issues one operation for `slot` and
 * returns 0 (then the operation's callback calls bench_slot_done() exactly
 * once) or an error (the run stops). */
typedef struct bench_driver_s bench_driver_t;

typedef struct {
  bench_driver_t *driver;
  uint64_t t0;
  int index;
} bench_slot_t;

struct bench_driver_s {
  uv_loop_t *loop;
  int inflight;
  uint64_t max_ops;
  double seconds;
  int (*start)(bench_slot_t *slot);
  void *ctx; /* for the subcommand */
  /* Results. */
  uint64_t started, done, failed;
  int first_error;
  bench_lat_t lat;
  /* Private. */
  uint64_t deadline_ns;
  bench_slot_t *slots;
};

/* Runs the driver to the end; returns the first error a start or an
 * operation gave, or 0. */
int bench_drive(bench_driver_t *d);

/* Called once per operation by the subcommand's callback. */
void bench_slot_done(bench_slot_t *slot, int status);

/* Parses a positive integer flag value; exits with a message if it is not
 * one. */
long bench_parse_long(const char *flag, const char *value);

/* The subcommands, one per bench_<name>.c, listed in fleet-bench.c. */
int bench_ping(const bench_opts_t *o);
int bench_queue(const bench_opts_t *o);
int bench_lock(const bench_opts_t *o);
int bench_store(const bench_opts_t *o);
int bench_pool(const bench_opts_t *o);
int bench_cron(const bench_opts_t *o);
int bench_warmpool(const bench_opts_t *o);

#endif /* FLEET_BENCH_H */
