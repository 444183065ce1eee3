/* map.h -- one query per name, results gathered in order (map.c), and
 * the names of the objects of a kind to run it on (scan.c). */
#ifndef FLEET_CLI_MAP_H
#define FLEET_CLI_MAP_H

#include "cli.h"

/* A query on one name (cli_q_queue_stats, cli_q_lock_get, ...). */
typedef int (*cli_map_fn)(cli_t *cli, const char *name, cli_done_fn done,
                          void *arg);

/* Runs `fn` for each string of the array `names` (taken: freed here) and
 * ends with the array of the results. Returns 0 or FLEET_ENOMEM. */
int cli_map(cli_t *cli, cli_json_t *names, cli_map_fn fn, cli_done_fn done,
            void *arg);

/* The names of the objects of `kind` under the client's prefix that match
 * `name_glob` (fleet_client_scan_names(): sorted, at most `max`), then
 * cli_map() of `fn` on them. */
int cli_scan_map(cli_t *cli, fleet_object_kind_t kind, const char *name_glob,
                 size_t max, cli_map_fn fn, cli_done_fn done, void *arg);

#endif /* FLEET_CLI_MAP_H */
