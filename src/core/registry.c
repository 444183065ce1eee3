/* registry.c -- the process registry (registry.h, docs/registry.md):
 * entries beaten by the client's batcher (REGISTRY_BEAT, one call for
 * every entry of a client), removed by REGISTRY_LEAVE, and read by
 * fleet_workers_list() (REGISTRY_LIST).
 *
 * Keys: the sorted set "{<prefix>:}:workers" (entry -> expiry, unix ms on
 * the server clock) and the hash "{<prefix>:}:workers:info" (entry ->
 * details), one slot for the whole registry of a prefix: one call lists
 * it, on a cluster too. The tag is that of an empty name, which no object
 * can have (names are 1 byte or more), and it is covered by the ACL
 * pattern ~{<prefix>:* of docs/deploy.md. Expired entries are removed by
 * the next beat or listing; the keys themselves expire when no process
 * beats any more. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "client.h"
#include "log.h"
#include "registry.h"

/* The most entries one listing reads. */
#define REG_LIST_MAX "10000"

/* Builds "{<prefix>:}" into `tag`. Returns 0 or FLEET_ENOMEM. */
static int reg_tag(fleet__key_t *tag, const struct fleet__client_s *c) {
  char *p = realloc(tag->base, c->prefix_len + 4);

  if (p == NULL)
    return FLEET_ENOMEM;
  p[0] = '{';
  memcpy(p + 1, c->prefix, c->prefix_len);
  memcpy(p + c->prefix_len + 1, ":}", 3);
  tag->base = p;
  tag->len = c->prefix_len + 3;
  tag->cap = c->prefix_len + 4;
  return 0;
}

/* Logs a failed registry write, once until a write succeeds. The entry
 * "<kind>\0<name>\0<id>" is shown as "<kind> <name> (<id>)". */
static void reg_warn(fleet__reg_t *r, const char *what, int status) {
  const char *name = r->member + strlen(r->member) + 1;
  const char *id = name + strlen(name) + 1;

  if (r->warned)
    return;
  r->warned = 1;
  fleet__log(r->h->client, FLEET_LOG_WARN,
             "registry: %s of %s %s (%s) failed: %s (%s); it goes on without "
             "it",
             what, r->member, name, id, fleet_err_name(status),
             fleet_client_last_error(r->h->client->pub));
}

/* ------------------------------------------------------------------------ */
/* Beats                                                                    */

static void reg_fill_group(fleet__batch_item_t *it, fleet_bytes_t *keys,
                           fleet_bytes_t *args) {
  fleet__reg_t *r = FLEET__CONTAINER_OF(it, fleet__reg_t, item);

  (void)args;
  keys[0] = fleet__key_bytes(&r->tag);
}

void fleet__reg_job(fleet__reg_t *r, const char *id, size_t len) {
  if (r->njobs++ >= FLEET__REG_JOBS_MAX || r->ids_oom)
    return;
  if (fleet__grow((void **)&r->ids, &r->ids_cap, r->ids_len + len + 1, 1) !=
      0) {
    r->ids_oom = 1;
    return;
  }
  r->ids[r->ids_len] = '\0';
  memcpy(r->ids + r->ids_len + 1, id, len);
  r->ids_len += len + 1;
}

/* Builds the beat's details in r->buf: the fixed part, the number of jobs
 * held and the ids listed. Out of memory, the last details go again. */
static void reg_details(fleet__reg_t *r) {
  char count[16];
  size_t clen, need;

  r->njobs = 0;
  r->ids_len = 0;
  r->ids_oom = 0;
  if (r->jobs != NULL)
    r->jobs(r);
  clen = (size_t)snprintf(count, sizeof(count), "%u", (unsigned)r->njobs);
  need = r->fixed_len + 1 + clen + (r->ids_oom ? 0 : r->ids_len);
  if (fleet__grow((void **)&r->buf, &r->buf_cap, need, 1) != 0)
    return;
  memcpy(r->buf, r->fixed, r->fixed_len);
  r->buf[r->fixed_len] = '\0';
  memcpy(r->buf + r->fixed_len + 1, count, clen);
  if (!r->ids_oom && r->ids_len > 0)
    memcpy(r->buf + r->fixed_len + 1 + clen, r->ids, r->ids_len);
  r->buf_len = need;
}

