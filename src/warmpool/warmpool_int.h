/* warmpool_int.h -- the warm pool's internals, shared by warmpool.c (the
 * node: start, the primary's reconcile, the works, close) and
 * warmpool_calls.c (acquire, release, resize, drain, snapshot, borrow
 * leases). */
#ifndef FLEET_SRC_WARMPOOL_INT_H
#define FLEET_SRC_WARMPOOL_INT_H

#include "core/args.h"
#include "core/batcher.h"
#include "core/client.h"
#include "fleet/warmpool.h"
#include "core/handle.h"
#include "core/keys.h"

typedef struct fleet__warmpool_s fleet__warmpool_t;

/* The states of a node. Every change goes through wp_set_state()
 * (warmpool.c): entering PRIMARY starts the reconcile interval, leaving it
 * stops it. */
#define FLEET__WP_STATE_MAP(XX)                                                \
  XX(IDLE, "idle")           /* not started: calls only */                     \
  XX(STARTING, "starting")   /* the definition check is in flight */           \
  XX(CLIENT, "client")       /* started, client-only */                        \
  XX(CANDIDATE, "candidate") /* campaigning for primary */                     \
  XX(PRIMARY, "primary")     /* holds the lease, reconciles */                 \
  XX(REFUSED, "refused")     /* another live node took the owner id */         \
  XX(CLOSING, "closing")

typedef enum {
#define XX(name, str) FLEET__WP_##name,
  FLEET__WP_STATE_MAP(XX)
#undef XX
} fleet__wp_state_t;

const char *fleet__wp_state_name(fleet__wp_state_t state);
typedef struct fleet__wp_req_s fleet__wp_req_t;

/* The kinds of work and of request. */
enum {
  FLEET__WP_CREATE,  /* the primary's creation */
  FLEET__WP_DIRECT,  /* a creation on demand for an acquire */
  FLEET__WP_DESTROY, /* a destruction */
  FLEET__WP_CHECK    /* a health check for an acquire */
};

enum {
  FLEET__WP_REQ_BG, /* the node's own call: nobody waits */
  FLEET__WP_REQ_START,
  FLEET__WP_REQ_ACQUIRE,
  FLEET__WP_REQ_DIRECT, /* an acquire reserving a creation on demand */
  FLEET__WP_REQ_RELEASE,
  FLEET__WP_REQ_RESIZE,
  FLEET__WP_REQ_DRAIN,
  FLEET__WP_REQ_SNAPSHOT
};

struct fleet_warmpool_work_s {
  fleet__list_t node; /* on the node's works */
  fleet__warmpool_t *wp;
  int kind;
  int reported;
  int tries;            /* CREATE: puts sent */
  uint64_t token;       /* CREATE: the primary's token it runs under */
  fleet__wp_req_t *req; /* DIRECT, CHECK: the acquire; DESTROY: a drain */
  char id[];
};

/* A resource this node borrowed with a lease, renewed by the batcher. */
typedef struct fleet__wp_borrow_s {
  fleet__list_t node; /* on the node's borrows */
  fleet__warmpool_t *wp;
  fleet__batch_item_t item;
  size_t id_len;
  char id[];
} fleet__wp_borrow_t;

struct fleet__wp_req_s {
  fleet__req_t base;
  int kind;
  union {
    fleet_status_cb status;
    fleet_warmpool_acquire_cb acquire;
    fleet_warmpool_drain_cb drain;
    fleet_warmpool_snapshot_cb snapshot;
  } cb;
  fleet_warmpool_work_t *work;        /* BG: the work the call is about */
  int tries;                          /* ACQUIRE: checks failed */
  size_t pending, drained;            /* DRAIN */
  char id[FLEET_WARMPOOL_ID_MAX + 1]; /* RELEASE */
};

