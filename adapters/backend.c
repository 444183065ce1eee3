/* backend.c -- what the backend interface defines for every adapter. */
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
