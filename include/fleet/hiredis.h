/* SPDX-License-Identifier: Apache-2.0 */
/* fleet/hiredis.h -- a client over the program's own hiredis connection.
 *
 * Include this header only where it is used: it names hiredis's context
 * type by a forward declaration, so it needs no hiredis include path, but
 * the program that calls it links hiredis itself (it made the context).
 * docs/deploy.md ("Your own hiredis connection") says what fleet does and
 * does not do with the context. */
#ifndef FLEET_HIREDIS_H
#define FLEET_HIREDIS_H

#include "fleet/client.h"

#ifdef __cplusplus
extern "C" {
#endif

struct redisAsyncContext;

/* Initializes `client` on `loop` over `ac`, a hiredis async context the
 * program made and already attached to `loop` with hiredis's own libuv
 * adapter (<hiredis/adapters/libuv.h>, redisLibuvAttach()). Every op is
 * sent on `ac` with redisAsyncCommandArgv (EVALSHA; a NOSCRIPT reply sends
 * the script with EVAL, which also caches it on the server).
 *
 * Pub/sub (the wake-ups of queues, workers, locks) needs a connection in
 * subscriber mode: `sub_ac` when the program hands one in (attached to the
 * same loop, used for nothing else, never closed by fleet), else fleet
 * opens its own to the host and port (or socket path) of `ac` on first use
 * and closes it with the client. That connection gets no AUTH and no
 * SELECT: hand `sub_ac` in when the server needs a password.
 *
 * fleet never closes, frees, authenticates or reconnects `ac` (nor
 * `sub_ac`). A call pending when `ac` loses its connection or the program
 * frees it fails with FLEET_ECONNLOST (hiredis hands it a NULL reply);
 * every later call then fails with FLEET_ECONNLOST, and the client stays
 * in RECONNECTING until closed. The program may free `ac` only after the
 * client's close callback, or while a call is pending on it: fleet learns
 * that `ac` is gone from such a NULL reply and touches it no more. The
 * command timeout, reconnect options, wait_replicas and max_reply_bytes do
 * not apply (hiredis 0.14 has no async timeouts); wait_replicas > 0 is
 * refused.
 *
 * Returns 0, FLEET_EINVAL (NULL loop, client or ac, `ac` in subscriber
 * mode, in error or closing, bad options) or FLEET_ENOMEM; on error nothing is
 * left on the loop. Close with fleet_client_close(): pending callbacks run
 * with FLEET_ECANCELED, and replies that `ac` delivers later are dropped;
 * `ac` stays open and usable by the program. */
FLEET_EXTERN int fleet_client_init_hiredis(
    uv_loop_t *loop, fleet_client_t *client, struct redisAsyncContext *ac,
    struct redisAsyncContext *sub_ac, const fleet_client_options_t *options);

#ifdef __cplusplus
}
#endif

#endif /* FLEET_HIREDIS_H */