static void reg_fill(fleet__batch_item_t *it, fleet_bytes_t *keys,
                     fleet_bytes_t *args) {
  fleet__reg_t *r = FLEET__CONTAINER_OF(it, fleet__reg_t, item);

  (void)keys;
  reg_details(r);
  args[0] = (fleet_bytes_t){r->member, r->member_len};
  args[1] = (fleet_bytes_t){r->ttl, strlen(r->ttl)};
  args[2] = (fleet_bytes_t){r->started, strlen(r->started)};
  args[3] = (fleet_bytes_t){r->buf, r->buf_len};
  r->sent = 1;
}

static void reg_done(fleet__batch_item_t *it, int status,
                     const fleet__reply_t *head, const fleet__reply_t *elem,
                     uint64_t sent);

static const fleet__batch_kind_t reg_kind = {
    .op = FLEET__OP_REGISTRY_BEAT,
    .group_keys = 1,
    .item_args = 4,
    .reply_head = 1,
    .max_items = FLEET__BATCH_MAX,
    .fill_group = reg_fill_group,
    .fill = reg_fill,
    .done = reg_done,
};

/* Schedules the next beat one period from now. */
static void reg_schedule(fleet__reg_t *r) {
  struct fleet__client_s *c = r->h->client;

  if (fleet__batch_add(c, &r->item, &reg_kind, c,
                       uv_now(r->h->loop) + r->period_ms,
                       r->period_ms / 2) != 0)
    reg_warn(r, "beat", FLEET_ENOMEM);
}

static void reg_done(fleet__batch_item_t *it, int status,
                     const fleet__reply_t *head, const fleet__reply_t *elem,
                     uint64_t sent) {
  fleet__reg_t *r = FLEET__CONTAINER_OF(it, fleet__reg_t, item);
  int64_t started;

  (void)head;
  (void)sent;
  if (status == FLEET_ECLOSING || status == FLEET_ECANCELED || !r->on)
    return;
  if (status == 0 && fleet__reply_i64(elem, &started) != 0)
    status = FLEET_EPROTO;
  if (status != 0) {
    reg_warn(r, "beat", status);
  } else {
    r->warned = 0;
    if (r->started[0] == '\0')
      snprintf(r->started, sizeof(r->started), "%lld", (long long)started);
  }
  reg_schedule(r);
}

