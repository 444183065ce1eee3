/* sentinel.h -- finding and following a Sentinel-monitored master.
 *
 * The sentinels of a redis[s]+sentinel:// URL are asked, one after the
 * other until one answers, for the address and config-epoch of the named
 * master (SENTINEL MASTER). The one that answered is also subscribed to
 * +switch-master and +promoted-slave, so that a failover is heard at once
 * (and asked about again until it ended). The address goes into a plain
 * node url (fleet__sentinel_node()) that the data connections connect to,
 * the config-epoch beside it (fleet__sentinel_epoch()), the fencing epoch
 * of those connections; the owner hears of every change, sets the epoch
 * (fleet__rconn_set_fence()) and kicks its connections
 * (fleet__rconn_kick()), and asks again (fleet__sentinel_refresh())
 * whenever a data connection is lost or the node it reaches is not a
 * master. */
#ifndef FLEET_REDIS_SENTINEL_H
#define FLEET_REDIS_SENTINEL_H

#include <uv.h>

#include "backend.h"
#include "common/url.h"

typedef struct fleet__sentinel_s fleet__sentinel_t;

typedef struct {
  /* The master's address or config-epoch changed, or is known for the
   * first time. */
  void (*on_master)(void *owner);
  /* Asking failed everywhere, in words (why there is no address). */
  void (*on_trouble)(void *owner, const char *why);
  /* fleet__sentinel_close() finished: the connections and the timer are
   * closed. The node url stays valid until fleet__sentinel_free(). */
  void (*on_closed)(void *owner);
} fleet__sentinel_events_t;

/* Makes the state for the sentinels of `url` (a SENTINEL url, which, like
 * `config`, must outlive the result); nothing is on the loop yet. Returns
 * 0 or FLEET_ENOMEM. */
int fleet__sentinel_new(fleet__sentinel_t **out, uv_loop_t *loop,
                        const fleet__url_t *url,
                        const fleet__backend_config_t *config,
                        const fleet__sentinel_events_t *events, void *owner);

/* Starts asking. From here on it must be closed (fleet__sentinel_close())
 * before it is freed. */
void fleet__sentinel_start(fleet__sentinel_t *s);

/* The master's url: REDIS scheme, the URL's data credentials, db and TLS
 * settings; host NULL until the sentinels named the master. Stable for
 * the life of the sentinel; host and port change in place. */
const fleet__url_t *fleet__sentinel_node(const fleet__sentinel_t *s);

/* The master's config-epoch, in decimal, from the same answer as the
 * address of fleet__sentinel_node(); "0" until the sentinels named the
 * master. Valid until the next change (events->on_master). */
const char *fleet__sentinel_epoch(const fleet__sentinel_t *s);

/* Asks again (a data connection was lost, or met a replica). Cheap when a
 * query is already under way. */
void fleet__sentinel_refresh(fleet__sentinel_t *s);

/* Closes the sentinel connections; events->on_closed follows. */
void fleet__sentinel_close(fleet__sentinel_t *s);

/* Frees a sentinel never started, or closed (after on_closed). */
void fleet__sentinel_free(fleet__sentinel_t *s);

#endif /* FLEET_REDIS_SENTINEL_H */
