/* handle.h -- the handle base and the request base every primitive is
 * built on (libuv's uv_handle_t / uv_req_t idea).
 *
 * A primitive's internal struct starts with a fleet__handle_t; its public
 * struct starts with FLEET_HANDLE_FIELDS. The base registers the handle
 * with its client (which then refuses to close), closes it in one way for
 * every primitive, and keeps the requests the user waits for:
 *
 *   fleet__handle_init()   registers; the public handle points at it.
 *                          Nothing is put on the loop.
 *   fleet__handle_close()  runs the primitive's `close` hook at once (stop
 *                          timers, give leases back), then, on a later loop
 *                          iteration, completes every pending request with
 *                          FLEET_ECANCELED. Once no backend call is
 *                          outstanding and no hold is left, the handle
 *                          leaves its client, the primitive's `free` hook
 *                          runs and then the close callback.
 *
 * A request (fleet__req_t, first member of the primitive's request struct)
 * is one call the user waits for. It may send any number of backend calls
 * in turn, one at a time. Requests are pooled per handle. The rules:
 *
 *   - the user callback of a request runs exactly once: from the
 *     primitive's `on_reply` (which calls fleet__req_done() first), or from
 *     its `cancel` with FLEET_ECANCELED when the handle closes;
 *   - a reply that comes for a request that is done or cancelled is
 *     dropped, and the request goes back to the pool then; so is a reply
 *     that comes after the close call but before the cancellation;
 *   - a backend call with nobody waiting (a quiet release, say) is a
 *     request without a `cancel` hook: it keeps the handle open until its
 *     reply, but nobody is told when the handle closes. */
#ifndef FLEET_SRC_HANDLE_H
#define FLEET_SRC_HANDLE_H

#include "backend.h"
#include "phase_end.h"
#include "common/list.h"
#include "internal.h"
#include "keys.h"
#include "metrics_int.h"

typedef struct fleet__handle_s fleet__handle_t;

/* The most subscriptions one handle holds at once. */
#define FLEET__HANDLE_SUBS_MAX 4
typedef struct fleet__req_s fleet__req_t;

/* What a primitive tells the base about its handles. */
typedef struct {
  fleet_handle_type_t type;
  /* The size of the primitive's request struct (a fleet__req_t first). */
  size_t req_size;
  /* Optional: the close has been asked for; stop everything that would
   * start new work (timers, renewals) and start closing the primitive's
   * own libuv handles, holding the handle (fleet__handle_hold) until each
   * has closed. Runs inside the close call: no user callback here. */
  void (*close)(fleet__handle_t *h);
  /* Optional: runs on the loop iteration after the close, before the
   * pending requests are cancelled: the place to run the callbacks the
   * primitive owes outside of requests. */
  void (*closing)(fleet__handle_t *h);
  /* Frees the primitive's struct (which holds the base): the last thing
   * before the close callback. */
  void (*free)(fleet__handle_t *h);
} fleet__handle_vt_t;

struct fleet__handle_s {
  const fleet__handle_vt_t *vt;
  fleet_handle_t *pub;
  struct fleet__client_s *client;
  uv_loop_t *loop;
  fleet__list_t node; /* on the client's handles */
  fleet__list_t live; /* requests whose user waits */
  fleet__list_t pool; /* requests to reuse */
  size_t outstanding; /* backend calls not answered yet */
  size_t holds;       /* other reasons to stay open */
  int internal;       /* made by another handle: not walked */
  /* The handle that made this one (fleet__handle_adopt()), held open
   * while this one closes; NULL for the user's handles. */
  struct fleet__handle_s *parent;
  int closing;
  int cancelled; /* the deferred cancellation ran */
  fleet_close_cb close_cb;
  uv_timer_t defer; /* made at close, never started: defers to the next
                       loop iteration */
  /* The error callback of a handle that works in the background (NULL
   * when it has none): every failure that no request reports reaches it. */
  fleet_error_cb error_cb;
  /* Where the handle's events are counted (src/core/metrics.c): &mblock, or
   * the block of the handle that made this one (a leader's lock). */
  fleet__metrics_t *metrics;
  fleet__metrics_t mblock;
  /* Where the primitive keeps its subscriptions (fleet__handle_subscribe):
   * the base ends those still on at close. */
  fleet__sub_t **subs[FLEET__HANDLE_SUBS_MAX];
};

