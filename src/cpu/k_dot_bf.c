/* cjrt: the bf16 pair kernels (see k_dot_bf.h): the 8 x 32 micro-kernel on VDPBF16PS, and the
 * two packing shapes of its operands: 8 rows along the contraction transposed into pairs (an
 * aligned 32-bit load of a bf16 row is a pair already), two rows along the outputs zipped. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

#include "base/dtype.h"
#include "cpu/k_dot_bf.h"
#include "cpu/k_linalg.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "cpu/gemm_tile.h"

#define BD_TGT "avx512f,avx512bw,avx512vl,avx512bf16"

__attribute__((target(BD_TGT))) static void bd_ukr_avx512(int64_t kp, const uint32_t *ap,
                                                          const uint32_t *bp, float *c,
                                                          int64_t ldc, int64_t mr, int64_t nr,
                                                          bool acc) {
  GT_ROWS(GT_DECL512)
  for (int64_t k = 0; k < kp; k++) {
    __m512bh b0 = (__m512bh)_mm512_loadu_si512(bp + k * CJ_BD_NR);
    __m512bh b1 = (__m512bh)_mm512_loadu_si512(bp + k * CJ_BD_NR + 16);
    const uint32_t *a = ap + k * CJ_BD_MR;
#define GT_A(i) a[i]
    GT_ROWS(GT_DPBF512)
#undef GT_A
  }
  GT_END512(CJ_BD_NR)
}

__attribute__((target(BD_TGT))) static void bd_ukr_rows_avx512(int64_t nseg, int64_t kp,
                                                               const void *const *ptrs,
                                                               const uint32_t *bp, float *c,
                                                               int64_t ldc, bool acc) {
  GT_ROWS(GT_DECL512)
#define GT_SEG_T uint32_t
#define GT_A(i) a##i[k]
  GT_SEGMENTS(kp, __m512bh b0 = (__m512bh)_mm512_loadu_si512(bp);
              __m512bh b1 = (__m512bh)_mm512_loadu_si512(bp + 16);, GT_DPBF512)
#undef GT_A
#undef GT_SEG_T
  GT_ROWS(GT_STORE512)
}

__attribute__((target(BD_TGT))) void cj_bd_from_f32(const float *src, int64_t n, uint32_t *dst) {
  for (int64_t i = 0; i < n; i += 32) {
    int64_t m = n - i < 32 ? n - i : 32;
    __mmask16 k0 = (__mmask16)((1u << (m < 16 ? m : 16)) - 1u);
    __mmask16 k1 = (__mmask16)((1u << (m > 16 ? m - 16 : 0)) - 1u);
    __m512 lo = _mm512_maskz_loadu_ps(k0, src + i), hi = _mm512_maskz_loadu_ps(k1, src + i + 16);
    __m512i h = (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
    _mm512_mask_storeu_epi32(dst + i / 2, (__mmask16)((1u << (m / 2)) - 1u), h);
  }
}

/* 16 (mask k) values: the instruction, then its subnormal inputs (1 <= |bits| <= 0x7fffff, which
 * it flushes) rounded one at a time */
__attribute__((target(BD_TGT))) static inline void bd_cvo16(const float *src, uint16_t *dst,
                                                            __mmask16 k) {
  __m512 x = _mm512_maskz_loadu_ps(k, src);
  _mm256_mask_storeu_epi16(dst, k, (__m256i)_mm512_cvtneps_pbh(x));
  __m512i ab = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff));
  __mmask16 sub = _mm512_cmplt_epu32_mask(_mm512_sub_epi32(ab, _mm512_set1_epi32(1)),
                                          _mm512_set1_epi32(0x7fffff));
  for (int l = 0; sub; l++, sub = (__mmask16)(sub >> 1))
    if (sub & 1u) dst[l] = cj_f32_to_bf16(src[l]);
}

__attribute__((target(BD_TGT))) void cj_bd_cvo(const float *src, uint16_t *dst, int64_t n,
                                               bool bf) {
  if (!bf) {
    cj_la_cvo_pick()(src, dst, n, bf);
    return;
  }
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) bd_cvo16(src + i, dst + i, (__mmask16)0xffffu);
  if (i < n) bd_cvo16(src + i, dst + i, (__mmask16)((1u << (n - i)) - 1u));
}

