/* map.c -- cli_map(): runs one query per name of an array (as
 * cli_scan_map() finds them) at once, and ends with the array of their
 * results in the names' order. A name whose query fails is left out
 * (another process may have deleted it meanwhile) unless every query
 * fails, when the first error is the result. */
#include <stdlib.h>

#include "map.h"

typedef struct map_s map_t;

/* The `arg` of one name's query: where its result goes. */
typedef struct {
  map_t *m;
  size_t i;
} map_slot_t;

/* The map is a query whose calls are the names' queries. */
struct map_s {
  cli_query_t base;
  cli_json_t **results;
  map_slot_t *slots;
  size_t n, failed;
};

/* Every query ended: the array of their results, unless every one
 * failed (then the first error stays the map's). */
static void map_finish(cli_query_t *q) {
  map_t *m = (map_t *)q;
  size_t i;

  if (m->failed < m->n || m->n == 0) {
    q->status = 0;
    q->res = cli_jarr();
  }
  for (i = 0; i < m->n; i++) {
    if (q->status == 0 && m->results[i] != NULL)
      cli_jadd(q->res, NULL, m->results[i]);
    else
      cli_jfree(m->results[i]);
  }
  free(m->results);
  free(m->slots);
}

static void map_one_done(cli_t *cli, int status, const char *detail,
                         cli_json_t *result, void *arg) {
  map_slot_t *slot = arg;
  map_t *m = slot->m;

  (void)cli;
  if (status != 0)
    m->failed++;
  m->results[slot->i] = result;
  /* The query's own detail ("": none, not the client's last error). */
  cli_query_answered(&m->base, status, detail != NULL ? detail : "");
}

int cli_map(cli_t *cli, cli_json_t *names, cli_map_fn fn, cli_done_fn done,
            void *arg) {
  map_t *m = cli_query_new(sizeof(*m), cli, done, arg);
  const cli_json_t *c;
  size_t i;
  int err;

  if (m != NULL) {
    m->n = names->n;
    m->results = calloc(m->n + 1, sizeof(*m->results));
    m->slots = calloc(m->n + 1, sizeof(*m->slots));
  }
  if (m == NULL || m->results == NULL || m->slots == NULL) {
    if (m != NULL) {
      free(m->results);
      free(m->slots);
      cli_query_free(&m->base, FLEET_ENOMEM);
    }
    cli_jfree(names);
    return FLEET_ENOMEM;
  }
  m->base.finish = map_finish;
  /* Every name's query, and the start, answered after the loop, so that
   * an answer during the loop cannot end the map early. */
  m->base.calls = (int)m->n + 1;
  for (i = 0, c = names->first; c != NULL; c = c->next, i++) {
    m->slots[i].m = m;
    m->slots[i].i = i;
    err = fn(cli, c->str, map_one_done, &m->slots[i]);
    if (err != 0)
      map_one_done(cli, err, NULL, NULL, &m->slots[i]);
  }
  cli_jfree(names);
  cli_query_answered(&m->base, 0, NULL);
  return 0;
}
