/* dash_history.c -- the dashboard's route GET /api/history?queue=Q&res=R
 * (R: minute, the default, or day): a queue's history as `fleet queue
 * history` reads it (cli_q_queue_history()), the retention's points,
 * oldest first: {"queue": Q, "res": R, "points": [{"t", "processed",
 * "failed", "depth", "wait_ms"}]}. */
#include <string.h>

#include "dash_int.h"

/* Points served: 25 hours of minutes, 32 days. */
#define DASH_HISTORY_MINUTES 1500
#define DASH_HISTORY_DAYS 32

/* Whether the query string `q` (`len` bytes) holds the item `item`
 * ("res=day"). */
static int history_has(const char *q, size_t len, const char *item) {
  size_t n = strlen(item), i = 0, end;

  while (i < len) {
    for (end = i; end < len && q[end] != '&'; end++)
      ;
    if (end - i == n && memcmp(q + i, item, n) == 0)
      return 1;
    i = end + 1;
  }
  return 0;
}

int dash_history(dash_conn_t *c, const char *q, size_t qlen, const char *queue,
                 cli_done_fn done) {
  if (history_has(q, qlen, "res=day"))
    return cli_q_queue_history(c->d->cli, queue, FLEET_HIST_DAY,
                               DASH_HISTORY_DAYS, done, c);
  if (!history_has(q, qlen, "res=minute") && memmem(q, qlen, "res=", 4) != NULL)
    return FLEET_EINVAL;
  return cli_q_queue_history(c->d->cli, queue, FLEET_HIST_MINUTE,
                             DASH_HISTORY_MINUTES, done, c);
}
