/* conn.h -- one Redis connection on a libuv loop: resolve, connect,
 * handshake, pipelined requests, timeouts, reconnect with backoff. */
#ifndef FLEET_REDIS_CONN_H
#define FLEET_REDIS_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "backend.h"
#include "common/freelist.h"
#include "common/url.h"
#include "common/util.h"
#include "redis/compat.h"
#include "redis/reader.h"
#include "scripts/scripts.h"
#include "redis/tls.h"

typedef struct fleet__rconn_s fleet__rconn_t;
typedef struct fleet__rreq_s fleet__rreq_t;

/* Called once per request: status 0 with the reply (an error reply
 * included), or a negative error and NULL, and then the connection's
 * `detail` says why in words. The reply is freed after this returns. The owner
 * may resubmit `req` from here with fleet__rconn_send(). */
typedef void (*fleet__rreq_cb)(fleet__rconn_t *c, fleet__rreq_t *req,
                               int status, redisReply *reply);

/* A request: one RESP-encoded command and what to do with its reply.
 * Requests are pooled by their owner; `buf` keeps its capacity across
 * reuses so that the hot path does not allocate. */
struct fleet__rreq_s {
  fleet__rreq_t *next;
  fleet__free_t free_node; /* on its owner's pool while unused */
  char *buf;
  size_t len;
  size_t cap;
  uint64_t deadline; /* loop time (ms) by which the reply must arrive */
  fleet__rreq_cb on_reply;
  /* Free for the owner. */
  const fleet__script_t *script;
  size_t script_tail; /* offset of the numkeys argument in buf */
  fleet__reply_cb cb;
  void *arg;
  /* A fenced op (fleet__op_fenced()): the connection appends its fence
   * argument (fleet__rconn_set_fence()) each time it writes the request;
   * the argument count at the head of `buf` counts it. Cleared by
   * fleet__rreq_begin(). */
  int fenced;
};

/* Appends RESP encoding to a request's buffer. Both return 0 or
 * FLEET_ENOMEM. */
int fleet__rreq_begin(fleet__rreq_t *req, size_t argc);
int fleet__rreq_arg(fleet__rreq_t *req, const void *p, size_t len);

#define FLEET__RCONN_STATE_MAP(XX)                                             \
  XX(BACKOFF, "backoff")                                                       \
  XX(RESOLVING, "resolving")                                                   \
  XX(CONNECTING, "connecting")                                                 \
  XX(HANDSHAKE, "handshake")                                                   \
  XX(READY, "ready")                                                           \
  XX(CLOSING, "closing")

typedef enum {
#define FLEET__RCONN_ENUM(name, str) FLEET__RCONN_##name,
  FLEET__RCONN_STATE_MAP(FLEET__RCONN_ENUM)
#undef FLEET__RCONN_ENUM
} fleet__rconn_state_t;

const char *fleet__rconn_state_name(fleet__rconn_state_t state);

/* What a connection tells its owner. */
typedef struct {
  /* The connection became ready (status 0), or an attempt failed or an
   * established connection broke (status < 0; reconnect is scheduled). */
  void (*on_state)(fleet__rconn_t *c, int ready, int status);
  /* Subscriber mode only: every published message (an array "message"
   * or "smessage", channel, payload), and a "sunsubscribe" the server sent
   * unasked (a cluster node lost the channel's slot). Other replies (SUBSCRIBE
   * and UNSUBSCRIBE confirmations) answer requests in order, as on any
   * connection. */
  void (*on_push)(fleet__rconn_t *c, redisReply *reply);
  /* The connection finished closing; its memory may be freed. */
  void (*on_closed)(fleet__rconn_t *c);
} fleet__rconn_events_t;

struct fleet__rconn_s {
  void *owner;
  uv_loop_t *loop;
  const fleet__url_t *url;
  const fleet__backend_config_t *config;
  const fleet__rconn_events_t *events;
  int subscriber;                 /* published messages go to events->on_push */
  const fleet__script_t *preload; /* SCRIPT LOAD these in the handshake */
  size_t npreload;
  /* Set by the owner: the handshake checks with ROLE that the node is a
   * master, else the attempt fails with FLEET_EREADONLY (Sentinel). */
  int check_master;
  /* Set by the owner to ask for the preloaded scripts' function libraries
   * (scripts.h): the handshake also sends their FUNCTION LOAD, and each
   * time the connection becomes ready it sets *functions to 1 when every
   * one loaded (or was there), else 0. NULL: EVALSHA only. */
  int *functions;
  int fn_failed; /* a FUNCTION LOAD of this attempt was refused */
  /* The fence argument, RESP-encoded, that fenced requests get appended
   * when written: "0" unless the owner set another. */
  char fence[32];
  size_t fence_len;

