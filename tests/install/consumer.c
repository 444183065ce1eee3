/* consumer.c -- a program built against an installed fleet, as a user would. */
#include <fleet.h>
#include <stdio.h>
#include <stdlib.h>
static void on_ping(fleet_client_t *c, int status, void *arg) {
  printf("consumer: ping %s, fleet %s\n", fleet_err_name(status),
         fleet_version_string());
  if (status != 0)
    exit(1);
  fleet_client_close(c, NULL);
}
int main(void) {
  uv_loop_t *loop = uv_default_loop();
  fleet_client_t c;
  if (fleet_client_init(loop, &c, "memory://", NULL) != 0)
    return 1;
  fleet_client_ping(&c, on_ping, NULL);
  uv_run(loop, UV_RUN_DEFAULT);
  return uv_loop_close(loop);
}
