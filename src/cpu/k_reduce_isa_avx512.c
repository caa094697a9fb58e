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

#include "cpu/k_reduce_kern_api.h"
/* f32/f64 maximum/minimum on whole vectors (the vertical folds, contiguous horizontal folds):
 * VRANGE (IEEE maxNum/minNum, -0 < +0), and where either operand is NaN their sum (that NaN;
 * the first operand's when both are, as rk_maxf) in 3 instructions, where the vectorized
 * selects of rk_maxf took ~10. The lanes and their tree are the template's: the same bits (a
 * signaling NaN comes out quiet). Vertical folds keep the accumulators in registers across
 * rows; horizontal runs (hrows, hfold) fold their lanes and tree in registers. */
/* lane k of the result: lane k + w of a (k + w < lanes) */
static inline __m512 rkv_sh_ps(__m512 a, int w) {
  __m512i i = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  return _mm512_permutexvar_ps(_mm512_add_epi32(i, _mm512_set1_epi32(w)), a);
}
static inline __m512d rkv_sh_pd(__m512d a, int w) {
  __m512i i = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm512_permutexvar_pd(_mm512_add_epi64(i, _mm512_set1_epi64(w)), a);
}
#define RKV_max_f32(M, OP) M(max_f32, float, ps, 16, __m512, __mmask16, 0x05, rkv_sh_ps)
#define RKV_min_f32(M, OP) M(min_f32, float, ps, 16, __m512, __mmask16, 0x04, rkv_sh_ps)
#define RKV_max_f64(M, OP) M(max_f64, double, pd, 8, __m512d, __mmask8, 0x05, rkv_sh_pd)
#define RKV_min_f64(M, OP) M(min_f64, double, pd, 8, __m512d, __mmask8, 0x04, rkv_sh_pd)
#define RKV_KERNELS(NAME, T, SFX, W, VT, MT, IMM, SH)                                              \
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
  /* a run of n >= W elements without NaN: its maximum (minimum) is VRANGE's in any order (an \
   * exact operation; -0 < +0 either way), so four chains of vectors, not the lanes' two, give \
   * the tree's bits; false (nothing stored) when the run has a NaN: then the tree decides */  \
  static inline bool rkv_nonan_##NAME(T *out, const T *x, int64_t n) {                          \
    VT a[4];                                                                                     \
    a[0] = a[1] = a[2] = a[3] = _mm512_loadu_##SFX(x);                                           \
    MT nan = _mm512_cmp_##SFX##_mask(a[0], a[0], _CMP_UNORD_Q);                                  \
    int64_t j = W;                                                                               \
    for (; j + 4 * W <= n; j += 4 * W)                                                           \
      for (int v = 0; v < 4; v++) {                                                              \
        VT b = _mm512_loadu_##SFX(x + j + v * W);                                                \
        nan |= _mm512_cmp_##SFX##_mask(b, b, _CMP_UNORD_Q);                                      \
        a[v] = _mm512_range_##SFX(a[v], b, IMM);                                                 \
      }                                                                                          \
    for (; j < n; j += W) {                                                                      \
      MT k = rkv_mask_##NAME(n - j);                                                             \
      VT b = _mm512_maskz_loadu_##SFX(k, x + j);                                                 \
      nan |= _mm512_mask_cmp_##SFX##_mask(k, b, b, _CMP_UNORD_Q);                                \
      a[0] = _mm512_mask_range_##SFX(a[0], k, a[0], b, IMM);                                     \
    }                                                                                            \
    if (nan) return false;                                                                       \
    VT r = _mm512_range_##SFX(_mm512_range_##SFX(a[0], a[1], IMM),                               \
                              _mm512_range_##SFX(a[2], a[3], IMM), IMM);                         \
    for (int w = W / 2; w >= 1; w /= 2) r = _mm512_range_##SFX(r, SH(r, w), IMM);                \
    T q[W];                                                                                      \
    _mm512_storeu_##SFX(q, r);                                                                   \
    *out = q[0];                                                                                 \
    return true;                                                                                 \
  }                                                                                              \
  /* hrows: each output's lanes (32, or 8 for runs under 64) in registers, then their tree:  \
   * lanes k and k + w, whole vectors first, then within one (SH: lanes w apart) */           \
  static void hrows_##NAME(void *out_, const char *x_, int64_t n, int64_t m, int64_t rs) {    \
    T *out = out_;                                                                               \
    int ln = n >= 2 * RK_LANES ? RK_LANES : 8;                                                   \
    int nv = ln >= W ? ln / W : 1, lw = ln < W ? ln : W;                                         \
    MT lm = rkv_mask_##NAME(lw);                                                                 \
    for (int64_t o = 0; o < m; o++) {                                                            \
      const T *x = (const T *)(x_ + o * rs);                                                     \
      if (n >= W && rkv_nonan_##NAME(out + o, x, n)) continue;                                   \
      VT p[RK_LANES / W];                                                                        \
      for (int v = 0; v < nv; v++) p[v] = _mm512_maskz_loadu_##SFX(lm, x + v * W);              \
      int64_t j = ln;                                                                            \
      for (; j + ln <= n; j += ln)                                                               \
        for (int v = 0; v < nv; v++)                                                             \
          p[v] = rkv_##NAME(p[v], _mm512_maskz_loadu_##SFX(lm, x + j + v * W));                  \
      for (int v = 0; v < nv && j + v * W < n; v++) { /* the last lanes: j + k < n */            \
        MT k = rkv_mask_##NAME(n - j - v * W) & lm;                                              \
        p[v] = _mm512_mask_mov_##SFX(p[v], k,                                                    \
                                     rkv_##NAME(p[v], _mm512_maskz_loadu_##SFX(k, x + j + v * W))); \
      }                                                                                          \
      for (int c = nv / 2; c >= 1; c /= 2)                                                       \
        for (int v = 0; v < c; v++) p[v] = rkv_##NAME(p[v], p[v + c]);                           \
      for (int w = lw / 2; w >= 1; w /= 2) p[0] = rkv_##NAME(p[0], SH(p[0], w));                 \
      T q[W];                                                                                    \
      _mm512_storeu_##SFX(q, p[0]);                                                              \
      out[o] = q[0];                                                                             \
    }                                                                                            \
  }                                                                                              \
  RK_HFOLD_BY_HROWS(NAME, T)                                                                             \
  static const rk_fns fns_##NAME = {vload_##NAME##_t, vacc_##NAME,        vcomb_##NAME,          \
                                    hfold_##NAME,     hrows_##NAME,       hshort_##NAME##_t,     \
                                    fin_##NAME##_t,   (int32_t)sizeof(T)};                        \
  static const rk_fns *const rkv_keep_##NAME __attribute__((unused)) = &fns_##NAME##_t;