  fleet__rconn_state_t state;
  int handles;      /* open uv handles; closing completes at 0 */
  int stream_open;  /* the stream handle is initialized and not closed */
  int read_depth;   /* > 0 while replies are being dispatched */
  uint32_t attempt; /* failed attempts since the last ready */
  int was_ready;    /* ready once: fail_fast no longer applies */
  int last_error;
  /* Why the last attempt failed or the connection broke, in words ("" since
   * the last ready); and what a request callback with an error status
   * hears, which is that cause or a sentence built on it. */
  char cause[FLEET__DETAIL_MAX];
  char detail[FLEET__DETAIL_MAX];
  fleet__rng_t rng;

  union {
    uv_handle_t handle;
    uv_stream_t stream;
    uv_tcp_t tcp;
    uv_pipe_t pipe;
  } s;
  uv_connect_t connect_req;
  uv_getaddrinfo_t gai_req;
  int gai_active;
  struct addrinfo *addrs; /* from uv_getaddrinfo, or NULL */
  struct addrinfo *next_addr;
  uv_timer_t connect_timer;   /* connect timeout, then backoff */
  uv_timer_t command_timer;   /* oldest request's deadline */
  uv_check_t flush_check;     /* flush writes after I/O callbacks */
  uv_prepare_t flush_prepare; /* flush writes issued by timers */
  int flush_armed;

  /* rediss: the TLS state (NULL for plain connections), and whether the
   * TLS handshake of the current attempt is still going on. */
  fleet__tls_t *tls;
  int tls_handshaking;
  int tls_write_error; /* a write failed during the handshake: see conn.c */

  redisReader *reader;
  fleet__rarena_t arena; /* the reader's replies */
  char *rbuf;            /* read buffer */
  uint64_t reply_bytes;  /* bytes received of the reply being parsed */
  uint64_t max_reply;    /* the limit on reply_bytes */

  /* FIFO queues. `waiting`: not yet written (no connection, or handshake
   * in progress); `unflushed`: to be written on the next flush;
   * `inflight`: written, reply pending. */
  fleet__rreq_t *waiting, *waiting_tail;
  fleet__rreq_t *unflushed, *unflushed_tail;
  fleet__rreq_t *inflight, *inflight_tail;
  size_t ninflight;
  size_t nunflushed;     /* user requests queued since the last flush */
  int handshake_pending; /* handshake replies still expected */

  fleet__freelist_t free_reqs;   /* handshake request pool */
  fleet__freelist_t free_writes; /* write request pool */
  int after_teardown;            /* what to do once the stream is closed */
};

/* Initializes `c` and starts connecting. Returns 0 or a negative error (and
 * then nothing is on the loop). */
int fleet__rconn_open(fleet__rconn_t *c, uv_loop_t *loop, void *owner,
                      const fleet__url_t *url,
                      const fleet__backend_config_t *config,
                      const fleet__rconn_events_t *events, int subscriber,
                      const fleet__script_t *preload, size_t npreload);

/* Queues `req` (with `on_reply` and `buf` set; `deadline` 0 for a new
 * request, which then gets one from the command timeout; a resent request
 * keeps its first deadline). When the connection is ready it is written on
 * the next flush, else it waits for the connection until its deadline
 * (then FLEET_EUNAVAILABLE). An attempt that fails before the connection is
 * ready with a cause that retrying will not cure (a handshake error, a
 * protocol error, a reply over the limit, the server dropping the
 * connection during the handshake) fails the waiting requests at once.
 * Must not be called once closing began. */
void fleet__rconn_send(fleet__rconn_t *c, fleet__rreq_t *req);

/* Sets the failover epoch that the fenced requests written from now on
 * carry (adapters/backend.h, "Fenced ops"): "0", a decimal epoch, or "c"
 * on a cluster node; at most 20 characters (longer is ignored). */
void fleet__rconn_set_fence(fleet__rconn_t *c, const char *epoch);

/* Writes the requests issued so far in this loop iteration now, instead
 * of when the iteration's check or prepare phase comes. */
void fleet__rconn_flush(fleet__rconn_t *c);

/* The address in the connection's url changed (a failover): an open or
 * opening connection is dropped as lost (FLEET_ECONNLOST, with `why`) and
 * reconnects after the backoff delay; one waiting to reconnect, or for an
 * address (a TCP url whose host is NULL waits without connecting until
 * kicked), tries at once. */
void fleet__rconn_kick(fleet__rconn_t *c, const char *why);

/* While not connected: sets the cause that requests failing for want of a
 * connection report (why there is no address yet, say). */
void fleet__rconn_note(fleet__rconn_t *c, const char *why);

/* While not connected, with the client's fail_fast and before the
 * connection was ever ready: fails the requests waiting for a connection
 * now with `status`, `why` as their detail (no sentinel named a master,
 * say). Does nothing otherwise. User callbacks
 * run: the connection may be closing when it returns. */
void fleet__rconn_fail_fast(fleet__rconn_t *c, int status, const char *why);

/* Starts closing: every request still queued gets its callback with
 * FLEET_ECANCELED once the handles are closed, then events->on_closed. */
void fleet__rconn_close(fleet__rconn_t *c);

#endif /* FLEET_REDIS_CONN_H */