/* How a request reads a reply: `status` 0 and the reply, or an error and
 * NULL. It either sends the next call of the request, or finishes it with
 * fleet__req_done() before running the user callback. */
typedef void (*fleet__req_reply_fn)(fleet__req_t *req, int status,
                                    const fleet__reply_t *reply);

/* Runs the request's user callback with `status` (FLEET_ECANCELED) and no
 * results. The request is done already and must not be touched after. */
typedef void (*fleet__req_cancel_fn)(fleet__req_t *req, int status);

/* A user callback of any type: the hooks of its call cast it back. */
typedef void (*fleet__fn_t)(void);

/* A call (hiredis's one callback record, libuv's typed request): one
 * static descriptor per public call, which says what its first backend
 * call sends and how the call's answer is read and told. The request base
 * does the rest (sending, routing the replies, the cancellation at close),
 * so that a primitive writes no kind enum, callback union, hub switch or
 * cancel hook of its own.
 *
 *   op    the op fleet__call_send() sends (a call made of several backend
 *         calls sends the later ones with fleet__req_send()).
 *   read  reads each reply: sends the request's next backend call, or
 *         finishes the request (fleet__req_done()) and runs its callback.
 *         A call whose later step replies in another shape points
 *         `req->on_reply` at that step's reader before sending it (the
 *         cron history's log read, the warm pool's create on demand).
 *   fail  runs the user callback `req->cb` with an error and no results:
 *         at close (FLEET_ECANCELED) and from fleet__call_finish(). It is
 *         called after the request is done, so it copies what it needs
 *         before the callback runs. NULL: nobody waits for the call (a
 *         quiet release), which keeps its handle open until its reply but
 *         is told nothing at close.
 *
 * fleet__call_fail_status() is the `fail` of every call whose callback is
 * a fleet_status_cb. */
typedef struct fleet__call_s {
  const char *name; /* "queue.claim": for logs and tests */
  fleet__op_t op;
  fleet__req_reply_fn read;
  fleet__req_cancel_fn fail;
} fleet__call_t;

struct fleet__req_s {
  fleet__list_t node; /* on the live list, or in the pool */
  fleet__handle_t *handle;
  const fleet__call_t *call; /* NULL: a request of fleet__req_new() */
  fleet__fn_t cb;            /* the user callback (of the call's type) */
  fleet__req_reply_fn on_reply;
  fleet__req_cancel_fn cancel; /* NULL: nobody waits */
  void *user_data;
  int inflight; /* a backend call is out */
  int done;     /* finished or cancelled: a late reply is dropped */
};

/* ------------------------------------------------------------------------ */
/* Handles                                                                  */

/* Initializes the base of a primitive's handle on `client` and registers
 * it. `pub` is the public handle (type and internal_ are set here). The
 * base is zeroed first: set fields such as error_cb after this call.
 * Returns 0, FLEET_EINVAL (no client), FLEET_ECLOSING (the client is
 * closing). Nothing is allocated. */
int fleet__handle_init(fleet__handle_t *h, const fleet__handle_vt_t *vt,
                       fleet_client_t *client, fleet_handle_t *pub);

/* Makes `child`, a handle `parent` made for itself (a worker's queue, a
 * leader's lock, a schedule's ticker, a warm pool's leader), internal (the
 * client's close does not wait for it, and fleet_client_walk() never shows
 * it) and a child of `parent`: once the child's
 * close starts, whoever starts it, `parent` stays open until the child
 * has closed and its close callback has run. A parent closes its children
 * from its `close` hook, with no close callback of its own to write. Call
 * it right after the init of `child`. */
void fleet__handle_adopt(fleet__handle_t *parent, fleet__handle_t *child);

/* Undoes fleet__handle_init() for a handle whose init failed later on;
 * nothing is called back. */
void fleet__handle_abort(fleet__handle_t *h);

