/* test_queue_util.c -- blocking helpers over the queue calls for the queue
 * and worker tests: each issues one call, checks that its callback does not
 * run inside the call, and runs the loop until it ran. */
#include "test_queue_util.h"

/* Where the callbacks of the current call copy what they get. */
static int *qt_out_status;
static char (*qt_out_ids)[FLEET_JOB_ID_MAX + 1];
static qt_job_t *qt_out_jobs;
static int *qt_out_results;
static fleet_job_info_t *qt_out_info;
static char *qt_out_payload, *qt_out_error;
static size_t qt_out_payload_cap, qt_out_error_cap;
static size_t *qt_out_n;
static uint64_t *qt_out_total;
static int qt_in_call;
static uint32_t qt_command_timeout_ms;

void qt_set_command_timeout(uint32_t ms) {
  qt_command_timeout_ms = ms;
}

static void qt_on_close(fleet_handle_t *q) {
  qt_t *t = q->data;
  t->closed++;
}

void qt_open(qt_t *t, const char *url, const char *name,
             const fleet_queue_options_t *opts) {
  qt_open_prefix(t, url, "qt", name, opts);
}

void qt_open_prefix(qt_t *t, const char *url, const char *prefix,
                    const char *name, const fleet_queue_options_t *opts) {
  fleet_client_options_t o;

  memset(t, 0, sizeof(*t));
  fleet_client_options_init(&o);
  o.prefix = prefix;
  o.reconnect_initial_ms = 20;
  o.reconnect_max_ms = 200;
  o.command_timeout_ms = qt_command_timeout_ms;
  ctx_init(&t->c, url, &o);
  t->q.data = t;
  ASSERT_OK(fleet_queue_init(&t->c.client, &t->q, name, opts));
}

