/* phase_end.h -- the end of the loop phase, one mechanism for the batcher,
 * the queue's enqueues and the worker's finishes. It depends on libuv
 * alone; a handle closes its pair with fleet__handle_phase_end_close()
 * (handle.h). */
#ifndef FLEET_SRC_PHASE_END_H
#define FLEET_SRC_PHASE_END_H

#include <uv.h>

#include "common/util.h"

/* The end of the loop phase: work gathered during one phase of the loop
 * (enqueues, finishes, items due now) goes out together at its end, from
 * the check phase after the I/O callbacks or from the prepare phase
 * before the loop blocks, whichever comes first. `run` is called with
 * `in_prepare` 1 from the prepare phase; it disarms the pair (or leaves
 * it armed for another round). Arming an armed pair does nothing. */
typedef struct fleet__phase_end_s fleet__phase_end_t;
typedef void (*fleet__phase_end_fn)(fleet__phase_end_t *pe, int in_prepare);
struct fleet__phase_end_s {
  uv_check_t check;
  uv_prepare_t prepare;
  fleet__phase_end_fn run;
};

void fleet__phase_end_init(fleet__phase_end_t *pe, uv_loop_t *loop,
                           fleet__phase_end_fn run);
void fleet__phase_end_arm(fleet__phase_end_t *pe);
void fleet__phase_end_disarm(fleet__phase_end_t *pe);
/* Whether the pair is armed. */
int fleet__phase_end_armed(const fleet__phase_end_t *pe);
/* Whether the pair is closing (or closed). */
int fleet__phase_end_closing(const fleet__phase_end_t *pe);

#endif /* FLEET_SRC_PHASE_END_H */
