/* queue_deps.c -- flows: a parent job that runs after its children
 * (docs/queue.md, "Flows"). fleet_queue_add_flow() checks the flow and
 * sends it as one QUEUE_ADD_FLOW call (queue_add_flow.lua), whose keys
 * are the parent's queue's tag and those of the children's other queues;
 * fleet_queue_children() reads a parent's children (queue_children.lua),
 * and fleet_job_children() a worker's job's, on the worker's queue.
 * What a child's end does to its parent is the scripts' (lib/queue_deps.lua).
 */
#include <stdlib.h>
#include <string.h>

#include "queue_int.h"
#include "worker_int.h"

void fleet_flow_spec_init(fleet_flow_spec_t *flow, const char *type,
                          const void *payload, size_t len) {
  memset(flow, 0, sizeof(*flow));
  fleet_job_spec_init(&flow->parent, type, payload, len);
}

/* ------------------------------------------------------------------------ */
/* Adding a flow                                                            */

/* Whether child `c`'s queue is the parent's (`name`). */
static int deps_own_queue(const fleet_flow_child_t *c, const char *name) {
  return c->queue == NULL || strcmp(c->queue, name) == 0;
}

/* Whether children `c` and `d` are in one queue. */
static int deps_same_queue(const fleet_flow_child_t *c,
                           const fleet_flow_child_t *d, const char *name) {
  int own = deps_own_queue(c, name);

  if (own || deps_own_queue(d, name))
    return own && deps_own_queue(d, name);
  return strcmp(c->queue, d->queue) == 0;
}

/* Checks a flow. Returns 0, FLEET_EINVAL or FLEET_E2BIG. */
static int deps_flow_ok(const fleet_flow_spec_t *f, const char *name) {
  const fleet_job_spec_t *p = &f->parent;
  size_t i, j;
  int err;

  if (f->children == NULL || f->n_children == 0 ||
      f->n_children > FLEET_FLOW_CHILDREN_MAX)
    return FLEET_EINVAL;
  if ((err = fleet__queue_spec_ok(p)) != 0)
    return err;
  if (p->delay_ms != 0 || p->run_at_ms != 0 || p->unique_key != NULL ||
      p->group != NULL)
    return FLEET_EINVAL;
  for (i = 0; i < f->n_children; i++) {
    const fleet_flow_child_t *c = &f->children[i];
    if ((err = fleet__queue_spec_ok(&c->spec)) != 0)
      return err;
    if (c->spec.unique_key != NULL)
      return FLEET_EINVAL;
    if (c->queue != NULL &&
        (err = fleet__str_check(c->queue, FLEET__NAME_MAX, NULL)) != 0)
      return err;
    if (c->spec.id == NULL)
      continue;
    /* A given id twice in one queue, or a child that is its own parent:
     * the only ways a flow of new jobs could hold a cycle. */
    if (deps_own_queue(c, name) && p->id != NULL &&
        strcmp(p->id, c->spec.id) == 0)
      return FLEET_EINVAL;
    for (j = 0; j < i; j++) {
      const fleet_flow_child_t *d = &f->children[j];
      if (d->spec.id != NULL && strcmp(d->spec.id, c->spec.id) == 0 &&
          deps_same_queue(c, d, name))
        return FLEET_EINVAL;
    }
  }
  return 0;
}

/* The fail hook of a fleet_queue_flow_cb. */
static void deps_flow_cb_fail(fleet__req_t *req, int status) {
  ((fleet_queue_flow_cb)req->cb)((fleet_queue_t *)req->handle->pub, status,
                                 NULL, req->user_data);
}

/* {1, parent id, child id per child} or {0, the id that exists}. */
static void deps_flow_reply(fleet__req_t *base, int status,
                            const fleet__reply_t *r) {
  struct fleet__queue_s *q = (struct fleet__queue_s *)base->handle;
  size_t n = ((fleet__qreq_t *)base)->n;
  fleet_flow_result_t res;
  int added;

  if (fleet__call_failed(base, status))
    return;
  if (r->type != FLEET__REPLY_ARRAY || r->nelem < 2 ||
      r->elem[0].type != FLEET__REPLY_INT ||
      (r->elem[0].integer != 0 && r->elem[0].integer != 1)) {
    fleet__call_finish(base, FLEET_EPROTO);
    return;
  }
  added = r->elem[0].integer == 1;
  if (r->nelem != (added ? 2 + n : 2))
    status = FLEET_EPROTO;
  else
    status = fleet__queue_reply_ids(q, r, 1, r->nelem - 1);
  if (fleet__call_failed(base, status))
    return;
  memset(&res, 0, sizeof(res));
  if (!added) {
    res.existing_id = q->ids[0];
  } else {
    res.parent_id = q->ids[0];
    res.child_ids = q->ids + 1;
    res.n_children = n;
    fleet__metrics_add(q->base.metrics, FLEET_METRIC_JOBS_ENQUEUED, 1 + n);
  }
  fleet__req_done(base);
  ((fleet_queue_flow_cb)base->cb)((fleet_queue_t *)q->base.pub,
                                  added ? 0 : FLEET_EEXIST, &res,
                                  base->user_data);
}