int fleet__reg_start(fleet__reg_t *r, fleet__handle_t *h, const char *kind,
                     const char *id, size_t id_len, const char *name,
                     size_t name_len, uint32_t period_ms,
                     fleet__reg_jobs_fn jobs) {
  struct fleet__client_s *c = h->client;
  size_t klen = strlen(kind), hlen;
  char host[64], pid[24], nonce[FLEET__NONCE_LEN + 1];
  size_t plen;
  int err;

  if (r->on)
    return 0;
  hlen = sizeof(host);
  if (uv_os_gethostname(host, &hlen) != 0 || hlen == 0)
    hlen = (size_t)snprintf(host, sizeof(host), "unknown");
  plen = (size_t)snprintf(pid, sizeof(pid), "%ld", (long)uv_os_getpid());
  r->h = h;
  r->jobs = jobs;
  if (period_ms < FLEET__REG_PERIOD_MIN_MS)
    period_ms = FLEET__REG_PERIOD_MIN_MS;
  if (period_ms > FLEET__REG_PERIOD_MAX_MS)
    period_ms = FLEET__REG_PERIOD_MAX_MS;
  r->period_ms = period_ms;
  snprintf(r->ttl, sizeof(r->ttl), "%u", (unsigned)(3 * period_ms));
  r->started[0] = '\0';
  fleet__ident_nonce(nonce);
  r->member_len = klen + name_len + id_len + FLEET__NONCE_LEN + 3;
  r->fixed_len = klen + id_len + name_len + hlen + plen + 4;
  r->member = malloc(r->member_len);
  r->fixed = malloc(r->fixed_len);
  err = r->member != NULL && r->fixed != NULL ? reg_tag(&r->tag, c)
                                              : FLEET_ENOMEM;
  if (err == 0) {
    char *p = r->member;

    memcpy(p, kind, klen + 1);
    memcpy(p += klen + 1, name, name_len);
    p[name_len] = '\0';
    memcpy(p += name_len + 1, id, id_len);
    p[id_len] = '\0';
    memcpy(p + id_len + 1, nonce, FLEET__NONCE_LEN);
    p = r->fixed;
    memcpy(p, kind, klen + 1);
    memcpy(p += klen + 1, id, id_len);
    p[id_len] = '\0';
    memcpy(p += id_len + 1, name, name_len);
    p[name_len] = '\0';
    memcpy(p += name_len + 1, host, hlen);
    p[hlen] = '\0';
    memcpy(p + hlen + 1, pid, plen);
    err = fleet__batch_now(c, &r->item, &reg_kind, c);
  }
  if (err != 0) {
    fleet__log(c, FLEET_LOG_WARN, "registry: %s %.*s is not registered: %s",
               kind, (int)name_len, name, fleet_err_name(err));
    fleet__reg_stop(r);
    return err;
  }
  r->on = 1;
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Leaving                                                                  */

static void reg_on_left(fleet__req_t *req, int status,
                        const fleet__reply_t *reply) {
  (void)reply;
  fleet__req_done(req);
  if (status != 0 && status != FLEET_ECANCELED)
    fleet__log(req->handle->client, FLEET_LOG_WARN,
               "registry: a removal failed: %s (%s); the entry expires on "
               "its own",
               fleet_err_name(status),
               fleet_client_last_error(req->handle->client->pub));
}

static const fleet__call_t reg_leave_call = {
    "registry.leave", FLEET__OP_REGISTRY_LEAVE, reg_on_left, NULL};

void fleet__reg_stop(fleet__reg_t *r) {
  if (r->h != NULL)
    fleet__batch_remove(r->h->client, &r->item);
  if (r->sent && r->h != NULL && !r->h->client->closing) {
    fleet_bytes_t key = fleet__key_bytes(&r->tag);
    fleet_bytes_t arg = {r->member, r->member_len};

    /* Nobody waits for it; it keeps the handle open until its reply. */
    int err = fleet__call(r->h, &reg_leave_call, NULL, NULL, &key, 1, &arg, 1);

    r->warned = 0;
    if (err != 0)
      reg_warn(r, "the removal", err);
  }
  free(r->member);
  free(r->fixed);
  free(r->buf);
  free(r->ids);
  fleet__key_free(&r->tag);
  memset(r, 0, sizeof(*r));
}

/* ------------------------------------------------------------------------ */
/* Listing                                                                  */

typedef struct {
  fleet_client_t *client;
  fleet_workers_cb cb;
  void *data;
} reg_list_t;

/* One entry's info "<started>\0<ttl>\0<kind>\0<id>\0<name>\0<host>\0
 * <pid>\0<njobs>[\0<job id>...]", copied to `copy` (NUL-terminated),
 * read into `w`. Returns 0, or -1 when it is not one fleet wrote. */
static int reg_parse(char *copy, size_t len, int64_t expiry,
                     fleet_worker_info_t *w, const char **jobs) {
  char *f[8], *p = copy, *end = copy + len, *e;
  long long started, ttl, pid, held;
  size_t i;

  for (i = 0; i < 8; i++) {
    if (p > end)
      return -1;
    f[i] = p;
    p += strlen(p) + 1;
  }
  started = strtoll(f[0], &e, 10);
  if (*e != '\0' || e == f[0])
    return -1;
  ttl = strtoll(f[1], &e, 10);
  if (*e != '\0' || e == f[1] || ttl <= 0)
    return -1;
  pid = strtoll(f[6], &e, 10);
  if (*e != '\0' || e == f[6])
    return -1;
  held = strtoll(f[7], &e, 10);
  if (*e != '\0' || e == f[7] || held < 0 || held > UINT32_MAX)
    return -1;
  w->kind = f[2];
  w->id = f[3];
  w->name = f[4];
  w->host = f[5];
  w->pid = pid;
  w->started_ms = started;
  w->seen_ms = expiry - ttl;
  w->expires_ms = expiry;
  w->jobs_held = (uint32_t)held;
  w->jobs = jobs;
  w->njobs = 0;
  while (p <= end && w->njobs < FLEET__REG_JOBS_MAX) {
    jobs[w->njobs++] = p;
    p += strlen(p) + 1;
  }
  return 0;
}

static int reg_cmp(const void *a, const void *b) {
  const fleet_worker_info_t *x = a, *y = b;
  int d = strcmp(x->kind, y->kind);

  if (d == 0)
    d = strcmp(x->name, y->name);
  return d != 0 ? d : strcmp(x->id, y->id);
}

static void reg_on_list(void *arg, int status, const fleet__reply_t *r) {
  reg_list_t l = *(reg_list_t *)arg;
  fleet_worker_info_t *ws = NULL;
  const char **jobs = NULL;
  char **copies = NULL;
  size_t n = 0, i, cap;

  free(arg);
  if (status == 0 && (!fleet__reply_is_array(r, 1) || r->nelem % 2 != 1))
    status = FLEET_EPROTO;
  cap = status == 0 ? (r->nelem - 1) / 2 : 0;
  if (cap > 0) {
    ws = calloc(cap, sizeof(*ws));
    copies = calloc(cap, sizeof(*copies));
    jobs = calloc(cap * FLEET__REG_JOBS_MAX, sizeof(*jobs));
    if (ws == NULL || copies == NULL || jobs == NULL)
      status = FLEET_ENOMEM;
  }
  for (i = 0; status == 0 && i < cap; i++) {
    const fleet__reply_t *info = &r->elem[2 + 2 * i];
    int64_t expiry;

    if (fleet__reply_i64(&r->elem[1 + 2 * i], &expiry) != 0 ||
        info->type != FLEET__REPLY_STR)
      continue; /* not an entry fleet wrote: left out */
    if ((copies[n] = fleet__memdup(info->str, info->len)) == NULL) {
      status = FLEET_ENOMEM;
      break;
    }
    if (reg_parse(copies[n], info->len, expiry, &ws[n],
                  jobs + n * FLEET__REG_JOBS_MAX) == 0)
      n++;
    else
      free(copies[n]);
  }
  if (status == 0) {
    if (n > 1)
      qsort(ws, n, sizeof(*ws), reg_cmp);
    l.cb(l.client, 0, ws, n, l.data);
  } else {
    l.cb(l.client, status, NULL, 0, l.data);
  }
  for (i = 0; copies != NULL && i < n; i++)
    free(copies[i]);
  free(copies);
  free(jobs);
  free(ws);
}

int fleet_workers_list(fleet_client_t *client, fleet_workers_cb cb,
                       void *user_data) {
  struct fleet__client_s *c;
  fleet__key_t tag = {NULL, 0, 0};
  fleet_bytes_t key, arg = {REG_LIST_MAX, strlen(REG_LIST_MAX)};
  reg_list_t *l;
  int err;

  if (client == NULL || client->internal_ == NULL || cb == NULL)
    return FLEET_EINVAL;
  c = client->internal_;
  if (c->closing)
    return FLEET_ECLOSING;
  if ((l = malloc(sizeof(*l))) == NULL || reg_tag(&tag, c) != 0) {
    free(l);
    return FLEET_ENOMEM;
  }
  l->client = client;
  l->cb = cb;
  l->data = user_data;
  key = fleet__key_bytes(&tag);
  err = fleet__backend_call(c->be, FLEET__OP_REGISTRY_LIST, &key, 1, &arg, 1,
                            reg_on_list, l);
  fleet__key_free(&tag);
  if (err != 0)
    free(l);
  return err;
}
