/* cjrt: the 8-row accumulator tile that the GEMM micro-kernels of dot_general (k_dot.c) and of
 * convolution (k_conv_gemm.c) keep in registers, written once. Row i of the tile is the pair of
 * vectors c<i>a, c<i>b: on AVX-512 2 zmm (32 floats or 16 doubles), on AVX2 2 ymm (16 floats,
 * half of an f32 panel). The kernels differ in where a row's lhs value comes from (dot: a packed
 * panel; convolution: a pointer per output row into its input window, implicit im2col), so a
 * kernel defines GT_A(i), row i's current lhs element (an lvalue), before GT_ROWS(GT_FMA...);
 * the weights of the current k are in b0, b1; the result tile is c with row stride ldc, added to
 * when acc; GT_SPILL... writes the tile to an array t[8][...] instead. Include it after
 * <immintrin.h>, in x86-64 GCC/clang code. */
#ifndef CJRT_CPU_GEMM_TILE_H
#define CJRT_CPU_GEMM_TILE_H

#include <stdint.h>

#define GT_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

/* The row operations for vectors of type V with the intrinsics _mm<W>_..._<S> (W 512 or 256, S
 * ps or pd), L elements per vector, of element type T: a row's accumulators, its update by the
 * broadcast lhs value AI, its store at row pointer CP (added to when acc) and its spill. */
#define GT_DECL(i, V, W, S) V c##i##a = _mm##W##_setzero_##S(), c##i##b = _mm##W##_setzero_##S();
#define GT_FMA(i, V, W, S, AI)                         \
  {                                                    \
    V ai = AI;                                         \
    c##i##a = _mm##W##_fmadd_##S(ai, b0, c##i##a);     \
    c##i##b = _mm##W##_fmadd_##S(ai, b1, c##i##b);     \
  }
#define GT_STORE(i, T, W, S, L, CP)                                      \
  {                                                                      \
    T *cp = CP;                                                          \
    if (acc) {                                                           \
      c##i##a = _mm##W##_add_##S(c##i##a, _mm##W##_loadu_##S(cp));       \
      c##i##b = _mm##W##_add_##S(c##i##b, _mm##W##_loadu_##S(cp + (L))); \
    }                                                                    \
    _mm##W##_storeu_##S(cp, c##i##a);                                    \
    _mm##W##_storeu_##S(cp + (L), c##i##b);                              \
  }
#define GT_SPILL(i, W, S, L)             \
  _mm##W##_storeu_##S(t[i], c##i##a);    \
  _mm##W##_storeu_##S(t[i] + (L), c##i##b);

/* f32 on AVX-512 (a 32-column panel), f64 on AVX-512 (16 columns), f32 on AVX2 (16 columns) */
#define GT_DECL512(i) GT_DECL(i, __m512, 512, ps)
#define GT_FMA512(i) GT_FMA(i, __m512, 512, ps, _mm512_set1_ps(GT_A(i)))
#define GT_STORE512(i) GT_STORE(i, float, 512, ps, 16, c + i * ldc)
#define GT_SPILL512(i) GT_SPILL(i, 512, ps, 16)
#define GT_DECL512D(i) GT_DECL(i, __m512d, 512, pd)
#define GT_FMA512D(i) GT_FMA(i, __m512d, 512, pd, _mm512_set1_pd(GT_A(i)))
#define GT_STORE512D(i) GT_STORE(i, double, 512, pd, 8, c + i * ldc)
#define GT_SPILL512D(i) GT_SPILL(i, 512, pd, 8)
#define GT_DECL256(i) GT_DECL(i, __m256, 256, ps)
#define GT_FMA256(i) GT_FMA(i, __m256, 256, ps, _mm256_broadcast_ss(&GT_A(i)))
#define GT_SPILL256(i) GT_SPILL(i, 256, ps, 8)

/* The end of a dot micro-kernel with 8 x (2 * 16) f32 accumulators (rows mr, columns nr of the
 * tile valid at c): the whole tile stored (added to when acc), or spilled to t and its valid part
 * written out. */
