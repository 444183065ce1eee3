/* lua_pool.h -- the allocator of the script host's Lua state: small blocks
 * from per-size free lists, larger ones from realloc. */
#ifndef FLEET_MEMORY_LUA_POOL_H
#define FLEET_MEMORY_LUA_POOL_H

#include <stddef.h>

typedef struct fleet__lua_pool_s fleet__lua_pool_t;

/* A new, empty pool, or NULL when out of memory. */
fleet__lua_pool_t *fleet__lua_pool_new(void);

/* Frees the pool and its blocks: call it after lua_close(), which hands
 * every block back. */
void fleet__lua_pool_free(fleet__lua_pool_t *p);

/* A lua_Alloc over the pool `ud`: lua_newstate(fleet__lua_pool_alloc, p). */
void *fleet__lua_pool_alloc(void *ud, void *ptr, size_t osize, size_t nsize);

#endif /* FLEET_MEMORY_LUA_POOL_H */
