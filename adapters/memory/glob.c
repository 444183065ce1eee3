/* glob.c -- Redis's glob-style pattern matching, for SCAN MATCH in the
 * memory backend. */
#include <stdint.h>

#include "memory/glob.h"

/* Matches the one pattern element at `p` (not '*') against byte `c`, as
 * Redis's glob does: '?', a class "[...]" (with '^' negation, "a-z"
 * ranges and '\' escapes; unclosed, it runs to the end of the pattern), an
 * escaped byte "\x", or a byte. Sets `*adv` to the element's length and
 * returns whether it matches. */
static int glob_one(const unsigned char *p, size_t plen, unsigned char c,
                    size_t *adv) {
  size_t i = 1;
  int neg = 0, hit = 0;

  switch (p[0]) {
    case '?':
      *adv = 1;
      return 1;
    case '\\':
      if (plen >= 2) {
        *adv = 2;
        return p[1] == c;
      }
      *adv = 1;
      return c == '\\';
    case '[':
      if (i < plen && p[i] == '^') {
        neg = 1;
        i++;
      }
      while (i < plen && p[i] != ']') {
        if (p[i] == '\\' && i + 1 < plen) {
          hit |= p[i + 1] == c;
          i += 2;
        } else if (i + 2 < plen && p[i + 1] == '-') {
          unsigned char lo = p[i], hi = p[i + 2];
          if (lo > hi) {
            unsigned char tmp = lo;
            lo = hi;
            hi = tmp;
          }
          hit |= c >= lo && c <= hi;
          i += 3;
        } else {
          hit |= p[i] == c;
          i++;
        }
      }
      *adv = i < plen ? i + 1 : plen;
      return hit != neg;
    default:
      *adv = 1;
      return p[0] == c;
  }
}

/* The last '*' met is the only
 * backtracking point, so the time is O(|p| * |s|) at worst. */
int fleet__glob_match(const char *pattern, size_t plen, const char *str,
                      size_t slen) {
  const unsigned char *p = (const unsigned char *)pattern;
  const unsigned char *s = (const unsigned char *)str;
  size_t pi = 0, si = 0, star = SIZE_MAX, star_s = 0, adv;

  while (si < slen) {
    if (pi < plen && p[pi] == '*') {
      star = ++pi;
      star_s = si;
    } else if (pi < plen && glob_one(p + pi, plen - pi, s[si], &adv)) {
      pi += adv;
      si++;
    } else if (star != SIZE_MAX) {
      pi = star;
      si = ++star_s;
    } else {
      return 0;
    }
  }
  while (pi < plen && p[pi] == '*')
    pi++;
  return pi == plen;
}

size_t fleet__glob_prefix(const char *p, size_t plen, char *out) {
  size_t i, n = 0;

  for (i = 0; i < plen; i++) {
    if (p[i] == '*' || p[i] == '?' || p[i] == '[')
      break;
    if (p[i] == '\\' && i + 1 < plen)
      i++;
    out[n++] = p[i];
  }
  return n;
}
