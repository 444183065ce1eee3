/* cmd_queue_errs.c -- a job's attempt history in `fleet queue get`
 * (docs/queue.md, "Attempt history"): the "errors" array of its result,
 * which the dashboard's job pane shows too, and its text form, a line per
 * failed attempt. */
#include <inttypes.h>
#include <string.h>

#include "cli.h"

void cli_errors_json(cli_json_t *res, const fleet_job_info_t *info) {
  cli_json_t *arr = cli_jadd(res, "errors", cli_jarr()), *o;
  const char *err;
  size_t cursor = 0, len;
  uint32_t attempt;
  uint64_t ms;

  while (fleet_job_info_error_next(info, &cursor, &attempt, &ms, &err, &len)) {
    o = cli_jadd(arr, NULL, cli_jobj());
    cli_jadd(o, "attempt", cli_jint(attempt));
    cli_jadd_time(o, "time_ms", (int64_t)ms);
    cli_jadd(o, "error", cli_jbytes(err, len));
  }
}

static void print_get(const cli_json_t *res) {
  const cli_json_t *errs = cli_jget(res, "errors"), *e, *a, *t, *m;

  cli_kv_but(stdout, res, "errors");
  for (e = errs != NULL ? errs->first : NULL; e != NULL; e = e->next) {
    cli_buf_t b = {0};

    a = cli_jget(e, "attempt");
    t = cli_jget(e, "time");
    m = cli_jget(e, "error");
    cli_buf_printf(&b, "attempt %" PRId64 " at %s: ", a != NULL ? a->num : 0,
                   t != NULL && t->type == CLI_JSTR ? t->str : "-");
    if (m != NULL)
      cli_buf_esc(&b, m->str, m->len);
    printf("%s\n", b.p != NULL && !b.oom ? b.p : "");
    cli_buf_free(&b);
  }
}

const cli_view_t cli_get_view = {NULL, print_get};