/* The base of the public handle `pub` if it has the type `type` and is
 * initialized, else NULL. */
fleet__handle_t *fleet__handle_of(const void *pub, fleet_handle_type_t type);

/* Checks that a handle can take a call: initialized, open, its client
 * open. Returns 0, FLEET_EINVAL or FLEET_ECLOSING. */
int fleet__handle_usable(const fleet__handle_t *h);

/* Starts closing (see the top of this file). Returns 0 or FLEET_ECLOSING. */
int fleet__handle_close(fleet__handle_t *h, fleet_close_cb close_cb);

/* Keeps a closing handle open (one of its libuv handles is closing, a
 * child handle has not closed yet); release with fleet__handle_unhold(),
 * which finishes the close if it was the last thing. */
void fleet__handle_hold(fleet__handle_t *h);
void fleet__handle_unhold(fleet__handle_t *h);

/* The libuv handles a primitive owns (timers, check and prepare handles)
 * close through the base: each holds the handle until libuv has closed
 * it, so that the primitive's `free` hook never runs before.
 *
 * fleet__handle_timer_init() initializes `timer` on the handle's loop.
 * fleet__handle_uv_close() takes a hold, points `uvh->data` at `h` and
 * closes `uvh`; the shared close callback releases the hold. Call it once
 * per libuv handle, from the `close` hook or later. */
void fleet__handle_timer_init(fleet__handle_t *h, uv_timer_t *timer);
void fleet__handle_uv_close(fleet__handle_t *h, uv_handle_t *uvh);

/* The shared close callback, for a libuv handle whose hold was taken
 * before its close (uv_close(uvh, fleet__handle_uv_closed) with
 * `uvh->data` pointing at the handle). */
void fleet__handle_uv_closed(uv_handle_t *uvh);

/* Closes the pair of the handle `h`, as fleet__handle_uv_close() does for
 * each of the two. */
void fleet__handle_phase_end_close(fleet__handle_t *h, fleet__phase_end_t *pe);

/* Subscribes the handle to `channel` (`len` bytes, copied): `cb` runs
 * with `arg` for every message, and with FLEET_ECONNLOST and no payload
 * each time the subscription is live (again): the one place where the
 * primitive re-checks the state it waits on (backend.h). The subscription
 * is kept in `*slot`, which the base remembers: it ends the subscription
 * and sets `*slot` to NULL when the handle closes (after the `close`
 * hook), so that no message comes after. Returns 0, FLEET_EINVAL (`*slot`
 * holds one already, or the handle holds FLEET__HANDLE_SUBS_MAX) or the
 * backend's error. */
int fleet__handle_subscribe(fleet__handle_t *h, const char *channel, size_t len,
                            fleet__message_cb cb, void *arg,
                            fleet__sub_t **slot);

/* Ends the subscription in `*slot` early, if there is one, and sets it to
 * NULL; its callback never runs after this returns. */
void fleet__handle_unsubscribe(fleet__handle_t *h, fleet__sub_t **slot);

/* The backend the handle's client drives. */
fleet__backend_t *fleet__handle_backend(const fleet__handle_t *h);

/* Reports a background failure to the handle's error callback, with the
 * detail the backend gave for it (the server's text), if the handle has
 * an error callback and is not closing. */
void fleet__handle_error(fleet__handle_t *h, int status);

/* ------------------------------------------------------------------------ */
/* Requests                                                                 */

/* A request of `h`, from its pool or new, zeroed beyond the base; NULL
 * when out of memory. With a `cancel` hook the user waits for it: it is
 * on the live list until done. */
fleet__req_t *fleet__req_new(fleet__handle_t *h, fleet__req_reply_fn on_reply,
                             fleet__req_cancel_fn cancel, void *user_data);

/* Sends one backend call for `req`, whose reply goes to its on_reply.
 * Returns 0 or the backend's error; on error the request is unchanged
 * (the caller finishes it, or frees a new one with fleet__req_free()). */
int fleet__req_send(fleet__req_t *req, fleet__op_t op,
                    const fleet_bytes_t *keys, size_t nkeys,
                    const fleet_bytes_t *args, size_t nargs);

