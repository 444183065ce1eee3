/* backend.c -- what the backend interface defines for every adapter. */
#include "backend.h"

static const char *const backend_op_names[FLEET__OP_COUNT] = {
#define XX(id, name) name,
    FLEET__OP_MAP(XX)
#undef XX
};

const char *fleet__op_name(fleet__op_t op) {
  return (unsigned)op < FLEET__OP_COUNT ? backend_op_names[op] : NULL;
}
