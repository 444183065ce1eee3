/* registry.h -- the process registry (docs/registry.md): the queue
 * workers, pool nodes, cron schedulers and warm-pool nodes that run,
 * each an entry with a TTL under the client's prefix, refreshed by the
 * client's batcher (one call per client for all its entries, on the
 * batcher's one timer) and removed when its handle stops or closes.
 * fleet_workers_list() (fleet/client.h) reads it.
 *
 * A registry write that fails never stops the handle that registered: it
 * is logged once (and again only after a write succeeded), never reported
 * to an error callback. */
#ifndef FLEET_SRC_REGISTRY_H
#define FLEET_SRC_REGISTRY_H

#include <stdint.h>

#include "batcher.h"
#include "handle.h"

/* The beat period of an entry is the handle's own heartbeat period held
 * to these bounds, in ms; its TTL is three periods. */
#define FLEET__REG_PERIOD_MIN_MS 2000
#define FLEET__REG_PERIOD_MAX_MS 5000

/* The most job ids one entry lists (the count is always given). */
#define FLEET__REG_JOBS_MAX FLEET_WORKER_JOBS_LISTED

typedef struct fleet__reg_s fleet__reg_t;

/* Tells the registry, with fleet__reg_job(), the ids of the jobs the
 * handle holds now: called before each beat is sent. */
typedef void (*fleet__reg_jobs_fn)(fleet__reg_t *r);

/* An entry, embedded in the primitive's struct; zero it before first use
 * (fleet__reg_start() on a zeroed one, fleet__reg_stop() on any). */
struct fleet__reg_s {
  fleet__batch_item_t item;
  fleet__handle_t *h;
  fleet__reg_jobs_fn jobs;
  /* "<kind>\0<name>\0<id>\0<instance nonce>": two instances of one id
   * (a refused duplicate) never touch each other's entry. */
  char *member;
  size_t member_len;
  char *fixed; /* "<kind>\0<id>\0<name>\0<host>\0<pid>" */
  size_t fixed_len;
  char *buf; /* the details of the beat being sent */
  size_t buf_len, buf_cap;
  char *ids; /* "\0<id>" per listed job, during a fill */
  size_t ids_len, ids_cap;
  uint32_t njobs;
  int ids_oom;
  fleet__key_t tag; /* "{<prefix>:}" */
  char ttl[12];
  char started[24]; /* "" until the first beat's answer */
  uint32_t period_ms;
  int on;     /* registered: beats go out */
  int sent;   /* a beat went out: the entry may exist */
  int warned; /* a failure was logged since the last success */
};

/* Registers the handle `h` as an entry of `kind` ("queue", "pool",
 * "cron", "warmpool") named `name` (what it serves) with the identity
 * `id`, beating every `period_ms` (held to the bounds above); `jobs` is
 * NULL or the hook that lists the jobs it holds. The first beat goes out
 * at the end of this loop phase. Does nothing when `r` is registered
 * already. Returns 0 or FLEET_ENOMEM; a caller goes on without the
 * registry on error (the failure is logged). */
int fleet__reg_start(fleet__reg_t *r, fleet__handle_t *h, const char *kind,
                     const char *id, size_t id_len, const char *name,
                     size_t name_len, uint32_t period_ms,
                     fleet__reg_jobs_fn jobs);

/* Adds one job id to the beat being built (from the jobs hook): the
 * first FLEET__REG_JOBS_MAX are listed, all are counted. */
void fleet__reg_job(fleet__reg_t *r, const char *id, size_t len);

/* Unregisters: no more beats, and a beat that went out is undone by one
 * removal call on the handle (which keeps the handle open until its
 * reply). Frees what the entry holds. Safe on an entry that is not
 * registered, and from a handle's close hook. */
void fleet__reg_stop(fleet__reg_t *r);

#endif /* FLEET_SRC_REGISTRY_H */
