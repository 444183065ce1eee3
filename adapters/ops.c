/* ops.c -- what the backend interface defines for every adapter and the
 * core alike: the op table (names, commands, fenced ops), a backend's
 * epoch and error detail, and the slot hash. It calls no adapter, so
 * that the adapters may call it while backend.c, which opens them,
 * stands above them. */
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
  if (be->vt->set_epoch == NULL)
    return FLEET_EINVAL;
  return be->vt->set_epoch(be, epoch);
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

/* CRC16-CCITT (XMODEM: polynomial 0x1021, initial 0), bit by bit, which is
 * the checksum Redis Cluster uses for slots. */
static uint16_t backend_crc16(const unsigned char *p, size_t len) {
  uint16_t crc = 0;
  size_t i;
  int b;

  for (i = 0; i < len; i++) {
    crc ^= (uint16_t)(p[i] << 8);
    for (b = 0; b < 8; b++)
      crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021)
                           : (uint16_t)(crc << 1);
  }
  return crc;
}

uint16_t fleet__key_slot(const void *key, size_t len) {
  const unsigned char *k = key;
  size_t open, close;

  for (open = 0; open < len && k[open] != '{'; open++)
    ;
  if (open < len) {
    for (close = open + 1; close < len && k[close] != '}'; close++)
      ;
    if (close < len && close > open + 1) {
      k += open + 1;
      len = close - open - 1;
    }
  }
  return (uint16_t)(backend_crc16(k, len) & (FLEET__CLUSTER_SLOTS - 1));
}
