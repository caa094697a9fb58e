#include "base/arena.h"

#include <stdlib.h>
#include <string.h>

struct cj_arena_chunk {
  cj_arena_chunk *next;
  size_t size;
  _Alignas(64) char data[];
};

void cj_arena_init(cj_arena *a) { memset(a, 0, sizeof *a); }

void cj_arena_release(cj_arena *a) {
  cj_arena_chunk *c = a->head;
  while (c) {
    cj_arena_chunk *n = c->next;
    free(c);
    c = n;
  }
  memset(a, 0, sizeof *a);
}

void *cj_arena_alloc_aligned(cj_arena *a, size_t size, size_t align) {
  if (align < 1) align = 1;
  if (align > 64) return NULL;
  uintptr_t p = ((uintptr_t)a->cur + (align - 1)) & ~(uintptr_t)(align - 1);
  if (!a->cur || p + size > (uintptr_t)a->end || p + size < p) {
    size_t want = size + align;
    size_t chunk = a->head ? a->head->size * 2 : 4096;
    if (chunk > (1u << 20)) chunk = 1u << 20;
    if (chunk < want) chunk = want;
    if (chunk < want) return NULL; /* overflow */
    cj_arena_chunk *c = malloc(sizeof(cj_arena_chunk) + chunk);
    if (!c) return NULL;
    c->size = chunk;
    c->next = a->head;
    a->head = c;
    a->cur = c->data;
    a->end = c->data + chunk;
    a->total += chunk;
    p = ((uintptr_t)a->cur + (align - 1)) & ~(uintptr_t)(align - 1);
  }
  a->cur = (char *)(p + size);
  memset((void *)p, 0, size);
  return (void *)p;
}

void *cj_arena_memdup(cj_arena *a, const void *p, size_t n) {
  void *d = cj_arena_alloc_aligned(a, n ? n : 1, 16);
  if (d && n) memcpy(d, p, n);
  return d;
}

char *cj_arena_strndup(cj_arena *a, const char *s, size_t n) {
  char *d = cj_arena_alloc_aligned(a, n + 1, 1);
  if (!d) return NULL;
  if (n) memcpy(d, s, n);
  d[n] = 0;
  return d;
}

char *cj_arena_strdup(cj_arena *a, const char *s) { return cj_arena_strndup(a, s, strlen(s)); }
