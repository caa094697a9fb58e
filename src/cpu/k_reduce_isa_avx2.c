/* cjrt: stablehlo.reduce's inner loops (k_reduce_kern.h) compiled for the avx2 instruction set;
 * k_reduce.c calls them only when the CPU has it. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3", "no-math-errno", "no-trapping-math", "fp-contract=off")
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC target("avx2,fma,bmi,bmi2,popcnt,f16c,tune=skylake")
#endif
#define CJ_RK_TEMPLATE 1
#define RK_TABLE cj_rk_avx2
#define RK_AM_TABLE cj_rk_am_avx2

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include <string.h>

#include "cpu/k_reduce_kern_api.h"
/* add, multiply (f32, f64; bf16 and f16 in f32), maximum and minimum (f32, f64) on ymm
 * registers, the template's lanes, tree and row order (so the same bits):
 *   vacc: four vectors of accumulators in registers across all the rows (the template's loaded
 *         and stored them every two rows: 1.5x XLA's time for sums over a leading axis); the
 *         columns past the last whole vector take the template's loop
 *   hrows, contiguous hfolds of 16 or more: each output's lanes (32, or 8 for runs under 64)
 *         in registers, then their tree (lanes k and k + w: whole vectors first, then within
 *         one), R outputs at a time so their chains are in flight together (the template stored
 *         its lanes per output and ran the tree across outputs in memory)
 * Maximum and minimum are StableHLO's (rk_maxf: a NaN operand propagates, the first one when
 * both are, as it is; max(-0, +0) = +0, min(-0, +0) = -0): MAXPS both ways agree off ties and
 * NaNs; at a tie the two are a and b, whose AND (OR for the minimum) is a's bits when they are
 * equal and nonzero and the right zero when they are zeros; NaN lanes are blended in last. */
#define RK2_F32(NAME, T, A, LD, OP, FOP, CHK, CMB)                                            \
  enum { W_##NAME = 8, chk_##NAME = CHK };                                                   \
  static inline __m256 ld_##NAME(const T *x) { return LD(x); }                               \
  static inline __m256 op_##NAME(__m256 a, __m256 b) { return OP(a, b); }                    \
  static inline __m256 fop_##NAME(__m256 a, __m256 b) { return FOP(a, b); }                  \
  static inline __m256 sh_##NAME(__m256 a, int w) { /* lane k: lane k + w (k < w) */        \
    return w == 4   ? _mm256_permute2f128_ps(a, a, 0x01)                                     \
           : w == 2 ? _mm256_permute_ps(a, 0xEE)                                             \
                    : _mm256_permute_ps(a, 0x55);                                            \
  }                                                                                          \
  static inline __m256 bl_##NAME(__m256 p, __m256 r, int64_t left) { /* lanes < left: r */  \
    __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)left),                             \
                                   _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));               \
    return _mm256_blendv_ps(p, r, _mm256_castsi256_ps(m));                                   \
  }                                                                                          \
  static inline void st_##NAME(A *out, __m256 a) { *out = _mm256_cvtss_f32(a); }             \
  CMB(NAME, T, A, __m256, ps)
#define RK2_F64(NAME, T, A, LD, OP, FOP, CHK, CMB)                                            \
  enum { W_##NAME = 4, chk_##NAME = CHK };                                                   \
  static inline __m256d ld_##NAME(const T *x) { return LD(x); }                              \
  static inline __m256d op_##NAME(__m256d a, __m256d b) { return OP(a, b); }                 \
  static inline __m256d fop_##NAME(__m256d a, __m256d b) { return FOP(a, b); }               \
  static inline __m256d sh_##NAME(__m256d a, int w) {                                        \
    return w == 2 ? _mm256_permute2f128_pd(a, a, 0x01) : _mm256_permute_pd(a, 0x5);          \
  }                                                                                          \
  static inline __m256d bl_##NAME(__m256d p, __m256d r, int64_t left) {                      \
    __m256i m = _mm256_cmpgt_epi64(_mm256_set1_epi64x(left), _mm256_setr_epi64x(0, 1, 2, 3)); \
    return _mm256_blendv_pd(p, r, _mm256_castsi256_pd(m));                                   \
  }                                                                                          \
  static inline void st_##NAME(A *out, __m256d a) { *out = _mm256_cvtsd_f64(a); }            \
  CMB(NAME, T, A, __m256d, pd)

