/* phase_end.c -- the end of the loop phase: a check and a prepare handle
 * that run one function once per loop iteration (phase_end.h). */
#include "phase_end.h"

static void phase_end_on_check(uv_check_t *check) {
  fleet__phase_end_t *pe =
      FLEET__CONTAINER_OF(check, fleet__phase_end_t, check);
  pe->run(pe, 0);
}

static void phase_end_on_prepare(uv_prepare_t *prepare) {
  fleet__phase_end_t *pe =
      FLEET__CONTAINER_OF(prepare, fleet__phase_end_t, prepare);
  pe->run(pe, 1);
}

void fleet__phase_end_init(fleet__phase_end_t *pe, uv_loop_t *loop,
                           fleet__phase_end_fn run) {
  uv_check_init(loop, &pe->check);
  uv_prepare_init(loop, &pe->prepare);
  pe->run = run;
}

void fleet__phase_end_arm(fleet__phase_end_t *pe) {
  uv_check_start(&pe->check, phase_end_on_check);
  uv_prepare_start(&pe->prepare, phase_end_on_prepare);
}

void fleet__phase_end_disarm(fleet__phase_end_t *pe) {
  uv_check_stop(&pe->check);
  uv_prepare_stop(&pe->prepare);
}

int fleet__phase_end_armed(const fleet__phase_end_t *pe) {
  return uv_is_active((const uv_handle_t *)&pe->check);
}

int fleet__phase_end_closing(const fleet__phase_end_t *pe) {
  return uv_is_closing((const uv_handle_t *)&pe->check);
}
