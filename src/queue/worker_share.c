/* worker_share.c -- a concurrency budget shared by the workers of several
 * queues (fleet_worker_share_t; docs/queue.md, "Several queues, one
 * budget"). Nothing is counted twice: a worker's slots in use are its jobs
 * with the handler and the jobs its claims in flight asked for, the
 * numbers its own room comes from (worker_jobs.c), and the share only
 * narrows that room. On a Redis Cluster each queue is its own slot, so
 * each worker claims from its own shard; the share decides how many jobs
 * each asks for. */
#include <stdlib.h>

#include "worker_int.h"

struct fleet_worker_share_s {
  uint32_t concurrency;
  fleet_share_mode_t mode;
  fleet__list_t members; /* fleet__worker_s, share_node */
  /* A share in turns (fleet__share_new_turns()): the member whose turn
   * it is (NULL: none yet), and the jobs it asked for in this turn. */
  int turns;
  struct fleet__worker_s *holder;
  uint64_t asked;
};

int fleet_worker_share_new(uint32_t concurrency, fleet_share_mode_t mode,
                           fleet_worker_share_t **out) {
  fleet_worker_share_t *s;

  if (out == NULL)
    return FLEET_EINVAL;
  *out = NULL;
  if (concurrency == 0 || concurrency > 10000 ||
      (mode != FLEET_SHARE_WEIGHTED && mode != FLEET_SHARE_STRICT))
    return FLEET_EINVAL;
  if ((s = calloc(1, sizeof(*s))) == NULL)
    return FLEET_ENOMEM;
  s->concurrency = concurrency;
  s->mode = mode;
  fleet__list_init(&s->members);
  *out = s;
  return 0;
}

int fleet__share_new_turns(uint32_t concurrency, fleet_worker_share_t **out) {
  int err = fleet_worker_share_new(concurrency, FLEET_SHARE_WEIGHTED, out);

  if (err == 0)
    (*out)->turns = 1;
  return err;
}

int fleet_worker_share_free(fleet_worker_share_t *s) {
  if (s == NULL)
    return FLEET_EINVAL;
  if (!fleet__list_empty(&s->members))
    return FLEET_EBUSY;
  free(s);
  return 0;
}

uint32_t fleet__share_concurrency(const fleet_worker_share_t *s) {
  return s->concurrency;
}

void fleet__share_join(struct fleet__worker_s *w) {
  fleet__list_insert_tail(&w->o.share->members, &w->share_node);
}

void fleet__share_leave(struct fleet__worker_s *w) {
  if (w->o.share == NULL || fleet__list_empty(&w->share_node))
    return;
  if (w->o.share->holder == w) {
    w->o.share->holder = NULL;
    w->o.share->asked = 0;
  }
  fleet__list_remove(&w->share_node);
  fleet__list_init(&w->share_node);
  w->o.share = NULL;
}

/* The slots `w` holds: jobs with the handler, and asked for by claims in
 * flight. */
static uint32_t share_used(const struct fleet__worker_s *w) {
  return w->active + w->claiming;
}

/* Whether `w` would claim now if it had room: running, and its queue may
 * have jobs pending. (A worker whose backend is unreachable still counts:
 * in strict mode its queue keeps its place.) */
static int share_wants(const struct fleet__worker_s *w) {
  return w->state == FLEET__WORKER_RUNNING && w->maybe_pending;
}

/* Whether `m` takes part in the turns of a share in turns: it would claim
 * now if it had room (running and reachable, its queue may have jobs
 * pending, and a claim of its may go out: worker_send_claims()). A member
 * that cannot claim never holds the turn. */
static int share_turn_ok(const struct fleet__worker_s *m) {
  return m->state == FLEET__WORKER_RUNNING && m->online && m->maybe_pending &&
         m->claims_in_flight < FLEET__WORKER_CLAIMS_MAX &&
         (m->claims_in_flight == 0 || m->last_full);
}

/* Whether the turn's holder `m` keeps it: running and reachable, and its
 * queue may have jobs pending (a claim of its in flight does not end its
 * turn: the slots wait for its next one). */
static int share_turn_keep(const struct fleet__worker_s *m) {
  return m->state == FLEET__WORKER_RUNNING && m->online && m->maybe_pending;
}

/* The member after `from` (NULL: from the first), in the share's order
 * and around, that may take the turn (share_turn_ok()), `from` itself
 * last; NULL when none may. */