static inline __m256 rk2_ld_f32(const float *x) { return _mm256_loadu_ps(x); }
static inline __m256d rk2_ld_f64(const double *x) { return _mm256_loadu_pd(x); }
static inline __m256 rk2_ld_bf16(const uint16_t *x) {
  __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)x));
  return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}
static inline __m256 rk2_ld_f16(const uint16_t *x) {
  return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)x));
}
#define RK2_MM(SFX, a, b, MX, BIT)                                                            \
  ({                                                                                          \
    __typeof__(a) r_ = RK2_MMF(SFX, a, b, MX, BIT);                                           \
    r_ = _mm256_blendv_##SFX(r_, b, _mm256_cmp_##SFX(b, b, _CMP_UNORD_Q));                    \
    _mm256_blendv_##SFX(r_, a, _mm256_cmp_##SFX(a, a, _CMP_UNORD_Q));                         \
  })
/* RK2_MM where neither operand is NaN */
#define RK2_MMF(SFX, a, b, MX, BIT) \
  _mm256_##BIT##_##SFX(_mm256_##MX##_##SFX(a, b), _mm256_##MX##_##SFX(b, a))
#define RK2_ADDPS(a, b) _mm256_add_ps(a, b)
#define RK2_MULPS(a, b) _mm256_mul_ps(a, b)
#define RK2_ADDPD(a, b) _mm256_add_pd(a, b)
#define RK2_MULPD(a, b) _mm256_mul_pd(a, b)
#define RK2_MAXPS(a, b) RK2_MM(ps, a, b, max, and)
#define RK2_MINPS(a, b) RK2_MM(ps, a, b, min, or)
#define RK2_MAXPD(a, b) RK2_MM(pd, a, b, max, and)
#define RK2_MINPD(a, b) RK2_MM(pd, a, b, min, or)
#define RK2_FMAXPS(a, b) RK2_MMF(ps, a, b, max, and)
#define RK2_FMINPS(a, b) RK2_MMF(ps, a, b, min, or)
#define RK2_FMAXPD(a, b) RK2_MMF(pd, a, b, max, and)
#define RK2_FMINPD(a, b) RK2_MMF(pd, a, b, min, or)