static const fleet__call_t deps_flow_call = {
    "queue.add_flow", FLEET__OP_QUEUE_ADD_FLOW, deps_flow_reply,
    deps_flow_cb_fail};

/* What one call of fleet_queue_add_flow() builds: the specs in argument
 * order (the parent's first), the keys (the parent queue's tag, then the
 * children's other queues'), each child's index in `keys`, and the names
 * of the queues of `keys[1..]`. */
typedef struct {
  const fleet_job_spec_t **specs;
  fleet__key_t *tags;
  fleet_bytes_t *keys;
  size_t *kidx;
  const char **names;
  size_t nkeys, ntags;
} deps_build_t;

static void deps_build_free(deps_build_t *b) {
  size_t i;

  for (i = 0; b->tags != NULL && i < b->ntags; i++)
    fleet__key_free(&b->tags[i]);
  free(b->specs);
  free(b->tags);
  free(b->keys);
  free(b->kidx);
  free(b->names);
}

/* Fills `b` for flow `f` of queue `q`: every child's queue's key, once.
 * Returns 0, FLEET_ENOMEM or FLEET_ECROSSSLOT (on a Redis Cluster, a
 * child's queue in another slot than the parent's). */
static int deps_build(struct fleet__queue_s *q, const fleet_flow_spec_t *f,
                      deps_build_t *b) {
  fleet__backend_t *be = fleet__handle_backend(&q->base);
  struct fleet__client_s *cl = q->base.client;
  size_t n = f->n_children, i, k;
  uint16_t slot;

  memset(b, 0, sizeof(*b));
  b->specs = calloc(n + 1, sizeof(*b->specs));
  b->tags = calloc(n + 1, sizeof(*b->tags));
  b->keys = calloc(n + 1, sizeof(*b->keys));
  b->kidx = calloc(n, sizeof(*b->kidx));
  b->names = calloc(n + 1, sizeof(*b->names));
  if (b->specs == NULL || b->tags == NULL || b->keys == NULL ||
      b->kidx == NULL || b->names == NULL)
    return FLEET_ENOMEM;
  b->ntags = n + 1; /* zeroed: tags[0] stays unused (the queue's own) */
  b->keys[0] = fleet__key_bytes(&q->tag);
  b->names[0] = q->name;
  b->nkeys = 1;
  b->specs[0] = &f->parent;
  slot = fleet__key_slot(q->tag.base, q->tag.len);
  for (i = 0; i < n; i++) {
    const fleet_flow_child_t *c = &f->children[i];
    const char *name = c->queue != NULL ? c->queue : q->name;

    b->specs[1 + i] = &c->spec;
    for (k = 0; k < b->nkeys && strcmp(b->names[k], name) != 0; k++)
      ;
    if (k == b->nkeys) {
      if (fleet__key_build(&b->tags[k], cl->prefix, cl->prefix_len, name,
                           strlen(name), NULL) != 0)
        return FLEET_ENOMEM;
      b->keys[k] = fleet__key_bytes(&b->tags[k]);
      b->names[k] = name;
      b->nkeys++;
      if (be->sharded &&
          fleet__key_slot(b->keys[k].base, b->keys[k].len) != slot)
        return FLEET_ECROSSSLOT;
    }
    b->kidx[i] = k;
  }
  return 0;
}

int fleet__queue_add_flow(fleet_queue_t *pub, const fleet_flow_spec_t *f,
                          fleet_queue_flow_cb cb, void *user_data) {
  struct fleet__queue_s *q;
  fleet__qreq_t *req;
  deps_build_t b;
  size_t n, i, j, off = 0;
  int err;

  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  if (f == NULL)
    return FLEET_EINVAL;
  if ((err = deps_flow_ok(f, q->name)) != 0)
    return err;
  n = f->n_children;
  err = deps_build(q, f, &b);
  if (err == 0)
    err = fleet__queue_specs_encode(q, b.specs, n + 1);
  if (err == 0 && fleet__args_begin(&q->args, 1 + 13 * (n + 1), n) != 0)
    err = FLEET_ENOMEM;
  if (err == 0) {
    fleet__args_str(&q->args, f->ignore_child_death ? "i" : "f");
    for (i = 0; i < n + 1; i++) {
      if (i > 0)
        fleet__args_u64(&q->args, b.kidx[i - 1] + 1);
      for (j = 0; j < 12; j++) {
        size_t len = q->enq_lens[12 * i + j];
        fleet__args_bytes(&q->args, q->enq_buf + off, len);
        off += len;
      }
    }
    req = fleet__queue_new(q, &deps_flow_call, (fleet__fn_t)cb, user_data);
    if (req == NULL) {
      err = FLEET_ENOMEM;
    } else {
      req->n = n;
      err = fleet__call_send(&req->base, b.keys, b.nkeys, q->args.argv,
                             q->args.argc);
    }
  }
  fleet__queue_specs_reset(q);
  deps_build_free(&b);
  return err;
}

/* ------------------------------------------------------------------------ */
/* Reading the children                                                     */

