/* cjrt: stablehlo.reduce's inner loops (k_reduce_kern.h) compiled for the avx512 instruction set;
 * k_reduce.c calls them only when the CPU has it. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3", "no-math-errno", "no-trapping-math", "fp-contract=off")
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma,bmi,bmi2,popcnt,f16c,prefer-vector-width=512,tune=skylake-avx512")
#endif
#define CJ_RK_TEMPLATE 1
#define RK_TABLE cj_rk_avx512

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* f32/f64 maximum/minimum on whole vectors (the vertical folds, contiguous horizontal folds):
 * VRANGE (IEEE maxNum/minNum, -0 < +0), and where either operand is NaN their sum (that NaN;
 * the first operand's when both are, as rk_maxf) in 3 instructions, where the vectorized
 * selects of rk_maxf took ~10. The lanes and their tree are the template's: the same bits (a
 * signaling NaN comes out quiet). */
#define RKV_max_f32(M, OP) M(max_f32, float, ps, 16, __m512, __mmask16, 0x05, OP)
#define RKV_min_f32(M, OP) M(min_f32, float, ps, 16, __m512, __mmask16, 0x04, OP)
#define RKV_max_f64(M, OP) M(max_f64, double, pd, 8, __m512d, __mmask8, 0x05, OP)
#define RKV_min_f64(M, OP) M(min_f64, double, pd, 8, __m512d, __mmask8, 0x04, OP)
#define RKV_KERNELS(NAME, T, SFX, W, VT, MT, IMM, OP)                                              \
  static inline VT rkv_##NAME(VT a, VT b) {                                                      \
    MT u = _mm512_cmp_##SFX##_mask(a, b, _CMP_UNORD_Q);                                          \
    return _mm512_mask_add_##SFX(_mm512_range_##SFX(a, b, IMM), u, a, b);                        \
  }                                                                                              \
  static inline MT rkv_mask_##NAME(int64_t left) {                                               \
    return left >= W ? (MT)-1 : (MT)((1u << left) - 1u);                                         \
  }                                                                                              \
  static void vacc_##NAME(void *acc_, const char *x_, int64_t n, int64_t rows, int64_t rs) {    \
    T *acc = acc_;                                                                               \
    for (int64_t j = 0; j < n; j += W) {                                                         \
      MT k = rkv_mask_##NAME(n - j);                                                             \
      VT a = _mm512_maskz_loadu_##SFX(k, acc + j);                                               \
      for (int64_t r = 0; r < rows; r++)                                                         \
        a = rkv_##NAME(a, _mm512_maskz_loadu_##SFX(k, (const T *)(x_ + r * rs) + j));            \
      _mm512_mask_storeu_##SFX(acc + j, k, a);                                                   \
    }                                                                                            \
  }                                                                                              \
  static void vcomb_##NAME(void *acc_, const void *b_, int64_t n) {                              \
    T *acc = acc_;                                                                               \
    const T *bs = b_;                                                                            \
    for (int64_t j = 0; j < n; j += W) {                                                         \
      MT k = rkv_mask_##NAME(n - j);                                                             \
      VT a = _mm512_maskz_loadu_##SFX(k, acc + j);                                               \
      _mm512_mask_storeu_##SFX(acc + j, k, rkv_##NAME(a, _mm512_maskz_loadu_##SFX(k, bs + j)));  \
    }                                                                                            \
  }                                                                                              \
  static void hfold_##NAME(void *out, const char *x_, int64_t n, int64_t s) {                   \
    if (s != (int64_t)sizeof(T) || n < 2 * RK_LANES) { /* the template's 8 lanes or order */    \
      hfold_##NAME##_t(out, x_, n, s);                                                           \
      return;                                                                                    \
    }                                                                                            \
    const T *x = (const T *)x_;                                                                  \
    VT p[RK_LANES / W];                                                                          \
    for (int v = 0; v < RK_LANES / W; v++) p[v] = _mm512_loadu_##SFX(x + v * W);                \
    int64_t j = RK_LANES;                                                                        \
    for (; j + RK_LANES <= n; j += RK_LANES)                                                     \
      for (int v = 0; v < RK_LANES / W; v++)                                                     \
        p[v] = rkv_##NAME(p[v], _mm512_loadu_##SFX(x + j + v * W));                              \
    for (int v = 0; v < RK_LANES / W && j + v * W < n; v++) { /* lanes k: j + k < n */           \
      MT k = rkv_mask_##NAME(n - j - v * W);                                                     \
      p[v] = _mm512_mask_mov_##SFX(p[v], k,                                                      \
                                   rkv_##NAME(p[v], _mm512_maskz_loadu_##SFX(k, x + j + v * W))); \
    }                                                                                            \
    T q[RK_LANES];                                                                               \
    for (int v = 0; v < RK_LANES / W; v++) _mm512_storeu_##SFX(q + v * W, p[v]);                 \
    for (int w = RK_LANES / 2; w >= 1; w /= 2)                                                   \
      for (int k = 0; k < w; k++) q[k] = OP(q[k], q[k + w]);                                     \
    memcpy(out, &q[0], sizeof(T));                                                               \
  }                                                                                              \
  static const rk_fns fns_##NAME = {vload_##NAME##_t, vacc_##NAME,        vcomb_##NAME,          \
                                    hfold_##NAME,     hrows_##NAME##_t,   hshort_##NAME##_t,     \
                                    fin_##NAME##_t,   (int32_t)sizeof(T)};                        \
  static const rk_fns *const rkv_keep_##NAME __attribute__((unused)) = &fns_##NAME##_t;
#define RK_VMINMAX(NAME, T, OP) RKV_##NAME(RKV_KERNELS, OP)
#endif
#define RK_AM_TABLE cj_rk_am_avx512
#include "cpu/k_reduce_kern.h"
