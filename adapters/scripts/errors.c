/* errors.c -- the error map: the one place that turns a backend's error
 * text into a fleet error code (fleet__reply_error_code(), documented in
 * adapters/backend.h). Shared by both backends: Redis sends the text, the
 * memory backend writes the same text as Redis would. */
#include <stddef.h>
#include <string.h>

#include "backend.h"

/* Finds `needle` in the first `len` bytes of `text`. */
static const char *reply_find(const char *text, size_t len,
                              const char *needle) {
  size_t n = strlen(needle), i;

  for (i = 0; i + n <= len; i++)
    if (text[i] == needle[0] && memcmp(text + i, needle, n) == 0)
      return text + i;
  return NULL;
}

static int reply_starts(const char *text, size_t len, const char *prefix) {
  size_t n = strlen(prefix);
  return len >= n && memcmp(text, prefix, n) == 0;
}

/* Whether the error code (the first word) of `text` is `word`: "BUSY" is
 * the code of "BUSY Redis is busy", not of "BUSYKEY Target key name". */
static int reply_code_is(const char *text, size_t len, const char *word) {
  size_t n = strlen(word);
  return reply_starts(text, len, word) && (len == n || text[n] == ' ');
}

/* A fleet error name ("FLEET_ESTALE") at `p`, followed by a non-name
 * character or the end. */
static int reply_fleet_name(const char *p, size_t len) {
#define XX(name, value, msg)                                                   \
  if (len >= sizeof("FLEET_" #name) - 1 &&                                     \
      memcmp(p, "FLEET_" #name, sizeof("FLEET_" #name) - 1) == 0 &&            \
      (len == sizeof("FLEET_" #name) - 1 ||                                    \
       !((p[sizeof("FLEET_" #name) - 1] >= 'A' &&                              \
          p[sizeof("FLEET_" #name) - 1] <= 'Z') ||                             \
         (p[sizeof("FLEET_" #name) - 1] >= '0' &&                              \
          p[sizeof("FLEET_" #name) - 1] <= '9'))))                             \
    return FLEET_##name;
  FLEET_ERRNO_MAP(XX)
#undef XX
  return 0;
}

/* The error a script passed on, without the context Redis wrapped around
 * it. Redis 7 keeps the code of the command a script called in front
 * ("WRONGTYPE Operation ... script: <sha1>, on @user_script:1."), and
 * then `text` is returned as it is. Redis 6 put it behind the script's
 * context: "ERR Error running script (call to f_<sha1>): @user_script:1:
 * WRONGTYPE Operation ...", with one more "@user_script: 1: " and a '-'
 * for a refusal raised inside redis.call ("... @user_script: 1: -OOM
 * command not allowed ..."). Sets *inner_len. */
static const char *reply_inner(const char *text, size_t len,
                               size_t *inner_len) {
  static const char wrapper[] = "ERR Error running script";
  const char *p, *end = text + len;

  *inner_len = len;
  if (!reply_starts(text, len, wrapper))
    return text;
  p = reply_find(text, len, "): ");
  if (p == NULL)
    return text;
  p += 3;
  /* Each "@user_script:1: " or "@user_script: 1: ". */
  while (reply_starts(p, (size_t)(end - p), "@user_script:")) {
    p += 13;
    while (p < end && (*p == ' ' || (*p >= '0' && *p <= '9')))
      p++;
    if (!reply_starts(p, (size_t)(end - p), ": "))
      return text;
    p += 2;
  }
  if (p < end && *p == '-')
    p++;
  *inner_len = (size_t)(end - p);
  return p;
}

int fleet__reply_error_code(const char *text, size_t len) {
  const char *p;

  if (text == NULL)
    return FLEET_EBACKEND;
  /* Refusals of a command a script called are told by their own codes,
   * as if the script had not been there. */
  text = reply_inner(text, len, &len);
  /* A script's own error: Redis 7 passes redis.error_reply() text through
   * as it is, and wraps error() text in "ERR user_script:..." context. */
  p = reply_find(text, len, "FLEET_E");
  if (p != NULL) {
    int code = reply_fleet_name(p, len - (size_t)(p - text));
    if (code != 0)
      return code;
  }
  if (reply_find(text, len, "WRONGTYPE") != NULL)
    return FLEET_EWRONGTYPE;
  if (reply_code_is(text, len, "NOAUTH") ||
      reply_code_is(text, len, "WRONGPASS") ||
      reply_find(text, len, "invalid password") != NULL)
    return FLEET_EAUTH;
  /* Authenticated, but the user's ACL forbids the command, a key or a
   * channel: a different fix (ACL SETUSER) from a wrong password. Inside
   * a script, Redis 7.2 and later say NOPERM too; Redis 6 and 7.0 say
   * "ERR The user executing the script can't run this command or
   * subcommand" (or "can't access at least one of the keys", "can't
   * publish to the channel"). */
  if (reply_code_is(text, len, "NOPERM") ||
      reply_find(text, len, "The user executing the script ") != NULL)
    return FLEET_ENOPERM;
  if (reply_code_is(text, len, "MOVED") || reply_code_is(text, len, "ASK"))
    return FLEET_EREDIRECT;
  /* A script that reaches a key it was not given is refused the same way
   * as a command whose keys span slots. */
  if (reply_code_is(text, len, "CROSSSLOT") ||
      reply_find(text, len, "non local key") != NULL ||
      reply_find(text, len,
                 "Script attempted to access keys that do not "
                 "hash to the same slot") != NULL)
    return FLEET_ECROSSSLOT;
  if (reply_code_is(text, len, "OOM"))
    return FLEET_EOOM;
  if (reply_code_is(text, len, "READONLY"))
    return FLEET_EREADONLY;
  if (reply_code_is(text, len, "BUSY"))
    return FLEET_ESCRIPTBUSY;
  /* SELECT of a database the server does not have (the text changed in
   * Redis 6), or of any but 0 on a cluster. */
  if (reply_find(text, len, "DB index is out of range") != NULL ||
      reply_find(text, len, "invalid DB index") != NULL ||
      reply_find(text, len, "SELECT is not allowed in cluster mode") != NULL)
    return FLEET_EBADDB;
  /* The server is there but cannot serve now: loading its data set after a
   * restart, a replica without its primary, a cluster without quorum or
   * mid-resharding (also as a command inside a script meets it), no
   * replicas to acknowledge writes, every client slot taken. */
  if (reply_code_is(text, len, "LOADING") ||
      reply_code_is(text, len, "MASTERDOWN") ||
      reply_code_is(text, len, "TRYAGAIN") ||
      reply_code_is(text, len, "CLUSTERDOWN") ||
      reply_code_is(text, len, "NOREPLICAS") ||
      reply_starts(text, len, "ERR max number of clients reached") ||
      reply_find(text, len,
                 "Script attempted to execute a write command "
                 "while the cluster is down") != NULL ||
      reply_find(text, len,
                 "Script attempted to execute a command while "
                 "the cluster is down") != NULL)
    return FLEET_EUNAVAILABLE;
  return FLEET_EBACKEND;
}