#define RK_VMINMAX(NAME, T, OP) RKV_##NAME(RKV_KERNELS, OP)

/* add and multiply (f32, f64; bf16 and f16 in f32): hrows and contiguous hfolds with the
 * template's lanes and tree (k_reduce_kern.h: 32 lanes, or 8 for runs under 64; lanes k and
 * k + w combined, whole vectors first), in registers, R outputs at a time so their chains are in
 * flight together (the template's stored its lanes per output and ran the tree across outputs
 * in memory: 1.6x XLA's time for sums over 256-element rows). LD loads a masked vector of A. */
static inline __m512 rka_ld_f32(__mmask16 k, const float *x) { return _mm512_maskz_loadu_ps(k, x); }
static inline __m512d rka_ld_f64(__mmask8 k, const double *x) { return _mm512_maskz_loadu_pd(k, x); }
static inline __m512 rka_ld_bf16(__mmask16 k, const uint16_t *x) {
  __m512i w = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(k, x));
  return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}
static inline __m512 rka_ld_f16(__mmask16 k, const uint16_t *x) {
  return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(k, x));
}
#define RKA_add_f32(M) M(add_f32, float, float, ps, 16, __m512, __mmask16, rka_ld_f32, add, rkv_sh_ps)
#define RKA_mul_f32(M) M(mul_f32, float, float, ps, 16, __m512, __mmask16, rka_ld_f32, mul, rkv_sh_ps)
#define RKA_add_f64(M) M(add_f64, double, double, pd, 8, __m512d, __mmask8, rka_ld_f64, add, rkv_sh_pd)
#define RKA_mul_f64(M) M(mul_f64, double, double, pd, 8, __m512d, __mmask8, rka_ld_f64, mul, rkv_sh_pd)
#define RKA_add_bf16(M) M(add_bf16, uint16_t, float, ps, 16, __m512, __mmask16, rka_ld_bf16, add, rkv_sh_ps)
#define RKA_mul_bf16(M) M(mul_bf16, uint16_t, float, ps, 16, __m512, __mmask16, rka_ld_bf16, mul, rkv_sh_ps)
#define RKA_add_f16(M) M(add_f16, uint16_t, float, ps, 16, __m512, __mmask16, rka_ld_f16, add, rkv_sh_ps)
#define RKA_mul_f16(M) M(mul_f16, uint16_t, float, ps, 16, __m512, __mmask16, rka_ld_f16, mul, rkv_sh_ps)
/* outputs o0 .. o0 + R - 1 with LN lanes (NV vectors of LW lanes each) */
#define RKA_BODY(LN, R, T, A, SFX, W, VT, MT, LD, OP, SH)                                         \
  {                                                                                              \
    enum { NV = LN >= W ? LN / W : 1, LW = LN < W ? LN : W };                                    \
    const MT lm = LW >= W ? (MT)-1 : (MT)((1u << LW) - 1u);                                      \
    const T *x[R];                                                                               \
    VT p[R][NV];                                                                                 \
    for (int r = 0; r < R; r++) {                                                                \
      x[r] = (const T *)(const void *)(x_ + (o0 + r) * rs);                                      \
      for (int v = 0; v < NV; v++) p[r][v] = LD(lm, x[r] + v * W);                               \
    }                                                                                            \
    int64_t j = LN;                                                                              \
    for (; j + LN <= n; j += LN)                                                                 \
      for (int v = 0; v < NV; v++)                                                               \
        for (int r = 0; r < R; r++)                                                              \
          p[r][v] = _mm512_##OP##_##SFX(p[r][v], LD(lm, x[r] + j + v * W));                      \
    for (int v = 0; v < NV && j + v * W < n; v++) { /* the last lanes: j + k < n */              \
      int64_t left = n - j - v * W;                                                              \
      MT k = (MT)((left >= W ? (MT)-1 : (MT)((1u << left) - 1u)) & lm);                          \
      for (int r = 0; r < R; r++)                                                                \
        p[r][v] = _mm512_mask_##OP##_##SFX(p[r][v], k, p[r][v], LD(k, x[r] + j + v * W));        \
    }                                                                                            \
    for (int c = NV / 2; c >= 1; c /= 2)                                                         \
      for (int v = 0; v < c; v++)                                                                \
        for (int r = 0; r < R; r++) p[r][v] = _mm512_##OP##_##SFX(p[r][v], p[r][v + c]);         \
    for (int w = LW / 2; w >= 1; w /= 2)                                                         \
      for (int r = 0; r < R; r++) p[r][0] = _mm512_##OP##_##SFX(p[r][0], SH(p[r][0], w));       \
    for (int r = 0; r < R; r++) {                                                                \
      A q[W];                                                                                    \
      _mm512_storeu_##SFX(q, p[r][0]);                                                           \
      out[o0 + r] = q[0];                                                                        \
    }                                                                                            \
  }
