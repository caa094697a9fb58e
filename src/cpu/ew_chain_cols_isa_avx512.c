/* cjrt: flat mode's column copies (lower_ew.c: flat_pick, flat_put) with AVX-512 gathers and
 * scatters: one column of a row-major array of rows of w elements, 16 (4-byte) or 8 (8-byte)
 * rows per instruction, where the plain loop is one scalar load and store per row (GCC does
 * not vectorize a strided copy). Only data moves: the values are the plain loop's. Called only
 * when the CPU has AVX-512 (cj_vm_get_isa) and 16 * w fits an int32 index. */
#include "cpu/ew_chain.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* element i * w of src for i in [0, rows), into dst[0, rows) */
void cj_ew_col_get_avx512(void *dst, const void *src, int es, int64_t rows, int64_t w) {
  int64_t i = 0;
  if (es == 4) {
    const int32_t *s = src;
    int32_t *d = dst;
    __m512i idx = _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        _mm512_set1_epi32((int32_t)w));
    for (; i + 16 <= rows; i += 16)
      _mm512_storeu_si512((void *)(d + i), _mm512_i32gather_epi32(idx, s + i * w, 4));
    for (; i < rows; i++) d[i] = s[i * w];
  } else {
    const long long *s = src;
    long long *d = dst;
    __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                     _mm256_set1_epi32((int32_t)w));
    for (; i + 8 <= rows; i += 8)
      _mm512_storeu_si512((void *)(d + i), _mm512_i32gather_epi64(idx, s + i * w, 8));
    for (; i < rows; i++) d[i] = s[i * w];
  }
}

/* the inverse: src[0, rows) to element i * w of dst */
void cj_ew_col_put_avx512(void *dst, const void *src, int es, int64_t rows, int64_t w) {
  int64_t i = 0;
  if (es == 4) {
    const int32_t *s = src;
    int32_t *d = dst;
    __m512i idx = _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        _mm512_set1_epi32((int32_t)w));
    for (; i + 16 <= rows; i += 16)
      _mm512_i32scatter_epi32(d + i * w, idx, _mm512_loadu_si512((const void *)(s + i)), 4);
    for (; i < rows; i++) d[i * w] = s[i];
  } else {
    const long long *s = src;
    long long *d = dst;
    __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                     _mm256_set1_epi32((int32_t)w));
    for (; i + 8 <= rows; i += 8)
      _mm512_i32scatter_epi64(d + i * w, idx, _mm512_loadu_si512((const void *)(s + i)), 8);
    for (; i < rows; i++) d[i * w] = s[i];
  }
}
#endif
