/* cjrt: device memory of the CPU backend (private to src/cpu/): aligned blocks with a bounded
 * cache of freed large blocks.
 *
 * Why: a large block (a result buffer of tens of MB) comes from mmap and goes back to the
 * kernel when freed, so every execution that allocates its outputs afresh pays a page fault
 * (and the kernel's zeroing) per 4 KiB page it writes: for a 64 MB output that is 16384 faults,
 * often more time than the computation. Freed blocks of at least CJ_MEM_CACHE_MIN bytes are
 * therefore kept, by size class (four classes per power of two, so a block serves requests up
 * to 25% smaller than its class), and handed to the next request of their class.
 *
 * Bounds: the cache holds at most `limit` bytes (default: the smaller of 512 MiB and 1/8 of
 * physical memory; the environment variable CJRT_CPU_MEM_CACHE_MB overrides it when the first
 * block is allocated, 0 disables caching). Past the limit the least recently freed blocks are
 * released; a block larger than the limit is never cached. A background thread, started with the
 * first cached block, releases blocks that stayed unused for `idle` (default 2 s), so an idle
 * process gives its memory back.
 *
 * Ownership: a block is either owned (returned by alloc, not yet freed) or in the cache, never
 * both: alloc takes a block out of the cache under a lock, free puts it back under the same lock.
 * A block carries a 64-byte header in front of the pointer returned (its size class and its
 * state); freeing a pointer twice is detected by the state and ignored (counted in
 * `double_frees`). Thread safe.
 */
#ifndef CJ_CPU_ALLOC_H
#define CJ_CPU_ALLOC_H

#include <stddef.h>
#include <stdint.h>

enum { CJ_MEM_ALIGN = 64 };
#define CJ_MEM_CACHE_MIN ((size_t)256 << 10) /* smaller blocks go straight to malloc/free */

/* 64-byte aligned memory of at least `bytes` bytes (0 is allowed); NULL on out-of-memory. */
void *cj_mem_alloc(size_t bytes);
/* Frees (or caches) a block of cj_mem_alloc; NULL is fine. */
void cj_mem_free(void *p);

typedef struct cj_mem_stats {
  uint64_t hits;          /* allocations served from the cache */
  uint64_t misses;        /* cacheable allocations that had to allocate */
  uint64_t released;      /* cached blocks given back (over the limit, idle, or trimmed) */
  uint64_t double_frees;  /* frees of a block that was not owned (ignored) */
  uint64_t cached_bytes;  /* bytes held by the cache now */
  uint64_t cached_blocks;
  uint64_t limit;         /* the cache's bound in bytes */
  int64_t idle_ms;        /* how long a cached block may stay unused */
} cj_mem_stats;

void cj_mem_get_stats(cj_mem_stats *out);
/* Releases every cached block. */
void cj_mem_trim(void);
/* Sets the bound (bytes; 0 disables caching and releases the cache) and the idle time (ms;
 * <= 0 keeps the current one). For tests and tuning. */
void cj_mem_configure(uint64_t limit, int64_t idle_ms);

#endif