static struct fleet__worker_s *share_next(fleet_worker_share_t *s,
                                          struct fleet__worker_s *from) {
  fleet__list_t *start = from != NULL ? &from->share_node : &s->members;
  fleet__list_t *n = start->next;
  struct fleet__worker_s *m;

  for (;; n = n->next) {
    if (n == &s->members) {
      if (start == &s->members)
        return NULL; /* once round from the head */
      continue;
    }
    m = FLEET__LIST_DATA(n, struct fleet__worker_s, share_node);
    if (share_turn_ok(m))
      return m;
    if (n == start)
      return NULL; /* once round, `from` included */
  }
}

/* The budgets' worth of jobs a member of a share in turns asks for before
 * the turn goes on (fewer members' jobs running at once, so fewer calls:
 * share_room_turns()). */
#define SHARE_TURN_BUDGETS 8

/* A share in turns: the free slots go to one member at a time, so that
 * each claim asks for all the room there is (the claims of the partitions
 * of one queue: worker_parts.c). The turn stays with its holder until it
 * asked for SHARE_TURN_BUDGETS times the budget in claims, or its queue
 * ran dry or is held back: its jobs are then most of those running, and
 * their completions go in one call to its queue rather than one call per
 * member each loop iteration (fleet-demo worker, concurrency 256, on a
 * queue of 8 partitions: 83 completions per call instead of 52, and the
 * server CPU per job of a plain queue instead of a third more). A member
 * whose turn it is not claims nothing, and its completions go alone.
 * Under a backlog, a job of another member's queue waits for at most
 * that many jobs per member before it. */
static uint32_t share_room_turns(fleet_worker_share_t *s,
                                 struct fleet__worker_s *w, uint32_t room) {
  struct fleet__worker_s *m, *h;
  uint64_t used = 0;
  uint32_t free_slots;

  FLEET__LIST_FOREACH_DATA (m, &s->members, struct fleet__worker_s, share_node)
    used += share_used(m);
  free_slots = used >= s->concurrency ? 0 : (uint32_t)(s->concurrency - used);
  /* A worker probing its backend after a failure claims out of turn: its
   * call tells it whether the backend is back. */
  if (!w->online)
    return room < free_slots ? room : free_slots;
  h = s->holder;
  if (h == NULL || !share_turn_keep(h)) {
    h = share_next(s, h);
    if (h == NULL)
      h = w; /* no member may claim now but the one asking */
    s->holder = h;
    s->asked = 0;
  }
  if (h != w) {
    /* Its turn: it claims in this loop iteration, if it can. */
    if (h->state == FLEET__WORKER_RUNNING)
      fleet__worker_kick(h);
    return 0;
  }
  if (room > free_slots)
    room = free_slots;
  s->asked += room;
  if (s->asked >= SHARE_TURN_BUDGETS * (uint64_t)s->concurrency) {
    /* The next claim is the next member's. */
    h = share_next(s, w);
    s->holder = h != NULL ? h : w;
    s->asked = 0;
    if (h != NULL && h != w && h->state == FLEET__WORKER_RUNNING)
      fleet__worker_kick(h);
  }
  return room;
}

uint32_t fleet__share_room(struct fleet__worker_s *w, uint32_t room) {
  fleet_worker_share_t *s = w->o.share;
  struct fleet__worker_s *m;
  uint64_t used = 0, weights = 0, cap;
  uint32_t free_slots, mine = share_used(w);

  if (s == NULL)
    return room;
  if (s->turns)
    return share_room_turns(s, w, room);
  FLEET__LIST_FOREACH_DATA (m, &s->members, struct fleet__worker_s,
                            share_node) {
    used += share_used(m);
    if (m != w && share_wants(m)) {
      /* Strict: a higher weight with jobs pending goes first. */
      if (s->mode == FLEET_SHARE_STRICT && m->o.weight > w->o.weight)
        return 0;
      weights += m->o.weight;
    }
  }
  free_slots = used >= s->concurrency ? 0 : (uint32_t)(s->concurrency - used);
  if (s->mode == FLEET_SHARE_WEIGHTED) {
    /* Its part of the budget among the workers with jobs pending, at
     * least one slot. */
    weights += w->o.weight;
    cap = (uint64_t)s->concurrency * w->o.weight / weights;
    if (cap == 0)
      cap = 1;
    if (cap <= mine)
      return 0;
    if (cap - mine < free_slots)
      free_slots = (uint32_t)(cap - mine);
  }
  return room < free_slots ? room : free_slots;
}

void fleet__share_kick(struct fleet__worker_s *w) {
  struct fleet__worker_s *m;

  if (w->o.share == NULL)
    return;
  FLEET__LIST_FOREACH_DATA (m, &w->o.share->members, struct fleet__worker_s,
                            share_node) {
    if (m != w && m->state == FLEET__WORKER_RUNNING)
      fleet__worker_kick(m);
  }
}
