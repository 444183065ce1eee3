/* scan.c -- finding fleet objects by their keys: SCAN (never KEYS) of the
 * client's prefix through the backend's SCAN op, then one query per name
 * found (cli_scan_map()), whose results make one array. */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cli.h"
#include "client.h"

/* Keys SCAN examines per call (a hint), and the most calls one listing
 * makes, so that a listing of a huge keyspace ends. */
#define SCAN_COUNT "1000"
#define SCAN_CALLS_MAX 100000

typedef struct {
  cli_t *cli;
  cli_done_fn done;
  void *arg;
  cli_buf_t pattern;
  const char *const *suffixes;
  size_t max;
  char cursor[32];
  unsigned calls;
  char **names;
  size_t n, cap;
} scan_t;

static int scan_send(scan_t *s);

static void scan_end(scan_t *s, int status, const char *detail) {
  cli_json_t *arr = NULL;
  size_t i;

  if (status == 0) {
    arr = cli_jarr();
    for (i = 0; i < s->n; i++)
      cli_jadd(arr, NULL, cli_jstr(s->names[i]));
    if (arr == NULL || arr->num == -1) {
      cli_jfree(arr);
      arr = NULL;
      status = FLEET_ENOMEM;
    }
  }
  for (i = 0; i < s->n; i++)
    free(s->names[i]);
  free(s->names);
  cli_buf_free(&s->pattern);
  s->cli->inflight--;
  s->done(s->cli, status, detail, arr, s->arg);
  free(s);
}

static int name_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Takes the name out of "{<prefix>:<name>}:<suffix>" if the suffix is one
 * of those wanted; keeps it once. */
static void scan_take(scan_t *s, const char *key, size_t len) {
  size_t plen = strlen(s->cli->prefix), i, k;
  const char *sfx;
  char *name, **grown;

  if (len < plen + 4 || key[0] != '{' ||
      memcmp(key + 1, s->cli->prefix, plen) != 0 || key[plen + 1] != ':')
    return;
  for (k = 0; s->suffixes[k] != NULL; k++) {
    size_t sl = strlen(s->suffixes[k]);

    if (len < plen + 4 + sl)
      continue;
    sfx = key + len - sl;
    if (memcmp(sfx, s->suffixes[k], sl) == 0 && sfx[-1] == ':' &&
        sfx[-2] == '}')
      break;
  }
  if (s->suffixes[k] == NULL)
    return;
  name = strndup(key + plen + 2, (size_t)(sfx - 2 - (key + plen + 2)));
  if (name == NULL || name[0] == '\0') {
    free(name);
    return;
  }
  for (i = 0; i < s->n; i++)
    if (strcmp(s->names[i], name) == 0) {
      free(name);
      return;
    }
  if (s->n >= s->max) {
    free(name);
    return;
  }
  if (s->n == s->cap) {
    s->cap = s->cap ? s->cap * 2 : 16;
    grown = realloc(s->names, s->cap * sizeof(*grown));
    if (grown == NULL) {
      free(name);
      return;
    }
    s->names = grown;
  }
  s->names[s->n++] = name;
}

static void scan_on_reply(void *arg, int status, const fleet__reply_t *r) {
  scan_t *s = arg;
  const fleet__reply_t *keys;
  size_t i;

  if (status != 0) {
    scan_end(s, status, fleet_client_last_error(&s->cli->client));
    return;
  }
  if (r->type != FLEET__REPLY_ARRAY || r->nelem != 2 ||
      r->elem[0].type != FLEET__REPLY_STR || r->elem[0].len == 0 ||
      r->elem[0].len >= sizeof(s->cursor) ||
      r->elem[1].type != FLEET__REPLY_ARRAY) {
    scan_end(s, FLEET_EPROTO, "unexpected SCAN reply");
    return;
  }
  memcpy(s->cursor, r->elem[0].str, r->elem[0].len);
  s->cursor[r->elem[0].len] = '\0';
  keys = &r->elem[1];
  for (i = 0; i < keys->nelem; i++)
    if (keys->elem[i].type == FLEET__REPLY_STR)
      scan_take(s, keys->elem[i].str, keys->elem[i].len);
  if (strcmp(s->cursor, "0") == 0 || ++s->calls >= SCAN_CALLS_MAX ||
      s->n >= s->max) {
    if (s->n > 1)
      qsort(s->names, s->n, sizeof(*s->names), name_cmp);
    scan_end(s, 0, NULL);
    return;
  }
  status = scan_send(s);
  if (status != 0)
    scan_end(s, status, NULL);
}

static int scan_send(scan_t *s) {
  fleet_bytes_t args[5];

  args[0].base = s->cursor;
  args[0].len = strlen(s->cursor);
  args[1].base = "MATCH";
  args[1].len = 5;
  args[2].base = s->pattern.p;
  args[2].len = s->pattern.len;
  args[3].base = "COUNT";
  args[3].len = 5;
  args[4].base = SCAN_COUNT;
  args[4].len = strlen(SCAN_COUNT);
  return fleet__backend_call(fleet__client_backend(&s->cli->client),
                             FLEET__OP_STORE_SCAN, NULL, 0, args, 5,
                             scan_on_reply, s);
}

int cli_scan_names(cli_t *cli, const char *name_glob, const char *suffix_glob,
                   const char *const *suffixes, size_t max, cli_done_fn done,
                   void *arg) {
  scan_t *s = calloc(1, sizeof(*s));
  int err;

  if (s == NULL)
    return FLEET_ENOMEM;
  s->cli = cli;
  s->done = done;
  s->arg = arg;
  s->suffixes = suffixes;
  s->max = max;
  strcpy(s->cursor, "0");
  cli_buf_str(&s->pattern, "{");
  cli_glob_escape(&s->pattern, cli->prefix, strlen(cli->prefix));
  cli_buf_str(&s->pattern, ":");
  cli_buf_str(&s->pattern, name_glob);
  cli_buf_str(&s->pattern, "}:");
  cli_buf_str(&s->pattern, suffix_glob);
  if (s->pattern.oom) {
    cli_buf_free(&s->pattern);
    free(s);
    return FLEET_ENOMEM;
  }
  err = scan_send(s);
  if (err != 0) {
    cli_buf_free(&s->pattern);
    free(s);
    return err;
  }
  cli->inflight++;
  return 0;
}
