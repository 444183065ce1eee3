/* reply.c -- the one place that turns hiredis replies and Redis error text
 * into fleet replies and error codes. */
#include <stdlib.h>
#include <string.h>

#include "redis/reply.h"

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

int fleet__redis_is_noscript(const redisReply *r) {
  return r->type == REDIS_REPLY_ERROR &&
         reply_starts(r->str, r->len, "NOSCRIPT");
}

const redisReply *fleet__redis_reply_first_error(const redisReply *r) {
  size_t i;

  if (r->type == REDIS_REPLY_ERROR)
    return r;
  if (r->type == REDIS_REPLY_ARRAY || r->type == REDIS_REPLY_SET ||
      r->type == REDIS_REPLY_MAP || r->type == REDIS_REPLY_PUSH)
    for (i = 0; i < r->elements; i++) {
      const redisReply *e = fleet__redis_reply_first_error(r->element[i]);
      if (e != NULL)
        return e;
    }
  return NULL;
}

/* Nodes in the tree below and including `r`. */
static size_t reply_count(const redisReply *r) {
  size_t n = 1, i;

  if (r->type == REDIS_REPLY_ARRAY || r->type == REDIS_REPLY_SET ||
      r->type == REDIS_REPLY_MAP || r->type == REDIS_REPLY_PUSH)
    for (i = 0; i < r->elements; i++)
      n += reply_count(r->element[i]);
  return n;
}

/* Fills `out` from `r`; children go at *next, contiguous. Returns 0 or
 * FLEET_EPROTO for a reply fleet does not expect (an error inside an
 * array gives its own code). */
static int reply_fill(fleet__reply_t *out, const redisReply *r,
                      fleet__reply_t **next) {
  size_t i;
  int err;

  memset(out, 0, sizeof(*out));
  switch (r->type) {
    case REDIS_REPLY_NIL:
      out->type = FLEET__REPLY_NIL;
      return 0;
    case REDIS_REPLY_INTEGER:
    case REDIS_REPLY_BOOL:
      out->type = FLEET__REPLY_INT;
      out->integer = r->integer;
      return 0;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_DOUBLE:
      out->type = r->type == REDIS_REPLY_STATUS ? FLEET__REPLY_STATUS
                                                : FLEET__REPLY_STR;
      out->str = r->str;
      out->len = r->len;
      return 0;
    case REDIS_REPLY_ARRAY:
    case REDIS_REPLY_SET:
    case REDIS_REPLY_MAP:
    case REDIS_REPLY_PUSH: {
      fleet__reply_t *kids = *next;
      out->type = FLEET__REPLY_ARRAY;
      out->nelem = r->elements;
      out->elem = kids;
      *next += r->elements;
      for (i = 0; i < r->elements; i++) {
        err = reply_fill(&kids[i], r->element[i], next);
        if (err != 0)
          return err;
      }
      return 0;
    }
    case REDIS_REPLY_ERROR:
      return fleet__reply_error_code(r->str, r->len);
    default:
      return FLEET_EPROTO;
  }
}

int fleet__redis_reply_convert(fleet__reply_scratch_t *s, const redisReply *r,
                               const fleet__reply_t **out) {
  size_t n = reply_count(r);
  fleet__reply_t *next;

  if (n > s->cap) {
    size_t cap = s->cap > 0 ? s->cap : 16;
    fleet__reply_t *p;
    while (cap < n)
      cap *= 2;
    p = realloc(s->nodes, cap * sizeof(*p));
    if (p == NULL)
      return FLEET_ENOMEM;
    s->nodes = p;
    s->cap = cap;
  }
  next = s->nodes + 1;
  *out = s->nodes;
  return reply_fill(s->nodes, r, &next);
}

void fleet__reply_scratch_free(fleet__reply_scratch_t *s) {
  free(s->nodes);
  s->nodes = NULL;
  s->cap = 0;
}
