/* map.c -- cli_map(): runs one query per name of an array (as
 * cli_scan_map() finds them) at once, and ends with the array of their
 * results in the names' order. A name whose query fails is left out
 * (another process may have deleted it meanwhile) unless every query
 * fails, when the first error is the result. */
#include <stdlib.h>

#include "map.h"

typedef struct map_s map_t;

typedef struct {
  map_t *m;
  size_t i;
} map_slot_t;

struct map_s {
  cli_t *cli;
  cli_done_fn done;
  void *arg;
  cli_json_t **results;
  map_slot_t *slots;
  size_t n, left, failed;
  int status;
  char *detail;
};

static void map_end(map_t *m) {
  cli_json_t *arr = NULL;
  size_t i;
  int status = m->status;

  if (m->failed < m->n || m->n == 0) {
    status = 0;
    arr = cli_jarr();
    for (i = 0; i < m->n; i++) {
      if (m->results[i] != NULL)
        cli_jadd(arr, NULL, m->results[i]);
    }
    if (arr == NULL)
      status = FLEET_ENOMEM;
  } else {
    for (i = 0; i < m->n; i++)
      cli_jfree(m->results[i]);
  }
  m->cli->inflight--;
  m->done(m->cli, status, m->detail, arr, m->arg);
  free(m->detail);
  free(m->results);
  free(m->slots);
  free(m);
}

static void map_one_done(cli_t *cli, int status, const char *detail,
                         cli_json_t *result, void *arg) {
  map_slot_t *slot = arg;
  map_t *m = slot->m;

  (void)cli;
  if (status != 0) {
    m->failed++;
    if (m->status == 0) {
      m->status = status;
      m->detail = detail != NULL ? strdup(detail) : NULL;
    }
  }
  m->results[slot->i] = result;
  if (--m->left == 0)
    map_end(m);
}

int cli_map(cli_t *cli, cli_json_t *names, cli_map_fn fn, cli_done_fn done,
            void *arg) {
  map_t *m = calloc(1, sizeof(*m));
  const cli_json_t *c;
  size_t i;
  int err;

  if (m == NULL) {
    cli_jfree(names);
    return FLEET_ENOMEM;
  }
  m->cli = cli;
  m->done = done;
  m->arg = arg;
  m->n = names->n;
  m->results = calloc(m->n + 1, sizeof(*m->results));
  m->slots = calloc(m->n + 1, sizeof(*m->slots));
  if (m->results == NULL || m->slots == NULL) {
    free(m->results);
    free(m->slots);
    free(m);
    cli_jfree(names);
    return FLEET_ENOMEM;
  }
  cli->inflight++;
  /* Counts the starts as one more pending, so that an answer during the
   * loop cannot end the map early. */
  m->left = m->n + 1;
  for (i = 0, c = names->first; c != NULL; c = c->next, i++) {
    m->slots[i].m = m;
    m->slots[i].i = i;
    err = fn(cli, c->str, map_one_done, &m->slots[i]);
    if (err != 0) {
      m->slots[i].m = m;
      map_one_done(cli, err, NULL, NULL, &m->slots[i]);
    }
  }
  cli_jfree(names);
  if (--m->left == 0)
    map_end(m);
  return 0;
}
