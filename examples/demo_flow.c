/* demo_flow.c -- fleet-demo flow: enqueues one flow (docs/queue.md,
 * "Flows"), a parent of type "flow-parent" in --queue that runs once its
 * --children N children (type "flow-child", in --child-queue or the same
 * queue) ended, and prints the parent's id, then each child's, one a
 * line. A worker run with --ledger-flows reads a parent's children when
 * it starts it (demo_queue.c). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "demo.h"

typedef struct {
  demo_client_t c;
  fleet_queue_t q;
  int queue_open;
  int status;
} demo_flow_t;

static void demo_flow_closed(fleet_handle_t *q) {
  demo_flow_t *p = q->data;
  demo_client_close(&p->c);
}

static void demo_flow_finish(demo_flow_t *p, int status) {
  if (p->status == 0)
    p->status = status;
  if (p->queue_open) {
    p->queue_open = 0;
    fleet_queue_close(&p->q, demo_flow_closed);
  }
}

static void demo_flow_unreachable(void *arg) {
  demo_flow_t *p = arg;

  demo_flow_finish(p, 1);
  demo_client_close(&p->c);
}

static void demo_on_flow(fleet_queue_t *q, int status,
                         const fleet_flow_result_t *r, void *arg) {
  demo_flow_t *p = q->data;
  size_t i;

  if (status == FLEET_ECANCELED)
    return;
  if (status == FLEET_EEXIST) {
    fleet_escape_print(stderr, "fleet-demo: flow: job %s exists already",
                       r->existing_id);
    demo_flow_finish(p, 1);
    return;
  }
  if (status != 0) {
    demo_fail_on(&p->c.client, "flow", status);
    demo_flow_finish(p, 1);
    return;
  }
  printf("%s\n", r->parent_id);
  for (i = 0; i < r->n_children; i++)
    printf("%s\n", r->child_ids[i]);
  demo_flow_finish(p, 0);
}

int demo_flow(const demo_args_t *a) {
  static const char payload[] = "demo flow";
  fleet_flow_child_t *kids;
  fleet_flow_spec_t f;
  demo_flow_t p;
  const char *queue = NULL, *child_queue = NULL;
  int64_t n = 0, max_attempts = 3, v;
  int i, err;

  memset(&p, 0, sizeof(p));
  fleet_flow_spec_init(&f, "flow-parent", payload, sizeof(payload) - 1);
  for (i = 0; i < a->argc; i++) {
    const char *fl = a->argv[i];
    if (demo_flag(a, &i, "--queue"))
      queue = a->argv[i];
    else if (demo_flag(a, &i, "--children")) {
      if (!demo_int(fl, a->argv[i], 1, FLEET_FLOW_CHILDREN_MAX, &n))
        return 2;
    } else if (demo_flag(a, &i, "--child-queue"))
      child_queue = a->argv[i];
    else if (demo_flag(a, &i, "--max-attempts")) {
      if (!demo_int(fl, a->argv[i], 1, UINT32_MAX, &max_attempts))
        return 2;
    } else if (demo_flag(a, &i, "--priority")) {
      if (!demo_int(fl, a->argv[i], FLEET_JOB_PRIORITY_MIN,
                    FLEET_JOB_PRIORITY_MAX, &v))
        return 2;
      f.parent.priority = (int)v;
    } else if (strcmp(fl, "--ignore-child-death") == 0)
      f.ignore_child_death = 1;
    else
      return demo_bad_flag("flow", fl);
  }
  if (queue == NULL || n == 0) {
    fprintf(stderr, "fleet-demo: flow: --queue and --children are required\n");
    return 2;
  }
  kids = calloc((size_t)n, sizeof(*kids));
  if (kids == NULL)
    return 1;
  for (i = 0; i < n; i++) {
    kids[i].queue = child_queue;
    fleet_job_spec_init(&kids[i].spec, "flow-child", payload,
                        sizeof(payload) - 1);
    kids[i].spec.max_attempts = (uint32_t)max_attempts;
  }
  f.children = kids;
  f.n_children = (size_t)n;
  if (demo_client_open(&p.c, a) != 0) {
    free(kids);
    return 1;
  }
  p.c.on_unreachable = demo_flow_unreachable;
  p.c.arg = &p;
  p.q.data = &p;
  err = fleet_queue_init(&p.c.client, &p.q, queue, NULL);
  if (err == 0) {
    p.queue_open = 1;
    err = fleet_queue_add_flow(&p.q, &f, demo_on_flow, NULL);
  }
  if (err != 0) {
    demo_fail("flow", err);
    if (p.queue_open)
      demo_flow_finish(&p, err == FLEET_EINVAL || err == FLEET_E2BIG ||
                                   err == FLEET_ECROSSSLOT
                               ? 2
                               : 1);
    else
      demo_client_close(&p.c);
    p.status = p.status != 0 ? p.status : 1;
  }
  uv_run(p.c.loop, UV_RUN_DEFAULT);
  uv_loop_close(p.c.loop);
  free(kids);
  return p.c.failed ? 1 : p.status;
}
