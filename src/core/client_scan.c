/* client_scan.c -- fleet_client_scan_names(): the names of the objects of
 * one kind under the client's prefix, found by the keys each kind always
 * has: SCAN (never KEYS) of "{<prefix>:<glob>}:<part>" through the
 * STORE_SCAN op, a batch at a time, until the cursor comes back to "0".
 * The names are taken out of "{<prefix>:<name>}:<part>", kept once each,
 * and sorted before the callback. */
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "client.h"

/* Keys SCAN examines per call (a hint), and the most calls one walk makes,
 * so that a walk of a huge keyspace ends. */
#define SCAN_COUNT "1000"
#define SCAN_CALLS_MAX 100000

/* What marks an object of a kind: the key parts that only that kind has
 * (the key schemas in docs/), and the SCAN glob for the part: the part
 * itself when there is one, else "*". */
typedef struct {
  const char *part_glob;
  const char *const *parts;
} scan_kind_t;

static const char *const scan_lock_parts[] = {"lock", NULL};
/* (A partitioned queue's partition 0 has its count, "partitions", from
 * its creation: the queue is found, its partitions' rows join it.) */
static const char *const scan_queue_parts[] = {
    "pending",   "pending:prio", "delayed", "claims",     "stats",
    "completed", "dead",         "paused",  "partitions", NULL};
static const char *const scan_pool_parts[] = {"nodes", "workers", "rev", NULL};
static const char *const scan_cron_parts[] = {"cron:defs", NULL};
static const char *const scan_warmpool_parts[] = {"wp:meta", NULL};

/* In the order of FLEET_OBJECT_KIND_MAP. */
static const scan_kind_t scan_kinds[] = {
    {"lock", scan_lock_parts},        {"*", scan_queue_parts},
    {"*", scan_pool_parts},           {"cron:defs", scan_cron_parts},
    {"wp:meta", scan_warmpool_parts},
};

static const char *const scan_kind_names[] = {
#define XX(name, str) str,
    FLEET_OBJECT_KIND_MAP(XX)
#undef XX
};

_Static_assert(FLEET__ARRAY_SIZE(scan_kinds) ==
                   FLEET__ARRAY_SIZE(scan_kind_names),
               "one scan_kinds row per object kind");

const char *fleet_object_kind_name(int kind) {
  if (kind < 0 || (size_t)kind >= FLEET__ARRAY_SIZE(scan_kind_names))
    return "unknown";
  return scan_kind_names[kind];
}

/* A walk in flight. */
typedef struct {
  fleet_client_t *client;
  fleet_client_names_cb cb;
  void *data;
  const scan_kind_t *kind;
  char *pattern;
  size_t pattern_len;
  size_t max;
  char cursor[32];
  unsigned calls;
  char **names;
  size_t n, cap;
} scan_t;

static void scan_free(scan_t *s) {
  size_t i;

  for (i = 0; i < s->n; i++)
    free(s->names[i]);
  free(s->names);
  free(s->pattern);
  free(s);
}

static int scan_name_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Answers the walk: the names when `status` is 0. */
static void scan_end(scan_t *s, int status) {
  if (status == 0 && s->n > 1)
    qsort(s->names, s->n, sizeof(*s->names), scan_name_cmp);
  if (status == 0)
    s->cb(s->client, 0, (const char *const *)s->names, s->n, s->data);
  else
    s->cb(s->client, status, NULL, 0, s->data);
  scan_free(s);
}

/* Takes the name out of "{<prefix>:<name>}:<part>" when the part is one of
 * the kind's; keeps it once. Returns 0 or FLEET_ENOMEM. */
static int scan_take(scan_t *s, const struct fleet__client_s *c,
                     const char *key, size_t len) {
  size_t plen = c->prefix_len, i, k, name_len;
  const char *part = NULL;
  char *name;

  if (len < plen + 4 || key[0] != '{' ||
      memcmp(key + 1, c->prefix, plen) != 0 || key[plen + 1] != ':')
    return 0;
  for (k = 0; s->kind->parts[k] != NULL; k++) {
    size_t sl = strlen(s->kind->parts[k]);

    if (len < plen + 4 + sl)
      continue;
    part = key + len - sl;
    if (memcmp(part, s->kind->parts[k], sl) == 0 && part[-1] == ':' &&
        part[-2] == '}')
      break;
  }
  if (s->kind->parts[k] == NULL || part - 2 <= key + plen + 2)
    return 0;
  name_len = (size_t)(part - 2 - (key + plen + 2));
  if (memchr(key + plen + 2, '\0', name_len) != NULL)
    return 0; /* not a name of the name rule */
  for (i = 0; i < s->n; i++)
    if (strlen(s->names[i]) == name_len &&
        memcmp(s->names[i], key + plen + 2, name_len) == 0)
      return 0;
  if (s->n >= s->max)
    return 0;
  if (fleet__grow((void **)&s->names, &s->cap, s->n + 1, sizeof(char *)) != 0)
    return FLEET_ENOMEM;
  name = fleet__memdup(key + plen + 2, name_len);
  if (name == NULL)
    return FLEET_ENOMEM;
  s->names[s->n++] = name;
  return 0;
}

