/* SPDX-License-Identifier: Apache-2.0 */
/* fleet/log.h -- the logging hook of a client (fleet_client_options_t's
 * log_cb): what fleet does in the background, told as one line of text. */
#ifndef FLEET_LOG_H
#define FLEET_LOG_H

#include <stdio.h>

#include "fleet/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The levels of a log message, most severe first. */
#define FLEET_LOG_LEVEL_MAP(XX)                                                \
  XX(ERROR, "error")                                                           \
  XX(WARN, "warn")                                                             \
  XX(INFO, "info")                                                             \
  XX(DEBUG, "debug")

typedef enum {
#define FLEET__LOG_LEVEL_ENUM(name, str) FLEET_LOG_##name,
  FLEET_LOG_LEVEL_MAP(FLEET__LOG_LEVEL_ENUM)
#undef FLEET__LOG_LEVEL_ENUM
} fleet_log_level_t;

/* Hears one message: `message` is one NUL-terminated line without a
 * trailing newline, valid until the callback returns; `data` is the
 * client option log_data. Passwords never appear in it: URLs are shown
 * as redis://user:***@host:port, and the client's own password is
 * replaced by *** wherever it would appear; control bytes are escaped by
 * fleet_escape_text(). The callback runs on the loop; it must not close
 * the client from inside. It may run inside fleet_client_init(), before
 * that returns, to warn about the URL (tls_verify=0 turns certificate
 * checks off). */
typedef void (*fleet_log_cb)(fleet_log_level_t level, const char *message,
                             void *data);

/* The name of a level ("warn"); never NULL. */
FLEET_EXTERN const char *fleet_log_level_name(fleet_log_level_t level);

/* Copies the `len` bytes at `text` into `out` as inert text, for printing
 * names, ids, payloads and server messages that may come from anyone on
 * a terminal or in a log: every control byte (0x00-0x1f, 0x7f), every
 * byte of a C1 control (U+0080-U+009F in UTF-8) and every byte that is
 * not part of valid UTF-8 becomes "\xNN" (two lowercase hex digits);
 * the rest, valid UTF-8 included, is copied as it is (a '\' too, so the
 * text stays readable as typed). The fleet tools print everything they
 * did not write themselves through it, and the logging hook's messages
 * are escaped by it as well.
 *
 * `out` gets at most `out_size` bytes, NUL included, and only whole units
 * (an escape or a UTF-8 character is never cut); nothing is written when
 * `out_size` is 0, and `out` may then be NULL. Returns the length of the
 * whole escaped text (without the NUL), as snprintf() does: a value >=
 * `out_size` means `out` was cut short. `text` may be NULL when `len` is
 * 0. Never fails. */
FLEET_EXTERN size_t fleet_escape_text(const void *text, size_t len, char *out,
                                      size_t out_size);

/* Prints one line on `out`: the text of the printf-style `fmt` and its
 * arguments made inert by fleet_escape_text(), then '\n'. For programs
 * that print what they did not write themselves (the fleet tools print
 * every such line through it). Returns 0, or FLEET_ENOMEM when no memory
 * was left (then nothing is printed). */
FLEET_EXTERN int fleet_escape_print(FILE *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif

#endif /* FLEET_LOG_H */
