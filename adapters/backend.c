/* backend.c -- what the backend interface defines for every adapter. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"

static const char *const backend_op_names[FLEET__OP_COUNT] = {
#define XX(id, name, command) name,
    FLEET__OP_MAP(XX)
#undef XX
};

static const char *const backend_op_commands[FLEET__OP_COUNT] = {
#define XX(id, name, command) command,
    FLEET__OP_MAP(XX)
#undef XX
};

const char *fleet__op_name(fleet__op_t op) {
  return (unsigned)op < FLEET__OP_COUNT ? backend_op_names[op] : NULL;
}

const char *fleet__op_command(fleet__op_t op) {
  return (unsigned)op < FLEET__OP_COUNT ? backend_op_commands[op] : NULL;
}

int fleet__op_fenced(fleet__op_t op) {
  switch (op) {
#define XX(id) case FLEET__OP_##id:
    FLEET__OPS_FENCED(XX)
#undef XX
    return 1;
    default:
      return 0;
  }
}

int fleet__backend_set_epoch(fleet__backend_t *be, const char *epoch) {
  if (be->vt == &fleet__memory_backend)
    return fleet__memory_set_epoch(be, epoch);
  if (be->vt == &fleet__redis_backend)
    return fleet__redis_set_epoch(be, epoch);
  return FLEET_EINVAL;
}

void fleet__backend_set_detail(fleet__backend_t *be, const char *fmt, ...) {
  va_list ap;

  va_start(ap, fmt);
  /* vsnprintf truncates and always terminates a non-empty buffer. */
  vsnprintf(be->detail, sizeof(be->detail), fmt, ap);
  va_end(ap);
}

void fleet__backend_set_detail_bytes(fleet__backend_t *be, const void *p,
                                     size_t len) {
  const unsigned char *s = p;
  size_t i;

  if (len > sizeof(be->detail) - 1)
    len = sizeof(be->detail) - 1;
  for (i = 0; i < len; i++)
    be->detail[i] = s[i] < 0x20 || s[i] == 0x7f ? ' ' : (char)s[i];
  be->detail[len] = '\0';
}
