/* demo_cron_sched.c -- fleet-demo cron's scheduler verbs (define, remove,
 * enable, disable, list, history, run). A placeholder until the scheduler
 * lands: every verb says so and exits 2. */
#include <stdio.h>

#include "demo.h"

int demo_cron_scheduler(const demo_args_t *a) {
  fprintf(stderr, "fleet-demo cron %s: not built yet\n",
          a->argc > 0 ? a->argv[0] : "");
  return 2;
}
