/* cjrt: FNV-1a, 64 bits: the fingerprints of programs and serialized executables, and the keys
 * of collective groups; and the hash of pointer-keyed tables. Not for anything adversarial. */
#ifndef CJ_BASE_HASH_H
#define CJ_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define CJ_FNV64_SEED 0xcbf29ce484222325ull

/* Continues hash h (start from CJ_FNV64_SEED, or any other seed) over n bytes at p. */
static inline uint64_t cj_fnv64(const void *p, size_t n, uint64_t h) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) {
    h ^= s[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

/* A 32-bit hash of an address (the first steps of MurmurHash3's 64-bit finalizer), for the
 * open-addressing tables keyed by pointers. */
static inline uint32_t cj_hash_ptr(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (uint32_t)x;
}

#endif
