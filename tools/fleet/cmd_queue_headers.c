/* cmd_queue_headers.c -- a job's headers in `fleet queue` (docs/queue.md,
 * "Headers and tracing"): the --header KEY=VALUE options of `queue add`,
 * and the "headers" object of `queue get`. */
#include <string.h>

#include "cli.h"

const char *cli_header_opts(int *argc, char **argv, fleet_header_t *h,
                            size_t *n, char *buf, size_t cap) {
  const char *v, *eq;
  size_t len, used = 0;

  *n = 0;
  while ((v = cli_opt(argc, argv, "--header")) != NULL) {
    eq = strchr(v, '=');
    len = strlen(v);
    /* (The library checks the keys and values themselves.) */
    if (eq == NULL || *n == FLEET_JOB_HEADERS_MAX || len + 1 > cap - used)
      return v;
    memcpy(buf + used, v, len + 1);
    buf[used + (size_t)(eq - v)] = '\0';
    h[*n].key = buf + used;
    h[*n].value = buf + used + (size_t)(eq - v) + 1;
    (*n)++;
    used += len + 1;
  }
  return NULL;
}

void cli_headers_json(cli_json_t *res, const char *headers, size_t len) {
  cli_json_t *o = cli_jadd(res, "headers", cli_jobj());
  const char *k, *v;
  size_t cursor = 0;

  while (fleet_headers_next(headers, len, &cursor, &k, &v))
    cli_jadd(o, k, cli_jstr(v));
}
