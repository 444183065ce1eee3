/* assets.h -- the dashboard's static files, embedded at build time by
 * embed_assets.cmake from tools/fleet/assets/ (the table, in the build's
 * generated/assets_data.c), and finding one by its path (assets.c). */
#ifndef FLEET_CLI_ASSETS_H
#define FLEET_CLI_ASSETS_H

#include <stddef.h>

typedef struct {
  const char *path; /* "/index.html" */
  const char *type; /* its Content-Type */
  const unsigned char *data;
  size_t len;
} cli_asset_t;

/* Every asset, ended by an entry whose path is NULL. */
extern const cli_asset_t cli_assets[];

/* The asset at `path`, or NULL. */
const cli_asset_t *cli_asset_find(const char *path, size_t len);

#endif /* FLEET_CLI_ASSETS_H */
