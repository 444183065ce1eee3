/* cron_sched_int.h -- the cron scheduler's internals, shared by
 * src/cron/cron_sched.c (the handle, the registry copy, the timer and the
 * fires) and src/cron/cron_registry.c (the registry calls the user makes). */
#ifndef FLEET_SRC_CRON_SCHED_INT_H
#define FLEET_SRC_CRON_SCHED_INT_H

#include "core/args.h"
#include "core/client.h"
#include "fleet/cron.h"
#include "core/handle.h"
#include "core/keys.h"
#include "core/registry.h"

/* One definition of the scheduler's copy of the registry. */
typedef struct fleet__cron_def_s {
  char *key;
  size_t key_len;
  char *expr, *tz, *queue; /* queue "" for a callback definition */
  char *pool;              /* "" unless a pool definition */
  char *payload, *meta;
  size_t payload_len, meta_len;
  int enabled;
  int catch_up;
  uint32_t catch_up_max;
  uint64_t catch_up_window_ms;
  int64_t created_ms, updated_ms, from_ms;
  int64_t last_fire_ms; /* the registry's hint, -1: none */
  uint64_t last_token;
  int64_t start_ms, end_ms;     /* 0: no bound */
  uint64_t max_fires;           /* 0: no limit */
  uint64_t fired;               /* the fires counted (hint, or the script's) */
  int64_t done_ms;              /* the limit was reached (0: not known to be) */
  fleet_cron_t *cron;           /* NULL: does not parse here */
  fleet_pool_node_t *pool_node; /* a pool definition's dispatcher, or NULL */
  fleet__key_t tag;             /* the occurrences' tag */
  fleet__key_t occ_key;         /* a callback definition's S:occ, once built */
  int64_t cursor;               /* the latest occurrence handled */
  int64_t next;                 /* the next occurrence after cursor, -1: none */
  int64_t retry_at; /* after a failed fire: not before (server ms) */
  uint32_t failures;
  int busy; /* a fire call is out */
  int refs; /* the registry copy, and each fire call out */
  int gone; /* no longer in the registry copy */
} fleet__cron_def_t;

typedef struct fleet__cron_fire_s fleet__cron_fire_t;

/* A worker pool the scheduler dispatches to (fleet_cron_scheduler_add_pool). */
typedef struct {
  char *name;
  fleet_pool_node_t *node;
} fleet__cron_pool_t;

typedef struct fleet__cron_s {
  fleet__handle_t base;
  fleet_cron_scheduler_t *pub;
  char *ns, *node;
  size_t ns_len, node_len;
  fleet_cron_scheduler_options_t opts;
  fleet__key_t reg;  /* the registry's tag */
  fleet__key_t chan; /* its change channel */
  fleet__args_t args;
  /* The registry copy, sorted by key. */
  fleet__cron_def_t **defs;
  size_t ndefs, defs_cap;
  uint64_t rev;
  int have_rev;
  int loading, reload_again;
  int started;
  fleet_cron_fire_cb cb;
  uv_timer_t timer, check; /* closed by the base */
  int64_t armed_at;        /* server ms the timer is armed for, -1: not */
  fleet__sub_t *sub;       /* the change channel (fleet__handle_subscribe) */
  /* The server clock: srv_ms read when the loop time was srv_at. */
  int64_t srv_ms;
  uint64_t srv_at;
  int have_clock;
  /* uv_hrtime() minus the server's clock (ns) is at most `off`, a bound
   * read at uv_hrtime() `off_at` (cron_sched.c, sched_set_clock()). */
  int64_t off;
  uint64_t off_at;
  int have_off;
  fleet__list_t fires; /* given to the user, not completed */
  fleet__cron_pool_t *pools;
  size_t npools;
  fleet__list_t dispatches; /* pool dispatches not answered yet */
  fleet__list_t batched;    /* fires on the batcher (cron_sched.c) */
  /* Claiming ahead (docs/cron.md): how far ahead of their time the next
   * timer run claims callback occurrences (ms), the model of how long a
   * burst of claims takes (fixed ms + ms per definition), the burst out
   * now (its start, loop ms; definitions sent; answers awaited), and the
   * occurrences claimed ahead, by fire time, with their timer. */
  int64_t lead;
  double burst_fixed_ms, burst_def_ms;
  uint64_t burst_t0;
  size_t burst_n, burst_left;
  fleet__list_t held;
  uv_timer_t hold_timer; /* closed by the base */
  char ahead_s[24];      /* opts.claim_ahead_ms as an argument */
  char keep_s[24];       /* opts.keep_count as an argument */
  char age_s[24];        /* opts.keep_age_ms as an argument */
  fleet__rng_t rng;
  /* Its entry in the process registry once started (core/registry.h). */
  fleet__reg_t entry;
} fleet__cron_sched_t;

/* Every request of a scheduler: a fire call (def, times), a history
 * (limit), or another call (nothing beyond the base). */
typedef struct {
  fleet__req_t base;
  fleet__cron_def_t *def;
  int64_t *times; /* the occurrences of a fire call, increasing */
  size_t ntimes;
  uint32_t limit; /* history: the most entries */
  int64_t at;     /* trigger: the occurrence's fire ms */
} fleet__cron_req_t;

/* Sends `call` on the tag `tag` with the arguments built in s->args; its
 * answer goes to `cb` (NULL: nobody waits). Returns 0 or an error
 * (fleet__call()). */
int fleet__cron_call(fleet__cron_sched_t *s, const fleet__call_t *call,
                     const fleet__key_t *tag, fleet__fn_t cb, void *user_data);

/* Records the registry's "last fired" hint of `d` (`fire_ms` -1: nothing
 * fired), the count of fires and, with `done`, that the fire limit is
 * reached: a quiet call on the batcher (cron_mark.lua), its failure told
 * to the handle's error hook. */
void fleet__cron_mark(fleet__cron_sched_t *s, fleet__cron_def_t *d,
                      int64_t fire_ms, uint64_t token, uint64_t fired,
                      int done);

/* Builds the occurrences' tag of a definition into `tag`. */
int fleet__cron_def_tag(fleet__cron_sched_t *s, const char *key, size_t key_len,
                        const char *queue, fleet__key_t *tag);

/* A definition read from a CRON_LIST triple (key, fields, last record),
 * with one reference; NULL and *err set (FLEET_EPROTO, FLEET_ENOMEM) when
 * it cannot be read. The expression is not parsed here. */
fleet__cron_def_t *fleet__cron_def_parse(const fleet__reply_t *key,
                                         const fleet__reply_t *fields,
                                         const fleet__reply_t *last, int *err);
void fleet__cron_def_unref(fleet__cron_def_t *d);

/* The first occurrence of `d` (with the expression `cron`) strictly after
 * `after_ms` within its bounds: not before its start, not after its end,
 * none once it is done. Returns 0 (*next_ms set) or FLEET_ENOTFOUND. */
int fleet__cron_def_next(const fleet__cron_def_t *d, const fleet_cron_t *cron,
                         int64_t after_ms, int64_t *next_ms);

/* Orders definition pointers by key (qsort, bsearch). */
int fleet__cron_def_cmp(const void *a, const void *b);

/* The public view of a definition (pointing into `d`); next_due_ms from
 * `now_ms`, parsing the expression when `d` has none parsed. */
void fleet__cron_def_view(const fleet__cron_def_t *d, int64_t now_ms,
                          fleet_cron_def_t *out);

#endif /* FLEET_SRC_CRON_SCHED_INT_H */