/* The fail hook of a fleet_queue_children_cb. */
static void deps_children_cb_fail(fleet__req_t *req, int status) {
  ((fleet_queue_children_cb)req->cb)((fleet_queue_t *)req->handle->pub, status,
                                     NULL, 0, 0, 0, req->user_data);
}

/* The queue's name in tag "{<prefix>:<name>}" of client `cl`, or
 * FLEET_EPROTO. */
static int deps_tag_name(const struct fleet__client_s *cl, fleet_bytes_t tag,
                         fleet_bytes_t *name) {
  const char *t = tag.base;

  if (tag.len < cl->prefix_len + 4 || t[0] != '{' ||
      memcmp(t + 1, cl->prefix, cl->prefix_len) != 0 ||
      t[1 + cl->prefix_len] != ':' || t[tag.len - 1] != '}')
    return FLEET_EPROTO;
  name->base = t + 2 + cl->prefix_len;
  name->len = tag.len - 3 - cl->prefix_len;
  return 0;
}

/* {waiting, fail ('1' or '0'), then tag, id, state, result per child}. */
static void deps_children_reply(fleet__req_t *base, int status,
                                const fleet__reply_t *r) {
  static const char *const states[] = {"waiting", "completed", "dead"};
  static const fleet_job_state_t as[] = {FLEET_JOB_PENDING, FLEET_JOB_COMPLETED,
                                         FLEET_JOB_DEAD};
  struct fleet__queue_s *q = (struct fleet__queue_s *)base->handle;
  fleet_flow_child_info_t *kids = NULL;
  fleet_bytes_t b, name;
  uint64_t waiting = 0;
  size_t n = 0, i, k, bytes = 0;
  int fail;

  if (fleet__call_failed(base, status))
    return;
  if (!fleet__reply_is_array(r, 2) || (r->nelem - 2) % 4 != 0 ||
      fleet__reply_u64_str(&r->elem[0], &waiting) != 0 ||
      fleet__reply_bytes(&r->elem[1], &b) != 0 || b.len != 1)
    status = FLEET_EPROTO;
  else
    n = (r->nelem - 2) / 4;
  for (i = 0; status == 0 && i < 4 * n; i++) {
    if (fleet__reply_bytes(&r->elem[2 + i], &b) != 0)
      status = FLEET_EPROTO;
    else
      bytes += b.len + 1;
  }
  if (status == 0 && waiting > n)
    status = FLEET_EPROTO;
  q->strs_len = 0;
  if (status == 0 && (fleet__queue_strs_reserve(q, bytes) != 0 ||
                      (n > 0 && (kids = calloc(n, sizeof(*kids))) == NULL)))
    status = FLEET_ENOMEM;
  for (i = 0; status == 0 && i < n; i++) {
    const fleet__reply_t *e = &r->elem[2 + 4 * i];

    fleet__reply_bytes(&e[0], &b);
    if (deps_tag_name(q->base.client, b, &name) != 0) {
      status = FLEET_EPROTO;
      break;
    }
    kids[i].queue = fleet__queue_strs_add(q, name);
    fleet__reply_bytes(&e[1], &b);
    kids[i].id = fleet__queue_strs_add(q, b);
    fleet__reply_bytes(&e[2], &b);
    for (k = 0; k < 3; k++)
      if (b.len == strlen(states[k]) && memcmp(b.base, states[k], b.len) == 0)
        break;
    if (k == 3) {
      status = FLEET_EPROTO;
      break;
    }
    kids[i].state = as[k];
    fleet__reply_bytes(&e[3], &b);
    kids[i].result.base = fleet__queue_strs_add(q, b);
    kids[i].result.len = b.len;
  }
  if (fleet__call_failed(base, status)) {
    free(kids);
    return;
  }
  fleet__reply_bytes(&r->elem[1], &b);
  fail = ((const char *)b.base)[0] == '1';
  fleet__req_done(base);
  ((fleet_queue_children_cb)base->cb)((fleet_queue_t *)q->base.pub, 0, kids, n,
                                      (size_t)waiting, fail, base->user_data);
  free(kids);
}

static const fleet__call_t deps_children_call = {
    "queue.children", FLEET__OP_QUEUE_CHILDREN, deps_children_reply,
    deps_children_cb_fail};

int fleet__queue_children(fleet_queue_t *pub, const char *id,
                          fleet_queue_children_cb cb, void *user_data) {
  struct fleet__queue_s *q;
  size_t len;
  int err;

  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  if ((err = fleet__str_check(id, FLEET_JOB_ID_MAX, &len)) != 0)
    return err;
  if (fleet__args_begin(&q->args, 1, 0) != 0)
    return FLEET_ENOMEM;
  fleet__args_bytes(&q->args, id, len);
  return fleet__queue_call(q, &deps_children_call, (fleet__fn_t)cb, user_data);
}

int fleet_job_children(fleet_job_t *job, fleet_queue_children_cb cb,
                       void *user_data) {
  if (job == NULL || job->internal_ == NULL)
    return FLEET_EINVAL;
  return fleet__queue_children(&job->internal_->w->queue,
                               job->internal_->wire_id, cb, user_data);
}
