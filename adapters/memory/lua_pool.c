/* lua_pool.c -- the allocator of the script host's Lua state.
 *
 * A script call allocates many small objects (strings, tables, their
 * parts) that the collector frees in bursts a little later. Through
 * realloc() those bursts overflow glibc's per-thread caches, and each
 * request of a kilobyte or more (a table's array part, a long string)
 * then consolidates the fast bins: in the profile this was a tenth of the
 * memory backend's instructions. Here a block of up to POOL_SMALL bytes
 * comes from the free list of its POOL_GRAIN-byte size class, refilled
 * from slabs, and one of up to POOL_MAX bytes from the free list of its
 * power of two, refilled by malloc(); a freed block goes back on its list,
 * never to the system. A pool therefore holds on to the most its Lua state
 * ever had in such blocks, which for fleet's scripts is the working set of
 * one call. Larger blocks go to realloc() and free(). Lua 5.1 and LuaJIT
 * always pass a block's old size, which is what lets a block carry no
 * header. */
#include <stdlib.h>
#include <string.h>

#include "memory/lua_pool.h"

#define POOL_GRAIN 16
#define POOL_SMALL 512
#define POOL_NSMALL (POOL_SMALL / POOL_GRAIN)
#define POOL_MAX (64 * 1024)
#define POOL_CLASSES (POOL_NSMALL + 7) /* 1 KB to POOL_MAX. */
#define POOL_SLAB (64 * 1024)

typedef struct pool_block_s {
  struct pool_block_s *next;
} pool_block_t;

typedef struct pool_slab_s {
  struct pool_slab_s *next;
  max_align_t data[];
} pool_slab_t;

struct fleet__lua_pool_s {
  pool_block_t *free[POOL_CLASSES];
  pool_slab_t *slabs;
  char *bump; /* The unused end of the newest slab. */
  size_t left;
};

/* The size class of a block of `size` bytes, 1 to POOL_MAX. */
static size_t pool_class(size_t size) {
  size_t c = POOL_NSMALL, cap = 2 * POOL_SMALL;

  if (size <= POOL_SMALL)
    return (size - 1) / POOL_GRAIN;
  while (cap < size) {
    cap *= 2;
    c++;
  }
  return c;
}

/* The size of the blocks of class `c`. */
static size_t pool_size(size_t c) {
  if (c < POOL_NSMALL)
    return (c + 1) * POOL_GRAIN;
  return (size_t)2 * POOL_SMALL << (c - POOL_NSMALL);
}

/* A block of class `c`, or NULL when out of memory. */
static void *pool_get(fleet__lua_pool_t *p, size_t c) {
  size_t size = pool_size(c);
  pool_block_t *b = p->free[c];
  pool_slab_t *slab;

  if (b != NULL) {
    p->free[c] = b->next;
    /* The next block of this class is likely cold (the collector freed
     * it a while ago): reading its link is what the next call waits for. */
    if (b->next != NULL)
      __builtin_prefetch(b->next, 1);
    return b;
  }
  if (c >= POOL_NSMALL)
    return malloc(size);
  if (p->left < size) {
    /* The rest of the old slab is left unused: under POOL_SMALL bytes. */
    slab = malloc(sizeof(*slab) + POOL_SLAB);
    if (slab == NULL)
      return NULL;
    slab->next = p->slabs;
    p->slabs = slab;
    p->bump = (char *)slab->data;
    p->left = POOL_SLAB;
  }
  b = (pool_block_t *)p->bump;
  p->bump += size;
  p->left -= size;
  return b;
}

static void pool_put(fleet__lua_pool_t *p, void *ptr, size_t c) {
  pool_block_t *b = ptr;

  b->next = p->free[c];
  p->free[c] = b;
}

fleet__lua_pool_t *fleet__lua_pool_new(void) {
  return calloc(1, sizeof(fleet__lua_pool_t));
}

void fleet__lua_pool_free(fleet__lua_pool_t *p) {
  pool_slab_t *slab = p->slabs;
  pool_block_t *b;
  size_t c;

  for (c = POOL_NSMALL; c < POOL_CLASSES; c++) {
    while ((b = p->free[c]) != NULL) {
      p->free[c] = b->next;
      free(b);
    }
  }
  while (slab != NULL) {
    pool_slab_t *next = slab->next;
    free(slab);
    slab = next;
  }
  free(p);
}

/* Lua's contract: `nsize` 0 frees `ptr` (if any) and returns NULL;
 * otherwise it returns a block of `nsize` bytes holding the first
 * min(osize, nsize) bytes of `ptr`, or NULL (and `ptr` untouched) when out
 * of memory. `osize` is 0 when `ptr` is NULL. */
void *fleet__lua_pool_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  fleet__lua_pool_t *p = ud;
  int pooled = ptr != NULL && osize <= POOL_MAX;
  void *q;

  if (nsize == 0) {
    if (pooled)
      pool_put(p, ptr, pool_class(osize));
    else
      free(ptr);
    return NULL;
  }
  if (nsize > POOL_MAX) {
    if (!pooled)
      return realloc(ptr, nsize);
    q = malloc(nsize);
  } else if (pooled && pool_class(osize) == pool_class(nsize)) {
    return ptr;
  } else {
    q = pool_get(p, pool_class(nsize));
  }
  if (q == NULL || ptr == NULL)
    return q;
  memcpy(q, ptr, osize < nsize ? osize : nsize);
  if (pooled)
    pool_put(p, ptr, pool_class(osize));
  else
    free(ptr);
  return q;
}
