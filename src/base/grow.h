/* cjrt: growing a heap buffer by doubling (header only: libcjrt's loader uses it too). */
#ifndef CJ_BASE_GROW_H
#define CJ_BASE_GROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Makes the array *pp (of *cap elements of `size` bytes; NULL when *cap is 0; pp points at an
 * object pointer) hold at least `need` elements: its capacity doubles from `first` until it
 * does. false on out-of-memory or overflow, the array and *cap staying as they were. */
static inline bool cj_grow_n(void *pp, size_t *cap, size_t need, size_t size, size_t first) {
  if (need <= *cap) return true;
  size_t nc = *cap ? *cap : first;
  while (nc < need) {
    if (nc > SIZE_MAX / 2) return false;
    nc *= 2;
  }
  if (nc > SIZE_MAX / size) return false;
  void *p;
  memcpy(&p, pp, sizeof p);
  void *np = realloc(p, nc * size);
  if (!np) return false;
  memcpy(pp, &np, sizeof np);
  *cap = nc;
  return true;
}

/* cj_grow_n for a byte buffer (*pp a char, unsigned char or void pointer). */
static inline bool cj_grow(void *pp, size_t *cap, size_t need, size_t first) {
  return cj_grow_n(pp, cap, need, 1, first);
}

#endif
