/* backoff.h -- exponential backoff with jitter (backoff.c). A leaf. */
#ifndef FLEET_COMMON_BACKOFF_H
#define FLEET_COMMON_BACKOFF_H

#include <stdint.h>

/* Exponential backoff with jitter: attempt 0 waits about `initial_ms`,
 * each next attempt twice as long, capped at `max_ms`; then a jitter of up
 * to `jitter_pct` percent of the delay is subtracted, chosen by `rnd` (any
 * 32-bit random value). With i = max(initial_ms, 1) and
 * m = max(max_ms, i), the result is always in
 * [base - base * jitter_pct / 100, base] where base = min(m, i * 2^attempt),
 * and at least 1 ms. */
uint64_t fleet__backoff_delay(uint32_t initial_ms, uint32_t max_ms,
                              uint32_t jitter_pct, uint32_t attempt,
                              uint32_t rnd);

#endif /* FLEET_COMMON_BACKOFF_H */