static void scan_on_reply(void *arg, int status, const fleet__reply_t *r);

/* Sends the next SCAN, from the walk's cursor. Its MATCH pattern is not a
 * key: the exception that backend.h allows. */
static int scan_send(scan_t *s) {
  struct fleet__client_s *c = s->client->internal_;
  fleet_bytes_t args[5];

  if (c->closing)
    return FLEET_ECLOSING;
  args[0].base = s->cursor;
  args[0].len = strlen(s->cursor);
  args[1].base = "MATCH";
  args[1].len = 5;
  args[2].base = s->pattern;
  args[2].len = s->pattern_len;
  args[3].base = "COUNT";
  args[3].len = 5;
  args[4].base = SCAN_COUNT;
  args[4].len = strlen(SCAN_COUNT);
  return fleet__backend_call(c->be, FLEET__OP_STORE_SCAN, NULL, 0, args, 5,
                             scan_on_reply, s);
}

/* One SCAN reply, {cursor, {key, ...}}: takes the names, then ends the
 * walk or sends the next SCAN. */
static void scan_on_reply(void *arg, int status, const fleet__reply_t *r) {
  scan_t *s = arg;
  struct fleet__client_s *c = s->client->internal_;
  const fleet__reply_t *keys;
  size_t i;

  if (status != 0) {
    scan_end(s, status);
    return;
  }
  if (!fleet__reply_is_array(r, 2) || r->nelem != 2 ||
      r->elem[0].type != FLEET__REPLY_STR || r->elem[0].len == 0 ||
      r->elem[0].len >= sizeof(s->cursor) ||
      !fleet__reply_is_array(&r->elem[1], 0)) {
    scan_end(s, FLEET_EPROTO);
    return;
  }
  memcpy(s->cursor, r->elem[0].str, r->elem[0].len);
  s->cursor[r->elem[0].len] = '\0';
  keys = &r->elem[1];
  for (i = 0; status == 0 && i < keys->nelem; i++)
    if (keys->elem[i].type == FLEET__REPLY_STR)
      status = scan_take(s, c, keys->elem[i].str, keys->elem[i].len);
  if (status == 0 && strcmp(s->cursor, "0") != 0 &&
      ++s->calls < SCAN_CALLS_MAX && s->n < s->max) {
    status = scan_send(s);
    if (status == 0)
      return;
    if (status == FLEET_ECLOSING)
      status = FLEET_ECANCELED;
  }
  scan_end(s, status);
}

/* Writes "{<prefix, glob-escaped>:<glob>}:<part glob>" into s->pattern.
 * Returns 0 or FLEET_ENOMEM. */
static int scan_pattern(scan_t *s, const struct fleet__client_s *c,
                        const char *glob, size_t glob_len) {
  size_t part_len = strlen(s->kind->part_glob), i, o = 0;
  char *p = malloc(2 * c->prefix_len + glob_len + part_len + 5);

  if (p == NULL)
    return FLEET_ENOMEM;
  p[o++] = '{';
  for (i = 0; i < c->prefix_len; i++) {
    if (strchr("*?[]\\", c->prefix[i]) != NULL)
      p[o++] = '\\';
    p[o++] = c->prefix[i];
  }
  p[o++] = ':';
  memcpy(p + o, glob, glob_len);
  o += glob_len;
  p[o++] = '}';
  p[o++] = ':';
  memcpy(p + o, s->kind->part_glob, part_len);
  o += part_len;
  s->pattern = p;
  s->pattern_len = o;
  return 0;
}

int fleet_client_scan_names(fleet_client_t *client, fleet_object_kind_t kind,
                            const char *name_glob, size_t max,
                            fleet_client_names_cb cb, void *user_data) {
  struct fleet__client_s *c;
  size_t glob_len;
  scan_t *s;
  int err;

  if (client == NULL || client->internal_ == NULL || cb == NULL || max == 0 ||
      (unsigned)kind >= FLEET__ARRAY_SIZE(scan_kinds))
    return FLEET_EINVAL;
  if (name_glob == NULL)
    name_glob = "*";
  glob_len = strlen(name_glob);
  if (glob_len == 0)
    return FLEET_EINVAL;
  if (glob_len > FLEET_SCAN_GLOB_MAX)
    return FLEET_E2BIG;
  c = client->internal_;
  if (c->closing)
    return FLEET_ECLOSING;
  s = calloc(1, sizeof(*s));
  if (s == NULL)
    return FLEET_ENOMEM;
  s->client = client;
  s->cb = cb;
  s->data = user_data;
  s->kind = &scan_kinds[kind];
  s->max = max;
  strcpy(s->cursor, "0");
  err = scan_pattern(s, c, name_glob, glob_len);
  if (err == 0)
    err = scan_send(s);
  if (err != 0)
    scan_free(s);
  return err;
}
