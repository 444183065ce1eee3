/* warmpool_int.h -- the warm pool's internals, shared by its files, each
 * of which calls only into those listed before it:
 *
 *   warmpool_works.c  the entry of the calls, the calls nobody waits for,
 *                     the works the user does (create, destroy, check);
 *   warmpool.c        the node: init, start, the primary's reconcile and
 *                     creations, the borrow and owner leases, close;
 *   warmpool_calls.c  acquire, release, resize, drain, snapshot. */
#ifndef FLEET_SRC_WARMPOOL_INT_H
#define FLEET_SRC_WARMPOOL_INT_H

#include "core/args.h"
#include "core/batcher.h"
#include "core/client.h"
#include "fleet/warmpool.h"
#include "core/handle.h"
#include "core/keys.h"
#include "core/registry.h"

typedef struct fleet__warmpool_s fleet__warmpool_t;

/* The states of a node. Every change goes through wp_set_state()
 * (warmpool.c): entering PRIMARY starts the reconcile interval, leaving it
 * stops it. */
#define FLEET__WARMPOOL_NODE_STATE_MAP(XX)                                     \
  XX(IDLE, "idle")           /* not started: calls only */                     \
  XX(STARTING, "starting")   /* the definition check is in flight */           \
  XX(CLIENT, "client")       /* started, client-only */                        \
  XX(CANDIDATE, "candidate") /* campaigning for primary */                     \
  XX(PRIMARY, "primary")     /* holds the lease, reconciles */                 \
  XX(REFUSED, "refused")     /* another live node took the owner id */         \
  XX(CLOSING, "closing")

typedef enum {
#define XX(name, str) FLEET__WARMPOOL_##name,
  FLEET__WARMPOOL_NODE_STATE_MAP(XX)
#undef XX
} fleet__warmpool_node_state_t;

const char *fleet__warmpool_node_state_name(fleet__warmpool_node_state_t state);
typedef struct fleet__warmpool_req_s fleet__warmpool_req_t;

/* Which of the user's handlers (given at start) does a work. */
enum {
  FLEET__WARMPOOL_CREATE, /* create: the primary's creation, or one on demand */
  FLEET__WARMPOOL_DESTROY, /* destroy */
  FLEET__WARMPOOL_CHECK    /* check: a health check for an acquire */
};

/* What follows the user's report of a work (fleet_warmpool_work_done()):
 * each ends with fleet__warmpool_work_free(). */
typedef void (*fleet__warmpool_work_done_fn)(fleet_warmpool_work_t *w,
                                             int status, const char *detail);

struct fleet_warmpool_work_s {
  fleet__list_t node; /* on the node's works */
  fleet__warmpool_t *wp;
  int kind;
  fleet__warmpool_work_done_fn done;
  int reported;
  int tries;      /* the primary's creation: puts sent */
  uint64_t token; /* the primary's creation: the token it runs under */
  fleet__warmpool_req_t *req; /* an acquire's creation or check; a drain's
                           destroy: the call waiting for it (NULL once the
                           call is over) */
  char id[];
};

/* A resource this node borrowed with a lease, renewed by the batcher. */
typedef struct fleet__warmpool_borrow_s {
  fleet__list_t node; /* on the node's borrows */
  fleet__warmpool_t *wp;
  fleet__batch_item_t item;
  size_t id_len;
  char id[];
} fleet__warmpool_borrow_t;

/* A call of the node on the request base: each public call's descriptor,
 * reader and fail hook sit next to it; the node's own calls, which nobody
 * waits for, have no fail hook and take the work they are about as their
 * user data. */
struct fleet__warmpool_req_s {
  fleet__req_t base;
  int tries;               /* acquire: checks failed */
  size_t pending, drained; /* drain */
  /* Release, give back: an item of the node's release calls (the
   * batcher) while `batched`, with the id and whether to destroy it. */
  fleet__batch_item_t item;
  int batched, destroy;
  char id[FLEET_WARMPOOL_ID_MAX + 1];
};

struct fleet__warmpool_s {
  fleet__handle_t base;
  fleet_warmpool_t *pub;
  fleet_warmpool_handlers_t h; /* the last start's; zeros before one */
  fleet_warmpool_options_t opts;
  char *name;
  char *owner;
  size_t owner_len;
  /* The instance nonce that the owner id's lease (T:wp:own:<owner>) and
   * this node's borrows (T:wp:who) hold, and the lease's TTL. */
  char nonce[FLEET__NONCE_LEN + 1];
  char own_ttl_str[16];
  /* The owner lease's renewal while started: an item of the borrow
   * leases' batch kind with the id "" (NULL when not renewed). */
  struct fleet__warmpool_borrow_s *own;
  int claimed;       /* started: the owner lease may be this instance's */
  fleet__key_t tag;  /* "{prefix:name}" */
  fleet__key_t wake; /* its wake-up channel */
  char fp[17];
  fleet__args_t args;

  fleet__warmpool_node_state_t state;
  fleet_leader_t leader;
  int leader_open;
  uint64_t token;     /* the last lease's, from its election */
  char lease_str[16]; /* borrow_lease_ms */
  /* min_remaining_ms and warmup_timeout_ms (a release's claim of what it
   * gives back to be destroyed), as a release call sends them. */
  char minrem_str[16], claim_str[16];