void qt_close(qt_t *t) {
  ASSERT_OK(fleet_queue_close(&t->q, qt_on_close));
  ASSERT_ERR(FLEET_ECLOSING, fleet_queue_close(&t->q, qt_on_close));
  ASSERT(fleet_test_wait_count(&t->c.loop, &t->closed, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(1, t->closed);
  ctx_close(&t->c);
}

/* Every callback starts here: not inside the call, once per call. */
static qt_t *qt_enter(fleet_queue_t *q, int status) {
  qt_t *t = q->data;
  ASSERT_EQ(0, qt_in_call);
  ASSERT_EQ(0, t->done);
  t->done = 1;
  t->status = status;
  return t;
}

void qt_wait(qt_t *t) {
  ASSERT(fleet_test_run_until(&t->c.loop, fleet_test_flag_set, &t->done,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
}

/* Issues a call (its return code in `rc`) and waits for its callback;
 * returns the callback's status, or the call's error. */
static int qt_finish(qt_t *t, int rc) {
  qt_in_call = 0;
  if (rc != 0)
    return rc;
  qt_wait(t);
  return t->status;
}

static void qt_begin(qt_t *t) {
  t->done = 0;
  t->status = 1;
  qt_in_call = 1;
}

static void qt_on_enqueue(fleet_queue_t *q, int status,
                          const fleet_enqueue_result_t *r, size_t n, void *ud) {
  size_t i;

  qt_enter(q, status);
  for (i = 0; i < n; i++) {
    ASSERT_EQ(strlen(r[i].id), r[i].id_len);
    if (qt_out_status != NULL)
      qt_out_status[i] = r[i].status;
    if (qt_out_ids != NULL)
      snprintf(qt_out_ids[i], sizeof(qt_out_ids[i]), "%s", r[i].id);
  }
}

int qt_enqueue(qt_t *t, const fleet_job_spec_t *specs, size_t n, int *status,
               char (*ids)[FLEET_JOB_ID_MAX + 1]) {
  qt_out_status = status;
  qt_out_ids = ids;
  qt_begin(t);
  return qt_finish(t, fleet_queue_enqueue(&t->q, specs, n, qt_on_enqueue, t));
}

void qt_add(qt_t *t, const char *type, const char *payload, char *id) {
  char ids[1][FLEET_JOB_ID_MAX + 1];
  fleet_job_spec_t s;
  int st = 1;

  fleet_job_spec_init(&s, type, payload, strlen(payload));
  ASSERT_OK(qt_enqueue(t, &s, 1, &st, ids));
  ASSERT_OK(st);
  if (id != NULL)
    strcpy(id, ids[0]);
}

static void qt_on_claim(fleet_queue_t *q, int status, fleet_job_t *jobs,
                        size_t n, const fleet_claim_info_t *info, void *ud) {
  qt_t *t = qt_enter(q, status);
  size_t i;

  if (status != 0) {
    ASSERT_NULL(info);
    ASSERT_EQ(0, n);
    return;
  }
  t->claim_info = *info;
  t->status = (int)n;
  for (i = 0; i < n; i++) {
    qt_job_t *j = &qt_out_jobs[i];
    ASSERT_EQ(strlen(jobs[i].id), jobs[i].id_len);
    ASSERT_LT(jobs[i].payload.len, sizeof(j->payload));
    ASSERT_NULL(fleet_job_worker(&jobs[i]));
    snprintf(j->id, sizeof(j->id), "%s", jobs[i].id);
    snprintf(j->type, sizeof(j->type), "%s", jobs[i].type);
    memcpy(j->payload, jobs[i].payload.base, jobs[i].payload.len);
    j->payload[jobs[i].payload.len] = '\0';
    j->payload_len = jobs[i].payload.len;
    j->attempts = jobs[i].attempts;
    j->max_attempts = jobs[i].max_attempts;
    j->token = jobs[i].token;
    j->deadline_ms = jobs[i].deadline_ms;
    j->run_deadline_ms = jobs[i].run_deadline_ms;
    ASSERT_LE(jobs[i].headers_len, sizeof(j->headers));
    ASSERT_EQ(jobs[i].headers_len == 0, jobs[i].headers == NULL);
    if (jobs[i].headers_len > 0)
      memcpy(j->headers, jobs[i].headers, jobs[i].headers_len);
    j->headers_len = jobs[i].headers_len;
    ASSERT_EQ(jobs[i].group != NULL ? strlen(jobs[i].group) : 0,
              jobs[i].group_len);
    snprintf(j->group, sizeof(j->group), "%s",
             jobs[i].group != NULL ? jobs[i].group : "");
    /* (The earliest deadline of the claims, which differ by partition in
     * a partitioned queue.) */
    ASSERT(info->deadline_ms <= j->deadline_ms);
  }
}

int qt_claim(qt_t *t, size_t n, uint32_t ttl_ms, qt_job_t *jobs) {
  qt_out_jobs = jobs;
  qt_begin(t);
  return qt_finish(t, fleet_queue_claim(&t->q, n, ttl_ms, qt_on_claim, t));
}

static void qt_on_batch(fleet_queue_t *q, int status, const int *results,
                        size_t n, void *ud) {
  size_t i;

  qt_enter(q, status);
  if (status != 0)
    ASSERT_NULL(results);
  for (i = 0; i < n && qt_out_results != NULL; i++)
    qt_out_results[i] = results[i];
}

int qt_refresh(qt_t *t, const fleet_claim_t *claims, size_t n, uint32_t ttl,
               int *results) {
  qt_out_results = results;
  qt_begin(t);
  return qt_finish(t,
                   fleet_queue_refresh(&t->q, claims, n, ttl, qt_on_batch, t));
}

int qt_complete(qt_t *t, const fleet_claim_t *claims, size_t n, int *results) {
  qt_out_results = results;
  qt_begin(t);
  return qt_finish(t, fleet_queue_complete(&t->q, claims, n, qt_on_batch, t));
}

int qt_complete_results(qt_t *t, const fleet_claim_t *claims,
                        const fleet_bytes_t *res, size_t n, int *out) {
  qt_out_results = out;
  qt_begin(t);
  return qt_finish(
      t, fleet_queue_complete_results(&t->q, claims, res, n, qt_on_batch, t));
}

static void qt_on_status(fleet_handle_t *q_h, int status, void *ud);

int qt_progress(qt_t *t, const fleet_claim_t *claim, uint32_t pct,
                const void *data, size_t len) {
  qt_begin(t);
  return qt_finish(
      t, fleet_queue_progress(&t->q, claim, pct, data, len, qt_on_status, t));
}

int qt_release(qt_t *t, const fleet_claim_t *claims, size_t n, int *results) {
  qt_out_results = results;
  qt_begin(t);
  return qt_finish(t, fleet_queue_release(&t->q, claims, n, qt_on_batch, t));
}

fleet_claim_t qt_claim_of(const qt_job_t *job) {
  fleet_claim_t c;
  c.id = job->id;
  c.token = job->token;
  return c;
}

static void qt_on_fail(fleet_queue_t *q, int status, int dead, uint64_t at,
                       void *ud) {
  qt_t *t = qt_enter(q, status);
  t->dead = dead;
  t->retry_at = at;
}

int qt_fail(qt_t *t, const fleet_claim_t *claim, const char *error) {
  qt_begin(t);
  return qt_finish(
      t, fleet_queue_fail(&t->q, claim, error, strlen(error), qt_on_fail, t));
}

static void qt_on_recover(fleet_queue_t *q, int status,
                          const fleet_recover_info_t *info, void *ud) {
  qt_t *t = qt_enter(q, status);
  if (status == 0)
    t->recover_info = *info;
}

int qt_recover(qt_t *t) {
  qt_begin(t);
  return qt_finish(t, fleet_queue_recover(&t->q, qt_on_recover, t));
}

static void qt_on_get(fleet_queue_t *q, int status,
                      const fleet_job_info_t *info, void *ud) {
  qt_t *t = qt_enter(q, status);

  if (status != 0) {
    ASSERT_NULL(info);
    return;
  }
  *qt_out_info = *info;
  if (qt_out_payload != NULL) {
    ASSERT_LT(info->payload.len, qt_out_payload_cap);
    memcpy(qt_out_payload, info->payload.base, info->payload.len);
    qt_out_payload[info->payload.len] = '\0';
  }
  if (qt_out_error != NULL) {
    qt_out_error[0] = '\0';
    if (info->last_error != NULL) {
      ASSERT_LT(info->last_error_len, qt_out_error_cap);
      memcpy(qt_out_error, info->last_error, info->last_error_len + 1);
    }
  }
  qt_out_info->type = NULL;
  qt_out_info->payload.base = NULL;
  qt_out_info->last_error = info->last_error != NULL ? "" : NULL;
  if (info->group != NULL) {
    ASSERT_LE(strlen(info->group), FLEET_JOB_GROUP_MAX);
    snprintf(t->get_group, sizeof(t->get_group), "%s", info->group);
    qt_out_info->group = t->get_group;
  }
  ASSERT_LE(info->result.len, sizeof(t->get_result));
  if (info->result.len > 0)
    memcpy(t->get_result, info->result.base, info->result.len);
  qt_out_info->result.base = info->has_result ? t->get_result : NULL;
  ASSERT_LE(info->progress_data.len, sizeof(t->get_progress));
  if (info->progress_data.len > 0)
    memcpy(t->get_progress, info->progress_data.base, info->progress_data.len);
  qt_out_info->progress_data.base =
      info->progress_data.base != NULL ? t->get_progress : NULL;
  ASSERT_LE(info->headers_len, sizeof(t->get_headers));
  ASSERT_EQ(info->headers_len == 0, info->headers == NULL);
  if (info->headers_len > 0)
    memcpy(t->get_headers, info->headers, info->headers_len);
  qt_out_info->headers = info->headers != NULL ? t->get_headers : NULL;
  ASSERT_LE(info->errors_len, sizeof(t->get_errors));
  ASSERT_EQ(info->nerrors == 0, info->errors == NULL);
  if (info->errors_len > 0)
    memcpy(t->get_errors, info->errors, info->errors_len);
  qt_out_info->errors = info->errors != NULL ? t->get_errors : NULL;
}

int qt_get(qt_t *t, const char *id, fleet_job_info_t *info, char *payload_out,
           size_t payload_cap, char *error_out, size_t error_cap) {
  qt_out_info = info;
  qt_out_payload = payload_out;
  qt_out_payload_cap = payload_cap;
  qt_out_error = error_out;
  qt_out_error_cap = error_cap;
  qt_begin(t);
  return qt_finish(t, fleet_queue_get(&t->q, id, qt_on_get, t));
}

static void qt_on_status(fleet_handle_t *q_h, int status, void *ud) {
  fleet_queue_t *q = (fleet_queue_t *)q_h;
  qt_enter(q, status);
}

int qt_cancel(qt_t *t, const char *id) {
  qt_begin(t);
  return qt_finish(t, fleet_queue_cancel(&t->q, id, qt_on_status, t));
}

static void qt_on_cancel(fleet_queue_t *q, int status,
                         fleet_cancel_result_t result, void *ud) {
  qt_t *t = qt_enter(q, status);
  t->cancel_result = result;
}

int qt_cancel_job(qt_t *t, const char *id, uint32_t grace_ms) {
  qt_begin(t);
  return qt_finish(
      t, fleet_queue_cancel_job(&t->q, id, grace_ms, qt_on_cancel, t));
}

static void qt_on_counts(fleet_queue_t *q, int status,
                         const fleet_queue_counts_t *c, void *ud) {
  qt_t *t = qt_enter(q, status);
  if (status == 0)
    t->counts = *c;
}

int qt_counts(qt_t *t) {
  qt_begin(t);
  return qt_finish(t, fleet_queue_counts(&t->q, qt_on_counts, t));
}

static void qt_on_list(fleet_queue_t *q, int status, const char *const *ids,
                       size_t n, uint64_t total, void *ud) {
  size_t i;

  qt_enter(q, status);
  *qt_out_n = n;
  *qt_out_total = total;
  for (i = 0; i < n; i++)
    snprintf(qt_out_ids[i], sizeof(qt_out_ids[i]), "%s", ids[i]);
}

int qt_list(qt_t *t, const char *type, size_t limit,
            char (*ids)[FLEET_JOB_ID_MAX + 1], size_t *n, uint64_t *total) {
  qt_out_ids = ids;
  qt_out_n = n;
  qt_out_total = total;
  qt_begin(t);
  return qt_finish(t, fleet_queue_list(&t->q, type, limit, qt_on_list, t));
}

static void qt_on_purge(fleet_queue_t *q, int status, uint64_t removed,
                        void *ud) {
  qt_t *t = qt_enter(q, status);
  t->removed = removed;
}

int qt_purge(qt_t *t, fleet_job_state_t which) {
  qt_begin(t);
  return qt_finish(t, fleet_queue_purge(&t->q, which, qt_on_purge, t));
}

int qt_retry(qt_t *t, const char *id) {
  qt_begin(t);
  return qt_finish(t, fleet_queue_retry(&t->q, id, qt_on_purge, t));
}

int qt_set_limits(qt_t *t, const fleet_queue_limits_t *limits) {
  qt_begin(t);
  return qt_finish(t, fleet_queue_set_limits(&t->q, limits, qt_on_status, t));
}

void qt_sleep(qt_t *t, uint64_t ms) {
  fleet_test_sleep(&t->c.loop, ms);
}

uint64_t qt_now_ms(qt_t *t) {
  return ctx_time(&t->c) / 1000;
}
