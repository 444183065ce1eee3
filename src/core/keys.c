/* keys.c -- names of fleet objects and the keys built from them. */
#include <stdlib.h>
#include <string.h>

#include "keys.h"

int fleet__key_build(fleet__key_t *key, const char *prefix, size_t prefix_len,
                     const void *name, size_t name_len, const char *part) {
  size_t part_len = part != NULL ? strlen(part) : 0;
  size_t need = prefix_len + name_len + part_len + 5;
  char *p;

  if (need > key->cap) {
    p = realloc(key->base, need);
    if (p == NULL)
      return FLEET_ENOMEM;
    key->base = p;
    key->cap = need;
  }
  p = key->base;
  *p++ = '{';
  memcpy(p, prefix, prefix_len);
  p += prefix_len;
  *p++ = ':';
  memcpy(p, name, name_len);
  p += name_len;
  *p++ = '}';
  if (part != NULL) {
    *p++ = ':';
    memcpy(p, part, part_len);
    p += part_len;
  }
  key->len = (size_t)(p - key->base);
  return 0;
}

void fleet__key_free(fleet__key_t *key) {
  free(key->base);
  key->base = NULL;
  key->len = key->cap = 0;
}
