/* backoff.c -- exponential reconnect backoff with jitter. */
#include "backoff.h"

uint64_t fleet__backoff_delay(uint32_t initial_ms, uint32_t max_ms,
                              uint32_t jitter_pct, uint32_t attempt,
                              uint32_t rnd) {
  uint64_t base = initial_ms > 0 ? initial_ms : 1;
  uint64_t cap = max_ms > base ? max_ms : base;
  uint64_t jitter;

  /* Double without overflow: stop as soon as the cap is reached. */
  while (attempt-- > 0 && base < cap)
    base *= 2;
  if (base > cap)
    base = cap;
  if (jitter_pct > 100)
    jitter_pct = 100;
  jitter = base * jitter_pct / 100;
  if (jitter > 0)
    base -= rnd % (jitter + 1);
  return base > 0 ? base : 1;
}
