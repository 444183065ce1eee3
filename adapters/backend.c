/* backend.c -- the one place that opens a backend: from a URL's scheme
 * (memory://, redis:// and its Sentinel and Unix forms, the cluster
 * schemes) or over a program's own hiredis context. It names each
 * adapter's vtable and nothing else of theirs; what the adapters share
 * (the op table, the error detail, the slot hash) is in ops.c, below
 * them. */
#include "backend.h"
#include "common/url.h"

int fleet__backend_open(uv_loop_t *loop, const struct fleet__url_s *url,
                        const fleet__backend_config_t *config,
                        const fleet__backend_events_t *events, void *owner,
                        fleet__backend_t **out) {
  const fleet__backend_vtable_t *vt;

  switch (url->scheme) {
    case FLEET__URL_MEMORY:
      vt = &fleet__memory_backend;
      break;
    case FLEET__URL_CLUSTER:
      vt = &fleet__cluster_backend;
      break;
    default: /* REDIS, UNIX, SENTINEL */
      vt = &fleet__redis_backend;
      break;
  }
  return vt->open(loop, url, config, events, owner, out);
}

int fleet__backend_open_hiredis(uv_loop_t *loop, struct redisAsyncContext *ac,
                                struct redisAsyncContext *sub_ac,
                                const fleet__backend_config_t *config,
                                const fleet__backend_events_t *events,
                                void *owner, fleet__backend_t **out) {
  fleet__backend_config_t cfg = *config;

  cfg.hiredis_ac = ac;
  cfg.hiredis_sub_ac = sub_ac;
  return fleet__byo_backend.open(loop, NULL, &cfg, events, owner, out);
}