/* vertical: four vectors of accumulators in registers across all the rows (the template's
 * loaded and stored them every two rows: a store-to-load wait per row pair on narrow kept
 * blocks such as batch-norm statistics' channels) */
#define RKA_KERNELS(NAME, T, A, SFX, W, VT, MT, LD, OP, SH)                                      \
  static void vacc_##NAME(void *acc_, const char *x_, int64_t n, int64_t rows, int64_t rs) {    \
    A *acc = acc_;                                                                               \
    int64_t j = 0;                                                                               \
    for (; j + 4 * W <= n; j += 4 * W) {                                                         \
      VT a[4];                                                                                   \
      for (int u = 0; u < 4; u++) a[u] = _mm512_loadu_##SFX(acc + j + u * W);                    \
      for (int64_t r = 0; r < rows; r++) {                                                       \
        const T *x = (const T *)(const void *)(x_ + r * rs) + j;                                 \
        for (int u = 0; u < 4; u++) a[u] = _mm512_##OP##_##SFX(a[u], LD((MT)-1, x + u * W));     \
      }                                                                                          \
      for (int u = 0; u < 4; u++) _mm512_storeu_##SFX(acc + j + u * W, a[u]);                    \
    }                                                                                            \
    for (; j < n; j += W) {                                                                      \
      MT k = n - j >= W ? (MT)-1 : (MT)((1u << (n - j)) - 1u);                                   \
      VT a = _mm512_maskz_loadu_##SFX(k, acc + j);                                               \
      for (int64_t r = 0; r < rows; r++)                                                         \
        a = _mm512_##OP##_##SFX(a, LD(k, (const T *)(const void *)(x_ + r * rs) + j));           \
      _mm512_mask_storeu_##SFX(acc + j, k, a);                                                   \
    }                                                                                            \
  }                                                                                              \
  static void hrows_##NAME(void *out_, const char *x_, int64_t n, int64_t m, int64_t rs) {     \
    A *out = out_;                                                                               \
    int64_t o0 = 0;                                                                              \
    if (n >= 2 * RK_LANES) {                                                                     \
      for (; o0 + 4 <= m; o0 += 4) RKA_BODY(32, 4, T, A, SFX, W, VT, MT, LD, OP, SH)             \
      for (; o0 < m; o0++) RKA_BODY(32, 1, T, A, SFX, W, VT, MT, LD, OP, SH)                     \
    } else {                                                                                     \
      for (; o0 + 4 <= m; o0 += 4) RKA_BODY(8, 4, T, A, SFX, W, VT, MT, LD, OP, SH)              \
      for (; o0 < m; o0++) RKA_BODY(8, 1, T, A, SFX, W, VT, MT, LD, OP, SH)                      \
    }                                                                                            \
  }                                                                                              \
  RK_HFOLD_BY_HROWS(NAME, T)                                                                             \
  static const rk_fns fns_##NAME = {vload_##NAME##_t, vacc_##NAME,      vcomb_##NAME##_t,       \
                                    hfold_##NAME,     hrows_##NAME,     hshort_##NAME##_t,      \
                                    fin_##NAME##_t,   (int32_t)sizeof(A)};                        \
  static const rk_fns *const rkv_keep_##NAME __attribute__((unused)) = &fns_##NAME##_t;