  uv_timer_t timer; /* the reconcile interval */
  /* Its entry in the process registry once started, unless client_only
   * (core/registry.h). */
  fleet__reg_t reg;
  int timer_open;
  fleet__sub_t *sub;
  int rec_inflight, rec_again;

  unsigned creating;     /* local CREATE works not reported yet */
  fleet__list_t works;   /* fleet_warmpool_work_t */
  fleet__list_t borrows; /* fleet__warmpool_borrow_t */
};

fleet__warmpool_t *fleet__warmpool_of(const fleet_warmpool_t *pool);

/* ------------------------------------------------------------------------ */
/* Calls (warmpool_works.c)                                                 */

/* What a call needs of its node (fleet__warmpool_enter()'s `needs`). */
#define FLEET__WP_NOT_REFUSED 1 /* not REFUSED (else FLEET_ECONFLICT) */
#define FLEET__WP_HANDLERS 2    /* handlers given by a start (else EINVAL) */

/* The node of `pool` if it can take a call with the callback `cb` (not
 * NULL) and has what `needs` names (FLEET__WP_* flags), with wp->args
 * begun for `nargs` arguments of which `nnums` are numbers; else NULL and
 * `*err`: FLEET_EINVAL, FLEET_ECLOSING, FLEET_ECONFLICT (refused) or
 * FLEET_ENOMEM. */
fleet__warmpool_t *fleet__warmpool_enter(const fleet_warmpool_t *pool,
                                         fleet__fn_t cb, int needs,
                                         size_t nargs, size_t nnums, int *err);

/* Sends `call` with the arguments built in wp->args, KEYS[1] the pool's
 * tag; its answer goes to `cb` (NULL for the node's own calls). Returns 0,
 * or an error and nothing is left behind (fleet__call()). */
static inline int fleet__warmpool_call(fleet__warmpool_t *wp,
                                       const fleet__call_t *call,
                                       fleet__fn_t cb, void *user_data) {
  return fleet__call_keyed(&wp->base, call, cb, user_data, &wp->tag, &wp->args);
}

/* Sends `op` for `req`, a request of fleet__call_new(), as
 * fleet__warmpool_call() does: its first call (fleet__call_send(), which gives
 * `req` back on error) or, `again`, a later one (fleet__req_send(): `req`
 * unchanged on error). */
static inline int fleet__warmpool_send(fleet__warmpool_t *wp, fleet__req_t *req,
                                       fleet__op_t op, int again) {
  fleet_bytes_t key = fleet__key_bytes(&wp->tag);

  if (again)
    return fleet__req_send(req, op, &key, 1, wp->args.argv, wp->args.argc);
  return fleet__call_send(req, &key, 1, wp->args.argv, wp->args.argc);
}

/* The reader of the node's calls whose reply only matters when it fails
 * (they have no fail hook): an error goes to the error callback. */
void fleet__warmpool_on_quiet(fleet__req_t *req, int status,
                              const fleet__reply_t *reply);

/* Sends `call`, one of those, with the arguments built in wp->args; an
 * error of the send goes to the error callback. */
void fleet__warmpool_quiet(fleet__warmpool_t *wp, const fleet__call_t *call);

/* Tells the pool that `id` is gone: destroyed here, or a reservation given
 * back. */
void fleet__warmpool_destroyed(fleet__warmpool_t *wp, const char *id);

/* ------------------------------------------------------------------------ */
/* Works (warmpool_works.c)                                                 */

/* Starts a work of `kind` on `id` for `req` (may be NULL), followed by
 * `done`: calls the user's callback, which may report it done (and so
 * free it) before this returns. Returns 0, or FLEET_ENOMEM (nothing
 * called). */
int fleet__warmpool_work_start(fleet__warmpool_t *wp, int kind,
                               fleet__warmpool_work_done_fn done,
                               const char *id, size_t len,
                               fleet__warmpool_req_t *req);

/* Ends a work: off the node's list, freed, its hold on the node gone. */
void fleet__warmpool_work_free(fleet_warmpool_work_t *w);

/* Destroys `id` here, unless a destroy of it runs here already. A drain
 * gives its `req` and a `done` that counts the destroy (after
 * fleet__warmpool_destroy_done()); else both are NULL. Returns 1 when a destroy
 * started (its `done` runs once it is reported), 0 when not (one runs
 * already, or out of memory: reported to the error callback). */
int fleet__warmpool_destroy(fleet__warmpool_t *wp, const char *id, size_t len,
                            fleet__warmpool_work_done_fn done,
                            fleet__warmpool_req_t *req);

/* What follows the report of a destroy: the pool hears of it when it
 * succeeded (else the resource stays claimed and the primary tries again
 * once the claim runs out); the work is freed. */
void fleet__warmpool_destroy_done(fleet_warmpool_work_t *w, int status,
                                  const char *detail);

/* Records a failed creation of `id` (`detail`, else the status's text)
 * for the pool's backoff; nobody waits for the answer. */
void fleet__warmpool_create_failed(fleet__warmpool_t *wp, const char *id,
                                   int status, const char *detail);

/* ------------------------------------------------------------------------ */
/* Leases (warmpool.c)                                                      */

/* The resources this node borrowed, each renewed until it is released:
 * added by an acquire, dropped by a release. */
void fleet__warmpool_borrow_add(fleet__warmpool_t *wp, const char *id,
                                size_t len);
void fleet__warmpool_borrow_drop(fleet__warmpool_t *wp, const char *id);

#endif /* FLEET_SRC_WARMPOOL_INT_H */
