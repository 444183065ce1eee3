/* glob.h -- Redis's glob-style patterns, for SCAN MATCH in the memory
 * backend. */
#ifndef FLEET_MEMORY_GLOB_H
#define FLEET_MEMORY_GLOB_H

#include <stddef.h>

/* Whether `s` matches the glob `p` as Redis's stringmatchlen() decides:
 * '*', '?', classes "[...]" with '^' negation, "a-z" ranges and '\'
 * escapes, and escaped bytes "\x". O(|p| * |s|) at worst. */
int fleet__glob_match(const char *p, size_t plen, const char *s, size_t slen);

/* The length of the literal start of `p` (up to its first '*', '?' or
 * '['), written to `out` (room for plen bytes) with escapes resolved:
 * every match starts with it. */
size_t fleet__glob_prefix(const char *p, size_t plen, char *out);

#endif /* FLEET_MEMORY_GLOB_H */