#define RK_VARITH(NAME, T, A) RKA_##NAME(RKA_KERNELS)

/* argmax/argmin across contiguous outputs (k_reduce_am.h's am_rows, the same step as compares
 * and blends): W outputs' values and indices in registers across all the rows; strided outputs
 * take the template's loops. Rows of an iota (xi NULL: row r's index is idx0 + r) whose
 * accumulated indices are all <= idx0 skip the index compare ia < ib: the accumulated index is
 * then never above the row's (it is the init's or an earlier row's), and where the two are equal
 * either pick is the same index: the same bits */
#define RKV_AM_ROWS(NAME, T, IT, SFX, ISFX, W, VT, MT, DIR, DIRE)                                     \
  static void am_rows_##NAME(void *va_, void *ia_, const char *x_, const char *xi_, int64_t xs,   \
                             int64_t rs, int64_t irs, int64_t rows, int64_t idx0, int64_t m);     \
  static inline void rkv_am_step_##NAME(VT *a, __m512i *i, VT b, __m512i ib, bool ord) {         \
    MT nan = _mm512_cmp_##SFX##_mask(*a, *a, _CMP_UNORD_Q);                                       \
    MT pf = (MT)(_mm512_cmp_##SFX##_mask(*a, b, DIR) | nan);                                      \
    MT pi = ord ? (MT)(_mm512_cmp_##SFX##_mask(*a, b, DIRE) | nan)                                \
                : (MT)(pf | (_mm512_cmp_##SFX##_mask(*a, b, _CMP_EQ_OQ) &                         \
                             _mm512_cmplt_##ISFX##_mask(*i, ib)));                                \
    *a = _mm512_mask_blend_##SFX(pf, b, *a);                                                      \
    *i = _mm512_mask_blend_##ISFX(pi, ib, *i);                                                    \
  }                                                                                               \
  static void rkv_am_iota_##NAME(VT a[2], __m512i i[2], const char *x_, int64_t rs, int64_t rows, \
                                 int64_t idx0, int64_t j, bool ord) {                             \
    for (int64_t r = 0; r < rows; r++) {                                                          \
      const T *x = (const T *)(const void *)(x_ + r * rs) + j;                                    \
      __m512i ic = _mm512_set1_##ISFX((IT)(idx0 + r));                                            \
      for (int u = 0; u < 2; u++)                                                                 \
        rkv_am_step_##NAME(&a[u], &i[u], _mm512_loadu_##SFX(x + u * W), ic, ord);                 \
    }                                                                                             \
  }                                                                                               \
  static void rkv_am_rows_##NAME(void *va_, void *ia_, const char *x_, const char *xi_,           \
                                 int64_t xs, int64_t rs, int64_t irs, int64_t rows, int64_t idx0, \
                                 int64_t m) {                                                     \
    if (xs != 1) {                                                                                \
      am_rows_##NAME(va_, ia_, x_, xi_, xs, rs, irs, rows, idx0, m);                              \
      return;                                                                                     \
    }                                                                                             \
    T *va = va_;                                                                                  \
    IT *ia = ia_;                                                                                 \
    int64_t j = 0;                                                                                \
    for (; j + 2 * W <= m; j += 2 * W) { /* two independent chains: the steps' latency hidden */ \
      VT a[2] = {_mm512_loadu_##SFX(va + j), _mm512_loadu_##SFX(va + j + W)};                     \
      __m512i i[2] = {_mm512_loadu_si512(ia + j), _mm512_loadu_si512(ia + j + W)};                \
      __m512i i0 = _mm512_set1_##ISFX((IT)idx0);                                                  \
      if (!xi_) { /* ord: every accumulated index <= idx0 */                                      \
        bool ord = (MT)(_mm512_cmple_##ISFX##_mask(i[0], i0) & _mm512_cmple_##ISFX##_mask(i[1], i0)) == (MT)-1; \
        if (ord)                                                                                  \
          rkv_am_iota_##NAME(a, i, x_, rs, rows, idx0, j, true);                                  \
        else                                                                                      \
          rkv_am_iota_##NAME(a, i, x_, rs, rows, idx0, j, false);                                 \
      } else                                                                                      \
      for (int64_t r = 0; r < rows; r++) {                                                        \
        const T *x = (const T *)(const void *)(x_ + r * rs) + j;                                  \
        const IT *xi = xi_ ? (const IT *)(const void *)(xi_ + r * irs) + j : NULL;                \
        __m512i ic = _mm512_set1_##ISFX((IT)(idx0 + r));                                          \
        for (int u = 0; u < 2; u++)                                                               \
          rkv_am_step_##NAME(&a[u], &i[u], _mm512_loadu_##SFX(x + u * W),                         \
                             xi ? _mm512_loadu_si512(xi + u * W) : ic, false);                    \
      }                                                                                           \
      for (int u = 0; u < 2; u++) {                                                               \
        _mm512_storeu_##SFX(va + j + u * W, a[u]);                                                \
        _mm512_storeu_si512(ia + j + u * W, i[u]);                                                \
      }                                                                                           \
    }                                                                                             \
    for (; j < m; j += W) {                                                                       \
      MT k = m - j >= W ? (MT)-1 : (MT)((1u << (m - j)) - 1u);                                    \
      VT a = _mm512_maskz_loadu_##SFX(k, va + j);                                                 \
      __m512i i = _mm512_maskz_loadu_##ISFX(k, ia + j);                                           \
      for (int64_t r = 0; r < rows; r++) {                                                        \
        VT b = _mm512_maskz_loadu_##SFX(k, (const T *)(const void *)(x_ + r * rs) + j);           \
        __m512i ib = xi_ ? _mm512_maskz_loadu_##ISFX(k, (const IT *)(const void *)(xi_ + r * irs) + j) \
                         : _mm512_set1_##ISFX((IT)(idx0 + r));                                    \
        rkv_am_step_##NAME(&a, &i, b, ib, false);                                                 \
      }                                                                                           \
      _mm512_mask_storeu_##SFX(va + j, k, a);                                                     \
      _mm512_mask_storeu_##ISFX(ia + j, k, i);                                                    \
    }                                                                                             \
  }
RKV_AM_ROWS(gt_f32_s32, float, int32_t, ps, epi32, 16, __m512, __mmask16, _CMP_GT_OQ, _CMP_GE_OQ)
RKV_AM_ROWS(lt_f32_s32, float, int32_t, ps, epi32, 16, __m512, __mmask16, _CMP_LT_OQ, _CMP_LE_OQ)
RKV_AM_ROWS(gt_f64_s64, double, int64_t, pd, epi64, 8, __m512d, __mmask8, _CMP_GT_OQ, _CMP_GE_OQ)
RKV_AM_ROWS(lt_f64_s64, double, int64_t, pd, epi64, 8, __m512d, __mmask8, _CMP_LT_OQ, _CMP_LE_OQ)
static rk_am_rows_fn rkv_am_rows(cj_dtype vt, cj_dtype it, bool gt) {
  if (vt == CJ_F32 && it == CJ_S32) return gt ? rkv_am_rows_gt_f32_s32 : rkv_am_rows_lt_f32_s32;
  if (vt == CJ_F64 && it == CJ_S64) return gt ? rkv_am_rows_gt_f64_s64 : rkv_am_rows_lt_f64_s64;
  return NULL;
}
#define RK_AM_VROWS rkv_am_rows
#endif
#define RK_AM_TABLE cj_rk_am_avx512
#include "cpu/k_reduce_kern.h"
