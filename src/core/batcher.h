/* batcher.h -- the per-client periodic batcher: "call this op for every
 * item that is due, in one round trip". Lock renewals and worker
 * heartbeats use it; so will every keep-alive to come.
 *
 * An item is something that must be refreshed on the backend now and then
 * (a lease, a claim). It is scheduled for a loop time (`due`). The client
 * has one timer, armed for the earliest item. When it fires, every item
 * due by then, or within its own `window` of it, goes out; items of one
 * kind and one group share calls, up to the kind's limit per call, so
 * that things taken at about the same time stay in step and share their
 * round trips. An item has at most one call in flight, and is off the
 * schedule while it is out (so the schedule holds only what waits); an
 * item removed while its call is out is forgotten by the call.
 *
 * An item may also be due "now" (fleet__batch_now()): it goes out at the
 * end of the current loop phase, with every other item made due now in
 * it, so that the acquires or enqueues a program issues in one loop
 * iteration share one call. */
#ifndef FLEET_SRC_BATCHER_H
#define FLEET_SRC_BATCHER_H

#include "backend.h"
#include "common/list.h"
#include "internal.h"

typedef struct fleet__batch_item_s fleet__batch_item_t;
typedef struct fleet__batch_call_s fleet__batch_call_t;

/* What the items of one kind share. A call is
 *   KEYS = group keys, then item keys for each item;
 *   ARGV = group args, then item args for each item;
 * and its reply is an array of `reply_head` elements, then one element
 * per item. */
typedef struct {
  fleet__op_t op;
  size_t group_keys, group_args;
  size_t item_keys, item_args;
  size_t reply_head;
  size_t item_reply; /* reply elements per item; 0 means 1 */
  size_t max_items;  /* per call, at most FLEET__BATCH_MAX */
  /* When set, a call whose items all have the same args (byte for byte)
   * carries them once: ARGV = group args, then the first item's args. The
   * op's script tells the two forms apart by ARGV's length (the same for
   * one item). */
  int args_once;
  /* Optional (when the group has keys or args): fills them from the first
   * item of a call. */
  void (*fill_group)(fleet__batch_item_t *it, fleet_bytes_t *keys,
                     fleet_bytes_t *args);
  /* Fills the item's keys and args; they must stay valid until the call
   * is sent (the backend copies them). */
  void (*fill)(fleet__batch_item_t *it, fleet_bytes_t *keys,
               fleet_bytes_t *args);
  /* The result for one item of a call issued at loop time `sent`: status
   * 0 with the reply's head elements and the item's own element(s), or an
   * error with NULLs (the whole call failed; a reply of the wrong shape is
   * FLEET_EPROTO). The item is off the schedule when this runs:
   * schedule it again with fleet__batch_add(). May run user callbacks,
   * which may remove other items. */
  void (*done)(fleet__batch_item_t *it, int status, const fleet__reply_t *head,
               const fleet__reply_t *elem, uint64_t sent);
} fleet__batch_kind_t;

/* The most items one call carries. */
#define FLEET__BATCH_MAX 512

/* Embedded in what is refreshed; zero it before first use. */
struct fleet__batch_item_s {
  const fleet__batch_kind_t *kind;
  const void *group;         /* items of one kind and group share calls */
  uint64_t due;              /* loop ms */
  uint64_t window;           /* ms: joins a tick this long before it is due */
  fleet__list_t node;        /* on the schedule while linked */
  fleet__batch_call_t *call; /* the call in flight, or NULL */
  size_t slot;
  int linked;
  int now; /* due at the end of this loop phase, not on the timer */
};

/* Schedules `it` (of `kind`, in `group`) for loop time `due`, or moves it
 * there if scheduled already. An item with a call in flight is scheduled
 * anew when the call's result has been given. Returns 0 or FLEET_ENOMEM
 * (then nothing changed). */
int fleet__batch_add(struct fleet__client_s *c, fleet__batch_item_t *it,
                     const fleet__batch_kind_t *kind, const void *group,
                     uint64_t due, uint64_t window);

/* Schedules `it` for the end of the current loop phase: the check phase
 * when called from an I/O callback, else the prepare phase before the loop
 * blocks. Returns 0 or FLEET_ENOMEM. */
int fleet__batch_now(struct fleet__client_s *c, fleet__batch_item_t *it,
                     const fleet__batch_kind_t *kind, const void *group);

/* Stops refreshing `it`; a call in flight forgets it (its `done` will not
 * run). Safe on an item that is not scheduled. */
void fleet__batch_remove(struct fleet__client_s *c, fleet__batch_item_t *it);

/* Statistics, for tests: calls sent and items they carried. */
void fleet__batch_stats(const struct fleet__client_s *c, uint64_t *calls,
                        uint64_t *items);
/* For tests: the calls that carried their items' args once (args_once). */
uint64_t fleet__batch_once(const struct fleet__client_s *c);

/* The client is closing (its handles are closing too): items still due
 * now get their result, FLEET_ECLOSING, inside this call; then the timer
 * closes. `closed` runs once it has closed, or inside this call when the
 * batcher was never used. */
void fleet__batcher_close(struct fleet__client_s *c,
                          void (*closed)(struct fleet__client_s *c));

/* Frees what the batcher kept (the client is gone). */
void fleet__batcher_free(struct fleet__client_s *c);

#endif /* FLEET_SRC_BATCHER_H */