#define GT_END512(NRV)                                                                          \
  if (mr == 8 && nr == (NRV)) {                                                                 \
    GT_ROWS(GT_STORE512)                                                                        \
    return;                                                                                     \
  }                                                                                             \
  float t[8][NRV];                                                                              \
  GT_ROWS(GT_SPILL512)                                                                          \
  for (int64_t i = 0; i < mr; i++)                                                              \
    for (int64_t j = 0; j < nr; j++) c[i * ldc + j] = acc ? c[i * ldc + j] + t[i][j] : t[i][j];

/* The loop of the convolution kernels over nseg segments of 8 lhs runs (ptrs[s * 8 + i], row i's
 * as a##i, of element type GT_SEG_T): per k < KN the weights of the k at bp by LOADB (into b0,
 * b1), the row update OP, then bp advanced by 32 elements. */
#define GT_SEG_PTR(i) const GT_SEG_T *a##i = a[i];
#define GT_SEGMENTS(KN, LOADB, OP)                  \
  for (int64_t s = 0; s < nseg; s++) {              \
    const void *const *a = ptrs + s * 8;            \
    GT_ROWS(GT_SEG_PTR)                             \
    for (int64_t k = 0; k < (KN); k++, bp += 32) {  \
      LOADB                                         \
      GT_ROWS(OP)                                   \
    }                                               \
  }

/* The same loop with the weights of segment s starting at bptrs[s] and consecutive k bstride
 * elements apart (packed panels: bptrs[s] follows the previous segment and bstride is 32; an
 * operand read in place: a kernel position's run of input features at their stride). */
#define GT_SEGMENTS_B(KN, LOADB, OP)                             \
  for (int64_t s = 0; s < nseg; s++) {                           \
    const void *const *a = ptrs + s * 8;                         \
    const float *bp = bptrs[s];                                  \
    GT_ROWS(GT_SEG_PTR)                                          \
    for (int64_t k = 0; k < (KN); k++, bp += bstride) {          \
      LOADB                                                      \
      GT_ROWS(OP)                                                \
    }                                                            \
  }

/* bf16 pairs (k_dot_bf.h) on AVX512_BF16: b0, b1 hold 16 column pairs each (__m512bh), GT_A(i)
 * is row i's pair as a 32-bit word */
#define GT_DPBF512(i)                                         \
  {                                                           \
    __m512bh ai = (__m512bh)_mm512_set1_epi32((int)GT_A(i));  \
    c##i##a = _mm512_dpbf16_ps(c##i##a, ai, b0);              \
    c##i##b = _mm512_dpbf16_ps(c##i##b, ai, b1);              \
  }

/* An 8 x 8 block of 32-bit elements through registers: row i of the block in r[i], column i
 * stored at d + i * ds (unpack pairs, shuffle quads, swap 128-bit halves) */
__attribute__((target("avx2"))) static inline void gt_tr8x8(const __m256 *r, float *d,
                                                            int64_t ds) {
  __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
  __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
  __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
  __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
  _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
  _mm256_storeu_ps(d + ds, _mm256_permute2f128_ps(u1, u5, 0x20));
  _mm256_storeu_ps(d + 2 * ds, _mm256_permute2f128_ps(u2, u6, 0x20));
  _mm256_storeu_ps(d + 3 * ds, _mm256_permute2f128_ps(u3, u7, 0x20));
  _mm256_storeu_ps(d + 4 * ds, _mm256_permute2f128_ps(u0, u4, 0x31));
  _mm256_storeu_ps(d + 5 * ds, _mm256_permute2f128_ps(u1, u5, 0x31));
  _mm256_storeu_ps(d + 6 * ds, _mm256_permute2f128_ps(u2, u6, 0x31));
  _mm256_storeu_ps(d + 7 * ds, _mm256_permute2f128_ps(u3, u7, 0x31));
}

/* The micro-kernel family for this CPU: 2 AVX-512F, 1 AVX2 with FMA, 0 generic. */
static inline int gt_isa(void) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return 2;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 1;
  return 0;
}

#endif