/* outputs o0 .. o0 + R - 1 with LN lanes, NV vectors of LW lanes */
#define RK2_BODY(NAME, LN, R, T, A, VT)                                                        \
  {                                                                                            \
    enum { W = W_##NAME, NV = LN >= W ? LN / W : 1, LW = LN < W ? LN : W };                    \
    const T *x[R];                                                                             \
    VT p[R][NV];                                                                               \
    for (int r = 0; r < R; r++) {                                                              \
      x[r] = (const T *)(const void *)(x_ + (o0 + r) * rs);                                    \
      for (int v = 0; v < NV; v++) p[r][v] = ld_##NAME(x[r] + v * W);                          \
    }                                                                                          \
    int64_t j = LN;                                                                            \
    for (; j + LN <= n; j += LN)                                                               \
      for (int v = 0; v < NV; v++)                                                             \
        for (int r = 0; r < R; r++) p[r][v] = op_##NAME(p[r][v], ld_##NAME(x[r] + j + v * W)); \
    for (int v = 0; v < NV && j + v * W < n; v++) { /* the last lanes: j + k < n */            \
      int64_t left = n - j - v * W;                                                            \
      for (int r = 0; r < R; r++) {                                                            \
        if (left >= W) {                                                                       \
          p[r][v] = op_##NAME(p[r][v], ld_##NAME(x[r] + j + v * W));                           \
        } else {                                                                               \
          T b[W];                                                                              \
          memset(b, 0, sizeof b);                                                              \
          memcpy(b, x[r] + j + v * W, (size_t)left * sizeof(T));                               \
          p[r][v] = bl_##NAME(p[r][v], op_##NAME(p[r][v], ld_##NAME(b)), left);                \
        }                                                                                      \
      }                                                                                        \
    }                                                                                          \
    for (int c = NV / 2; c >= 1; c /= 2)                                                       \
      for (int v = 0; v < c; v++)                                                              \
        for (int r = 0; r < R; r++) p[r][v] = op_##NAME(p[r][v], p[r][v + c]);                 \
    for (int w = LW / 2; w >= 1; w /= 2)                                                       \
      for (int r = 0; r < R; r++) p[r][0] = op_##NAME(p[r][0], sh_##NAME(p[r][0], w));         \
    for (int r = 0; r < R; r++) st_##NAME(out + o0 + r, p[r][0]);                              \
  }
/* R: outputs at a time, so that R x NV accumulators fill about 8 registers */
#define RK2_KERNELS(NAME, T, A, VT, SFX)                                                       \
  static void vacc_##NAME(void *acc_, const char *x_, int64_t n, int64_t rows, int64_t rs) {  \
    enum { W = W_##NAME };                                                                     \
    A *acc = acc_;                                                                             \
    int64_t j = 0;                                                                             \
    for (; j + 4 * W <= n; j += 4 * W) {                                                       \
      VT a[4], s[4];                                                                           \
      for (int u = 0; u < 4; u++) s[u] = a[u] = _mm256_loadu_##SFX(acc + j + u * W);           \
      if (chk_##NAME) { /* fop, and a sum that is NaN where a NaN came in (or an inf - inf) */ \
        for (int64_t r = 0; r < rows; r++) {                                                   \
          const T *x = (const T *)(const void *)(x_ + r * rs) + j;                             \
          for (int u = 0; u < 4; u++) {                                                        \
            VT b = ld_##NAME(x + u * W);                                                       \
            a[u] = fop_##NAME(a[u], b);                                                        \
            s[u] = _mm256_add_##SFX(s[u], b);                                                  \
          }                                                                                    \
        }                                                                                      \
        VT t = _mm256_add_##SFX(_mm256_add_##SFX(s[0], s[1]), _mm256_add_##SFX(s[2], s[3]));   \
        if (!_mm256_movemask_##SFX(_mm256_cmp_##SFX(t, t, _CMP_UNORD_Q))) {                    \
          for (int u = 0; u < 4; u++) _mm256_storeu_##SFX(acc + j + u * W, a[u]);              \
          continue;                                                                            \
        }                                                                                      \
        for (int u = 0; u < 4; u++) a[u] = _mm256_loadu_##SFX(acc + j + u * W); /* again */    \
      }                                                                                        \
      for (int64_t r = 0; r < rows; r++) {                                                     \
        const T *x = (const T *)(const void *)(x_ + r * rs) + j;                               \
        for (int u = 0; u < 4; u++) a[u] = op_##NAME(a[u], ld_##NAME(x + u * W));              \
      }                                                                                        \
      for (int u = 0; u < 4; u++) _mm256_storeu_##SFX(acc + j + u * W, a[u]);                  \
    }                                                                                          \
    for (; j + W <= n; j += W) {                                                               \
      VT a = _mm256_loadu_##SFX(acc + j);                                                      \
      for (int64_t r = 0; r < rows; r++)                                                       \
        a = op_##NAME(a, ld_##NAME((const T *)(const void *)(x_ + r * rs) + j));               \
      _mm256_storeu_##SFX(acc + j, a);                                                         \
    }                                                                                          \
    if (j < n) vacc_##NAME##_t(acc + j, x_ + j * (int64_t)sizeof(T), n - j, rows, rs);         \
  }                                                                                            \
  static void hrows_##NAME(void *out_, const char *x_, int64_t n, int64_t m, int64_t rs) {     \
    enum { W = W_##NAME, RL = W >= 8 ? 2 : 1, RS = W >= 8 ? 8 : 4 };                           \
    A *out = out_;                                                                             \
    int64_t o0 = 0;                                                                            \
    if (n >= 2 * RK_LANES) {                                                                   \
      for (; o0 + RL <= m; o0 += RL) RK2_BODY(NAME, 32, RL, T, A, VT)                          \
      for (; o0 < m; o0++) RK2_BODY(NAME, 32, 1, T, A, VT)                                     \
    } else {                                                                                   \
      for (; o0 + RS <= m; o0 += RS) RK2_BODY(NAME, 8, RS, T, A, VT)                           \
      for (; o0 < m; o0++) RK2_BODY(NAME, 8, 1, T, A, VT)                                      \
    }                                                                                          \
  }                                                                                            \
  RK_HFOLD_BY_HROWS(NAME, T)                                                                   \
  static const rk_fns fns_##NAME = {vload_##NAME##_t, vacc_##NAME,      vcomb_##NAME##_t,     \
                                    hfold_##NAME,     hrows_##NAME,     hshort_##NAME##_t,    \
                                    fin_##NAME##_t,   (int32_t)sizeof(A)};

#define RK2_add_f32 RK2_F32(add_f32, float, float, rk2_ld_f32, RK2_ADDPS, RK2_ADDPS, 0, RK2_KERNELS)
#define RK2_mul_f32 RK2_F32(mul_f32, float, float, rk2_ld_f32, RK2_MULPS, RK2_MULPS, 0, RK2_KERNELS)
#define RK2_add_bf16 RK2_F32(add_bf16, uint16_t, float, rk2_ld_bf16, RK2_ADDPS, RK2_ADDPS, 0, RK2_KERNELS)
#define RK2_mul_bf16 RK2_F32(mul_bf16, uint16_t, float, rk2_ld_bf16, RK2_MULPS, RK2_MULPS, 0, RK2_KERNELS)
#define RK2_add_f16 RK2_F32(add_f16, uint16_t, float, rk2_ld_f16, RK2_ADDPS, RK2_ADDPS, 0, RK2_KERNELS)
#define RK2_mul_f16 RK2_F32(mul_f16, uint16_t, float, rk2_ld_f16, RK2_MULPS, RK2_MULPS, 0, RK2_KERNELS)
#define RK2_add_f64 RK2_F64(add_f64, double, double, rk2_ld_f64, RK2_ADDPD, RK2_ADDPD, 0, RK2_KERNELS)
#define RK2_mul_f64 RK2_F64(mul_f64, double, double, rk2_ld_f64, RK2_MULPD, RK2_MULPD, 0, RK2_KERNELS)
#define RK2_max_f32 RK2_F32(max_f32, float, float, rk2_ld_f32, RK2_MAXPS, RK2_FMAXPS, 1, RK2_KERNELS)
#define RK2_min_f32 RK2_F32(min_f32, float, float, rk2_ld_f32, RK2_MINPS, RK2_FMINPS, 1, RK2_KERNELS)
#define RK2_max_f64 RK2_F64(max_f64, double, double, rk2_ld_f64, RK2_MAXPD, RK2_FMAXPD, 1, RK2_KERNELS)
#define RK2_min_f64 RK2_F64(min_f64, double, double, rk2_ld_f64, RK2_MINPD, RK2_FMINPD, 1, RK2_KERNELS)
#define RK_VARITH(NAME, T, A) RK2_##NAME
#define RK_VMINMAX(NAME, T, OP) RK2_##NAME
#endif
#include "cpu/k_reduce_kern.h"
