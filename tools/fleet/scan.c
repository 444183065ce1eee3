/* scan.c -- finding fleet objects by their kind: fleet_client_scan_names()
 * (a SCAN of the client's prefix, in the library) turned into a JSON array
 * of names, which cli_scan_map() then queries one by one. */
#include <stdlib.h>

#include "cli.h"

typedef struct {
  cli_t *cli;
  cli_done_fn done;
  void *arg;
} scan_t;

static void scan_on_names(fleet_client_t *client, int status,
                          const char *const *names, size_t n, void *arg) {
  scan_t s = *(scan_t *)arg;
  const char *detail = NULL;
  cli_json_t *arr = NULL;
  size_t i;

  free(arg);
  if (status == 0) {
    arr = cli_jarr();
    for (i = 0; i < n; i++)
      cli_jadd(arr, NULL, cli_jstr(names[i]));
    if (arr == NULL || arr->num == -1) {
      cli_jfree(arr);
      arr = NULL;
      status = FLEET_ENOMEM;
    }
  } else {
    detail = status == FLEET_EPROTO ? "unexpected SCAN reply"
                                    : fleet_client_last_error(client);
  }
  s.cli->inflight--;
  s.done(s.cli, status, detail, arr, s.arg);
}

int cli_scan_names(cli_t *cli, fleet_object_kind_t kind, const char *name_glob,
                   size_t max, cli_done_fn done, void *arg) {
  scan_t *s = malloc(sizeof(*s));
  int err;

  if (s == NULL)
    return FLEET_ENOMEM;
  s->cli = cli;
  s->done = done;
  s->arg = arg;
  err = fleet_client_scan_names(&cli->client, kind, name_glob, max,
                                scan_on_names, s);
  if (err != 0) {
    free(s);
    return err;
  }
  cli->inflight++;
  return 0;
}
