/* cjrt: the 8-row x 32-column f32 accumulator tile that the GEMM micro-kernels of dot_general
 * (k_dot.c) and of convolution (k_conv_gemm.c) keep in registers, written once. The kernels
 * differ in where a row's lhs value comes from (dot: a packed panel; convolution: a pointer per
 * output row into its input window, implicit im2col), so a kernel defines GT_A(i), row i's
 * current lhs element (an lvalue float), before GT_ROWS(GT_FMA512) or GT_ROWS(GT_FMA256); the
 * weights of the current k are in b0, b1; the result tile is c with row stride ldc, added to
 * when acc. Row i of the tile is the pair c<i>a, c<i>b: 2 zmm (32 floats) on AVX-512, 2 ymm (16
 * floats, half the panel) on AVX2. Include it after <immintrin.h>, in x86-64 GCC/clang code. */
#ifndef CJRT_CPU_GEMM_TILE_H
#define CJRT_CPU_GEMM_TILE_H

#define GT_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

#define GT_DECL512(i) __m512 c##i##a = _mm512_setzero_ps(), c##i##b = _mm512_setzero_ps();
#define GT_FMA512(i)                              \
  {                                               \
    __m512 ai = _mm512_set1_ps(GT_A(i));          \
    c##i##a = _mm512_fmadd_ps(ai, b0, c##i##a);   \
    c##i##b = _mm512_fmadd_ps(ai, b1, c##i##b);   \
  }
#define GT_STORE512(i)                                            \
  {                                                               \
    float *cp = c + i * ldc;                                      \
    if (acc) {                                                    \
      c##i##a = _mm512_add_ps(c##i##a, _mm512_loadu_ps(cp));      \
      c##i##b = _mm512_add_ps(c##i##b, _mm512_loadu_ps(cp + 16)); \
    }                                                             \
    _mm512_storeu_ps(cp, c##i##a);                                \
    _mm512_storeu_ps(cp + 16, c##i##b);                           \
  }

#define GT_DECL256(i) __m256 c##i##a = _mm256_setzero_ps(), c##i##b = _mm256_setzero_ps();
#define GT_FMA256(i)                              \
  {                                               \
    __m256 ai = _mm256_broadcast_ss(&GT_A(i));    \
    c##i##a = _mm256_fmadd_ps(ai, b0, c##i##a);   \
    c##i##b = _mm256_fmadd_ps(ai, b1, c##i##b);   \
  }

#endif
