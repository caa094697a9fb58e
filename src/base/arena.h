/* cjrt: a bump allocator. Everything of an IR module lives in its arena and dies with it.
 *
 * Allocation never fails silently: cj_arena_alloc returns NULL when malloc fails, and the
 * caller turns that into a status. Memory is zeroed. Individual frees do not exist.
 */
#ifndef CJ_BASE_ARENA_H
#define CJ_BASE_ARENA_H

#include <stddef.h>
#include <stdint.h>

typedef struct cj_arena_chunk cj_arena_chunk;

typedef struct cj_arena {
  cj_arena_chunk *head; /* current chunk */
  char *cur, *end;      /* free space of the current chunk */
  size_t total;         /* bytes obtained from malloc (for statistics) */
} cj_arena;

void cj_arena_init(cj_arena *a);
void cj_arena_release(cj_arena *a); /* frees every chunk; the arena can be reused after */

/* Zeroed memory aligned to `align` (a power of two, at most 64). NULL only on out-of-memory. */
void *cj_arena_alloc_aligned(cj_arena *a, size_t size, size_t align);
static inline void *cj_arena_alloc(cj_arena *a, size_t size) {
  return cj_arena_alloc_aligned(a, size, 16);
}
#define CJ_ARENA_NEW(a, T) ((T *)cj_arena_alloc_aligned((a), sizeof(T), _Alignof(T)))
#define CJ_ARENA_ARRAY(a, T, n) \
  ((T *)cj_arena_alloc_aligned((a), sizeof(T) * (size_t)(n), _Alignof(T)))

/* Copies: NULL only on out-of-memory. cj_arena_strndup NUL-terminates. */
void *cj_arena_memdup(cj_arena *a, const void *p, size_t n);
char *cj_arena_strndup(cj_arena *a, const char *s, size_t n);
char *cj_arena_strdup(cj_arena *a, const char *s);

#endif