static inline uint32_t bd_pair(const uint16_t *r, int64_t k, int64_t n) {
  return (uint32_t)r[k] | (k + 1 < n ? (uint32_t)r[k + 1] << 16 : 0u);
}

__attribute__((target(BD_TGT))) void cj_bd_tr8(const uint16_t *const *rows, int64_t n,
                                               uint32_t *dst, int64_t ds) {
  int64_t p = 0, np = (n + 1) / 2;
  for (; 2 * p + 16 <= n; p += 8) { /* 8 pairs of each row */
    __m256 r[8];
    for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps((const float *)(rows[i] + 2 * p));
    gt_tr8x8(r, (float *)(dst + p * ds), ds);
  }
  for (; p < np; p++)
    for (int i = 0; i < 8; i++) dst[p * ds + i] = bd_pair(rows[i], 2 * p, n);
}

__attribute__((target(BD_TGT))) void cj_bd_zip(const uint16_t *r0, const uint16_t *r1, int64_t n,
                                               int64_t w, uint32_t *dst) {
  if (n == 32 && w == 32 && r1) { /* a whole panel: unpack in 128-bit lanes, then put in order */
    __m512i x = _mm512_loadu_si512(r0), y = _mm512_loadu_si512(r1);
    __m512i lo = _mm512_unpacklo_epi16(x, y), hi = _mm512_unpackhi_epi16(x, y);
    /* lo: columns 0-3, 8-11, 16-19, 24-27; hi: 4-7, 12-15, 20-23, 28-31 */
    const __m512i i0 = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
    const __m512i i1 = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
    _mm512_storeu_si512(dst, _mm512_permutex2var_epi32(lo, i0, hi));
    _mm512_storeu_si512(dst + 16, _mm512_permutex2var_epi32(lo, i1, hi));
    return;
  }
  for (int64_t j = 0; j < w; j += 16) {
    int64_t m = n - j < 0 ? 0 : n - j > 16 ? 16 : n - j;
    __mmask16 k = (__mmask16)((1u << m) - 1u), kw = (__mmask16)((1u << (w - j < 16 ? w - j : 16)) - 1u);
    __m512i lo = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(k, r0 + j));
    __m512i hi = r1 ? _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(k, r1 + j)) : _mm512_setzero_si512();
    _mm512_mask_storeu_epi32(dst + j, kw, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
  }
}

/* AVX512_BF16: CPUID leaf 7 subleaf 1, EAX bit 5 (with AVX-512 F, BW and VL) */
static bool bd_probe(void) {
  const char *env = getenv("CJ_DOT_BF16");
  if (env && strcmp(env, "off") == 0) return false;
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
      !__builtin_cpu_supports("avx512vl"))
    return false;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_max(0, NULL) < 7 || !__get_cpuid_count(7, 1, &a, &b, &c, &d)) return false;
  return (a >> 5) & 1u;
}

cj_bd_ukr cj_bd_pick(void) {
  static _Atomic int have = -1; /* a race only probes twice */
  int v = atomic_load_explicit(&have, memory_order_relaxed);
  if (v < 0) {
    v = bd_probe();
    atomic_store_explicit(&have, v, memory_order_relaxed);
  }
  return v ? bd_ukr_avx512 : NULL;
}

cj_bd_ukr_rows cj_bd_pick_rows(void) { return cj_bd_pick() ? bd_ukr_rows_avx512 : NULL; }

#else
cj_bd_ukr cj_bd_pick(void) { return NULL; }
cj_bd_ukr_rows cj_bd_pick_rows(void) { return NULL; }
void cj_bd_from_f32(const float *src, int64_t n, uint32_t *dst) { (void)src, (void)n, (void)dst; }
void cj_bd_cvo(const float *src, uint16_t *dst, int64_t n, bool bf) {
  cj_la_cvo_pick()(src, dst, n, bf);
}
void cj_bd_tr8(const uint16_t *const *rows, int64_t n, uint32_t *dst, int64_t ds) {
  (void)rows, (void)n, (void)dst, (void)ds;
}
void cj_bd_zip(const uint16_t *r0, const uint16_t *r1, int64_t n, int64_t w, uint32_t *dst) {
  (void)r0, (void)r1, (void)n, (void)w, (void)dst;
}
#endif