/* Finishes `req`: off the live list, and back to the pool (at once, or
 * when its call in flight is answered). Call it before running the
 * request's user callback. */
void fleet__req_done(fleet__req_t *req);

/* Gives back a request that never sent a call (a failed first send). */
void fleet__req_free(fleet__req_t *req);

/* ------------------------------------------------------------------------ */
/* Calls                                                                    */

/* The entry of a public call on the handle `pub` of type `type`: its base
 * if it can take the call, else NULL and `*err` says why: FLEET_EINVAL
 * (not an initialized handle of that type, or `need_cb` and no callback)
 * or FLEET_ECLOSING (the handle or its client is closing). */
fleet__handle_t *fleet__call_enter(const void *pub, fleet_handle_type_t type,
                                   int need_cb, int *err);

/* A request of `call` on `h`, whose answer goes to the user callback `cb`
 * (cast to fleet__fn_t) with `user_data`; NULL when out of memory. */
fleet__req_t *fleet__call_new(fleet__handle_t *h, const fleet__call_t *call,
                              fleet__fn_t cb, void *user_data);

/* Sends the call's op for `req` with `keys` and `args`. Returns 0 (the
 * replies go to the call's `read`), or an error: then `req` is given back
 * and no callback runs (the public call returns the error). */
int fleet__call_send(fleet__req_t *req, const fleet_bytes_t *keys, size_t nkeys,
                     const fleet_bytes_t *args, size_t nargs);

/* fleet__call_new() and fleet__call_send() in one. Returns 0 or an error
 * (FLEET_ENOMEM, the backend's), and nothing is left behind. */
int fleet__call(fleet__handle_t *h, const fleet__call_t *call, fleet__fn_t cb,
                void *user_data, const fleet_bytes_t *keys, size_t nkeys,
                const fleet_bytes_t *args, size_t nargs);

/* Finishes `req` with an error (or a status with no results): the request
 * is done, then the call's `fail` runs the user callback. */
void fleet__call_finish(fleet__req_t *req, int status);

/* The `fail` of a call whose callback is a fleet_status_cb: runs it with
 * the public handle, `status` and the user data, if there is one. */
void fleet__call_fail_status(fleet__req_t *req, int status);

/* ------------------------------------------------------------------------ */
/* Shared helpers of the primitives' calls and handles                      */

/* fleet__call() in the shape most calls have: one key, `key` (the
 * primitive's hash tag), and the arguments built in `args`. */
int fleet__call_keyed(fleet__handle_t *h, const fleet__call_t *call,
                      fleet__fn_t cb, void *user_data, const fleet__key_t *key,
                      const fleet__args_t *args);

/* The first step of a primitive's init on the public handle `pub` (a
 * struct that starts with FLEET_HANDLE_FIELDS): marks it uninitialized,
 * as it stays if the init fails, and checks that `client` is an
 * initialized client. Returns 0 or FLEET_EINVAL (`pub` NULL, no client). */
int fleet__handle_init_begin(void *pub, const fleet_client_t *client);

/* The typed close of a primitive (fleet_<type>_close()): closes `pub` if
 * it is an initialized handle of type `type`. Returns 0, FLEET_EINVAL or
 * FLEET_ECLOSING. */
int fleet__handle_close_of(const void *pub, fleet_handle_type_t type,
                           fleet_close_cb close_cb);

/* The first line of a call's `read`: when `status` is an error, finishes
 * `req` with it (fleet__call_finish()) and returns 1, the reply being
 * read no further; else returns 0. */
int fleet__call_failed(fleet__req_t *req, int status);

/* The end of a call's reader: with an error `status`, finishes `req`
 * (fleet__call_finish(): the fail hook tells the user) and returns 0;
 * with 0, the request is done and 1 says that the reader runs the user
 * callback with its results now. As in a fail hook, the reader may take
 * the callback, its handle and its data from `req` for that call: the
 * request is not reused before the callback runs. */
int fleet__call_done(fleet__req_t *req, int status);

#endif /* FLEET_SRC_HANDLE_H */
