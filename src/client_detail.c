/* client_detail.c -- fleet_client_last_error(): the backend's error text. */
#include "client.h"

const char *fleet_client_last_error(const fleet_client_t *client) {
  if (client == NULL || client->internal_ == NULL)
    return "";
  return client->internal_->be->detail;
}
