/* scan.c -- cli_scan_map(): finding fleet objects by their kind with
 * fleet_client_scan_names() (a SCAN of the client's prefix, in the
 * library), then one query per name found (cli_map(), map.c). */
#include <stdlib.h>

#include "map.h"

typedef struct {
  cli_query_t base;
  cli_map_fn fn;
} scan_t;

static void scan_on_names(fleet_client_t *client, int status,
                          const char *const *names, size_t n, void *arg) {
  scan_t *s = arg, m = *s;
  cli_json_t *arr;
  size_t i;

  (void)client;
  if (status != 0) {
    cli_query_answered(&s->base, status,
                       status == FLEET_EPROTO ? "unexpected SCAN reply" : NULL);
    return;
  }
  /* The names go to cli_map(), which answers in the scan's stead: the
   * scan is over (and no more in flight) before it starts. */
  cli_query_free(&s->base, 0);
  arr = cli_jarr();
  for (i = 0; i < n; i++)
    cli_jadd(arr, NULL, cli_jstr(names[i]));
  if (arr == NULL || arr->num == -1) {
    cli_jfree(arr);
    status = FLEET_ENOMEM;
  } else {
    status = cli_map(m.base.cli, arr, m.fn, m.base.done, m.base.arg);
  }
  if (status != 0)
    m.base.done(m.base.cli, status, NULL, NULL, m.base.arg);
}

int cli_scan_map(cli_t *cli, fleet_object_kind_t kind, const char *name_glob,
                 size_t max, cli_map_fn fn, cli_done_fn done, void *arg) {
  scan_t *s = cli_query_new(sizeof(*s), cli, done, arg);

  if (s == NULL)
    return FLEET_ENOMEM;
  s->fn = fn;
  return cli_query_sent(&s->base,
                        fleet_client_scan_names(&cli->client, kind, name_glob,
                                                max, scan_on_names, s));
}