struct fleet__warmpool_s {
  fleet__handle_t base;
  fleet_warmpool_t *pub;
  fleet_warmpool_callbacks_t cbs;
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
  struct fleet__wp_borrow_s *own;
  int claimed;       /* started: the owner lease may be this instance's */
  fleet__key_t tag;  /* "{prefix:name}" */
  fleet__key_t wake; /* its wake-up channel */
  char fp[17];
  fleet__args_t args;

  fleet__wp_state_t state;
  fleet_leader_t leader;
  int leader_open;
  uint64_t token;     /* the last lease's, from its election */
  char lease_str[16]; /* borrow_lease_ms */

  uv_timer_t timer; /* the reconcile interval */
  int timer_open;
  fleet__sub_t *sub;
  int rec_inflight, rec_again;

  unsigned creating;     /* local CREATE works not reported yet */
  fleet__list_t works;   /* fleet_warmpool_work_t */
  fleet__list_t borrows; /* fleet__wp_borrow_t */
};

fleet__warmpool_t *fleet__warmpool_of(const fleet_warmpool_t *pool);

/* Sends op with the node's built args on `req` (KEYS[1] the tag). On
 * error a new request is given back. */
int fleet__wp_send(fleet__warmpool_t *wp, fleet__wp_req_t *req, fleet__op_t op);

/* A background request whose reply goes to `fn`, about `work` (may be
 * NULL); NULL when out of memory. */
fleet__wp_req_t *fleet__wp_bg(fleet__warmpool_t *wp, fleet__req_reply_fn fn,
                              fleet_warmpool_work_t *work);

/* Starts a work of `kind` on `id`: calls the user's callback, which may
 * report it done (and so free it) before this returns. Returns 0, or
 * FLEET_ENOMEM (nothing called). */
int fleet__wp_work_start(fleet__warmpool_t *wp, int kind, const char *id,
                         size_t len, fleet__wp_req_t *req);

/* Ends a work: off the node's list, freed, its hold on the node gone. */
void fleet__wp_work_free(fleet_warmpool_work_t *w);

/* Destroys `id` here, unless a destroy of it runs here already; for a
 * drain, `req` counts it. */
void fleet__wp_destroy(fleet__warmpool_t *wp, const char *id, size_t len,
                       fleet__wp_req_t *req);

/* Asks the primary (if this node is it) to reconcile now. */
void fleet__wp_reconcile(fleet__warmpool_t *wp);

/* A user request of `kind` (its reply goes to warmpool_calls.c, which
 * hands a start's to fleet__wp_start_reply()); NULL when out of memory. */
fleet__wp_req_t *fleet__wp_req(fleet__warmpool_t *wp, int kind,
                               void *user_data);
/* The same, with wp->args begun for `argc` arguments of which `nint` are
 * numbers (fleet__args_begin()); NULL when out of memory. */
fleet__wp_req_t *fleet__wp_req_args(fleet__warmpool_t *wp, int kind,
                                    void *user_data, size_t argc, size_t nint);
void fleet__wp_start_reply(fleet__wp_req_t *req, int status,
                           const fleet__reply_t *reply);

/* The work-done hooks of warmpool_calls.c. */
void fleet__wp_direct_done(fleet_warmpool_work_t *w, int status);
void fleet__wp_check_done(fleet_warmpool_work_t *w, int status);
void fleet__wp_drain_step(fleet__wp_req_t *req, int destroyed);

/* The owner id's lease: renewed from a successful start until the node
 * closes or is refused. */
void fleet__wp_own_start(fleet__warmpool_t *wp);
void fleet__wp_own_stop(fleet__warmpool_t *wp);
/* Another live instance took this node's owner id (warmpool.c): the node
 * stops acting under it for good. */
void fleet__wp_refuse(fleet__warmpool_t *wp);

/* Borrow leases. */
void fleet__wp_borrow_add(fleet__warmpool_t *wp, const char *id, size_t len);
void fleet__wp_borrow_drop(fleet__warmpool_t *wp, const char *id);
void fleet__wp_borrow_clear(fleet__warmpool_t *wp);

#endif /* FLEET_SRC_WARMPOOL_INT_H */
