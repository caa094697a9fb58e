/* cjrt: flat mode's column copies (lower_ew.c: flat_pick, flat_put) with AVX-512 gathers and
 * scatters: one column of a row-major array of rows of w elements, 16 (4-byte) or 8 (8-byte)
 * rows per instruction, where the plain loop is one scalar load and store per row (GCC does
 * not vectorize a strided copy). Only data moves: the values are the plain loop's. Called only
 * when the CPU has AVX-512 (cj_vm_get_isa) and 16 * w fits an int32 index. */
#include "cpu/ew_chain.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* N rows of T per gather (GATHER) or scatter (SCATTER) with the index vector idx, then one by
 * one (the addresses cast whole: without optimization the intrinsics are macros that cast
 * their address argument unparenthesized) */
#define COL_COPY(T, N, GATHER, SCATTER)                                                    \
  do {                                                                                     \
    T *c = col, *p = packed;                                                               \
    for (; i + N <= rows; i += N) {                                                        \
      if (put)                                                                             \
        SCATTER((void *)(c + i * w), idx, _mm512_loadu_si512((const void *)(p + i)),       \
                (int)sizeof(T));                                                           \
      else                                                                                 \
        _mm512_storeu_si512((void *)(p + i), GATHER(idx, (const void *)(c + i * w),        \
                                                    (int)sizeof(T)));                      \
    }                                                                                      \
    for (; i < rows; i++) {                                                                \
      if (put) c[i * w] = p[i];                                                            \
      else p[i] = c[i * w];                                                                \
    }                                                                                      \
  } while (0)

/* put: element i of packed goes to element i * w of col; else the other way */
void cj_ew_col_copy_avx512(void *col, void *packed, int es, int64_t rows, int64_t w, bool put) {
  int64_t i = 0;
  if (es == 4) {
    __m512i idx = _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        _mm512_set1_epi32((int32_t)w));
    COL_COPY(int32_t, 16, _mm512_i32gather_epi32, _mm512_i32scatter_epi32);
  } else {
    __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                     _mm256_set1_epi32((int32_t)w));
    COL_COPY(long long, 8, _mm512_i32gather_epi64, _mm512_i32scatter_epi64);
  }
}
#undef COL_COPY
#endif
