/* cjrt: the matrix-vector kernels of dot_general (see k_dot_gv.h, and k_dot.c's GEMV for how
 * their sums are combined). On AVX-512 the accumulators stay in registers: the axpy form keeps a
 * strip of up to 128 outputs in 8 zmm while it streams the strip's rows of the matrix (a strip
 * accumulated through memory made every k a store-to-load chain: 2x slower than XLA on batch-1
 * MLPs), the dot form runs 4 rows at once, 32 lanes each, so the vector's loads and the final
 * horizontal sums are shared. bf16 elements are widened by a shift, f16 by F16C, while they are
 * loaded; products are fused multiply-adds. On AVX2 the f32 dot form keeps the portable loop's
 * 64 lanes in 8 ymm with its rounding (same bits). Other cases run portable loops (vectorized by
 * GCC for AVX2 and AVX-512 where it can). */
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

#include "base/dtype.h"
#include "cpu/k_dot_gv.h"

/* ======================================================================== portable */

enum { GV_LANES = 64 };

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#pragma GCC push_options
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#define GV_CLONES __attribute__((target_clones("avx2", "default")))
#define GV_POP_OPTIONS 1
#else
#define GV_CLONES
#endif

/* element i of a matrix of type mt (0 f32, 1 bf16, 2 f16) as f32 */
static inline float gv_el(int mt, const void *m, int64_t i) {
  if (mt == 0) return ((const float *)m)[i];
  uint16_t h = ((const uint16_t *)m)[i];
  if (mt == 2) return cj_f16_to_f32(h);
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* the halving steps with constant bounds, so each one vectorizes */
#define GV_HALVE(acc, w) \
  for (int l = 0; l < (w); l++) (acc)[l] += (acc)[l + (w)];
static inline float gv_lanes_sum(float *acc) {
  _Static_assert(GV_LANES == 64, "gv_lanes_sum halves 64 lanes");
  GV_HALVE(acc, 32) GV_HALVE(acc, 16) GV_HALVE(acc, 8) GV_HALVE(acc, 4) GV_HALVE(acc, 2)
  GV_HALVE(acc, 1)
  return acc[0];
}

static inline __attribute__((always_inline)) void gv_dot_port(int mt, const void *m, int64_t os,
                                                              const float *x, int64_t kn,
                                                              int64_t rows, float *part) {
  size_t es = mt == 0 ? 4 : 2;
  for (int64_t r = 0; r < rows; r++) {
    const char *row = (const char *)m + (size_t)(r * os) * es;
    float acc[GV_LANES] = {0};
    int64_t k = 0;
    for (; k + GV_LANES <= kn; k += GV_LANES)
      for (int l = 0; l < GV_LANES; l++) acc[l] += gv_el(mt, row, k + l) * x[k + l];
    for (int64_t l = 0; k + l < kn; l++) acc[l] += gv_el(mt, row, k + l) * x[k + l];
    part[r] = gv_lanes_sum(acc);
  }
}

static inline __attribute__((always_inline)) void gv_axpy_port(int mt, float *acc, const void *w,
                                                               int64_t ldw, const float *x,
                                                               int64_t kn, int64_t ns) {
  size_t es = mt == 0 ? 4 : 2;
  for (int64_t i = 0; i < ns; i++) acc[i] = 0;
  for (int64_t k = 0; k < kn; k++) {
    float xk = x[k];
    const char *row = (const char *)w + (size_t)(k * ldw) * es;
    for (int64_t i = 0; i < ns; i++) acc[i] += xk * gv_el(mt, row, i);
  }
}

#define GV_PORT(SFX, MT)                                                                       \
  GV_CLONES static void gv_dot_##SFX(const void *m, int64_t os, const float *x, int64_t kn,    \
                                     int64_t rows, float *part) {                              \
    gv_dot_port(MT, m, os, x, kn, rows, part);                                                 \
  }                                                                                            \
  GV_CLONES static void gv_axpy_##SFX(float *acc, const void *w, int64_t ldw, const float *x,  \
                                      int64_t kn, int64_t ns) {                                \
    gv_axpy_port(MT, acc, w, ldw, x, kn, ns);                                                  \
  }
GV_PORT(f32, 0)
GV_PORT(bf16, 1)
GV_PORT(f16, 2)

#ifdef GV_POP_OPTIONS
#pragma GCC pop_options
#endif

/* ======================================================================== AVX-512 */

#if defined(__x86_64__) && defined(__GNUC__)
#define GVX_TGT __attribute__((target("avx512f,avx512bw,avx512vl,f16c,fma")))
#define GVX_INL static inline __attribute__((always_inline))

/* 16 elements of type mt at element i of base as f32; lanes outside mask mk zero, not read */
GVX_TGT GVX_INL __m512 gvx_ldm(int mt, const void *base, int64_t i, __mmask16 mk) {
  if (mt == 0) return _mm512_maskz_loadu_ps(mk, (const float *)base + i);
  __m256i h = _mm256_maskz_loadu_epi16(mk, (const uint16_t *)base + i);
  if (mt == 1) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  return _mm512_cvtph_ps(h);
}
GVX_TGT GVX_INL __m512 gvx_ld(int mt, const void *base, int64_t i) {
  if (mt == 0) return _mm512_loadu_ps((const float *)base + i);
  __m256i h = _mm256_loadu_si256((const __m256i *)((const uint16_t *)base + i));
  if (mt == 1) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  return _mm512_cvtph_ps(h);
}
static inline __mmask16 gvx_mask(int64_t n) {
  return n >= 16 ? (__mmask16)0xffff : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1);
}

/* NV accumulators a0..a7 (named: GCC keeps named vectors in registers, not array elements);
 * vector j < NV - 1 full, the last one under mask ml */
#define GVX_V(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define GVX_AXDECL(j) __m512 a##j = _mm512_setzero_ps();
#define GVX_AXFMA(j)                                                                         \
  if (NV > j) {                                                                              \
    __m512 v = NV - 1 > j ? gvx_ld(mt, row, 16 * j) : gvx_ldm(mt, row, 16 * j, ml);          \
    a##j = _mm512_fmadd_ps(v, xk, a##j);                                                     \
  }
#define GVX_AXST(j) \
  if (NV > j) _mm512_mask_storeu_ps(acc + 16 * j, NV - 1 > j ? (__mmask16)0xffff : ml, a##j);

GVX_TGT GVX_INL void gvx_axpy_nv(int mt, int NV, float *acc, const void *w, int64_t ldw,
                                 const float *x, int64_t kn, int64_t ns) {
  size_t rb = (size_t)ldw * (mt == 0 ? 4 : 2);
  __mmask16 ml = gvx_mask(ns - 16 * (NV - 1));
  GVX_V(GVX_AXDECL)
  const char *row = w;
  for (int64_t k = 0; k < kn; k++, row += rb) {
    __m512 xk = _mm512_set1_ps(x[k]);
    GVX_V(GVX_AXFMA)
  }
  GVX_V(GVX_AXST)
}

/* R rows (R <= 4) of two accumulators each, over kn contiguous elements: full 32-element steps,
 * then a masked one */
#define GVX_R(X) X(0) X(1) X(2) X(3)
#define GVX_DDECL(r) __m512 c##r##a = _mm512_setzero_ps(), c##r##b = _mm512_setzero_ps();
#define GVX_DFMA(r, LD0, LD1)                                                                \
  if (R > r) {                                                                               \
    const char *row = base + (size_t)(r * os) * es;                                          \
    c##r##a = _mm512_fmadd_ps(LD0, x0, c##r##a);                                             \
    c##r##b = _mm512_fmadd_ps(LD1, x1, c##r##b);                                             \
  }
#define GVX_DFULL(r) GVX_DFMA(r, gvx_ld(mt, row, k), gvx_ld(mt, row, k + 16))
#define GVX_DTAIL(r) GVX_DFMA(r, gvx_ldm(mt, row, k, m0), gvx_ldm(mt, row, k + 16, m1))
#define GVX_DSUM(r) \
  if (R > r) part[r] = _mm512_reduce_add_ps(_mm512_add_ps(c##r##a, c##r##b));

GVX_TGT GVX_INL void gvx_dot_r(int mt, int R, const void *m, int64_t os, const float *x,
                               int64_t kn, float *part) {
  size_t es = mt == 0 ? 4 : 2;
  const char *base = m;
  GVX_R(GVX_DDECL)
  int64_t k = 0;
  for (; k + 32 <= kn; k += 32) {
    __m512 x0 = _mm512_loadu_ps(x + k), x1 = _mm512_loadu_ps(x + k + 16);
    GVX_R(GVX_DFULL)
  }
  if (k < kn) {
    __mmask16 m0 = gvx_mask(kn - k), m1 = gvx_mask(kn - k - 16);
    __m512 x0 = _mm512_maskz_loadu_ps(m0, x + k), x1 = _mm512_maskz_loadu_ps(m1, x + k + 16);
    GVX_R(GVX_DTAIL)
  }
  GVX_R(GVX_DSUM)
}

#define GVX_KERNELS(SFX, MT)                                                                   \
  GVX_TGT static void gvx_axpy_##SFX(float *acc, const void *w, int64_t ldw, const float *x,   \
                                     int64_t kn, int64_t ns) {                                 \
    switch ((ns + 15) / 16) {                                                                  \
      case 1: gvx_axpy_nv(MT, 1, acc, w, ldw, x, kn, ns); break;                               \
      case 2: gvx_axpy_nv(MT, 2, acc, w, ldw, x, kn, ns); break;                               \
      case 3: gvx_axpy_nv(MT, 3, acc, w, ldw, x, kn, ns); break;                               \
      case 4: gvx_axpy_nv(MT, 4, acc, w, ldw, x, kn, ns); break;                               \
      case 5: gvx_axpy_nv(MT, 5, acc, w, ldw, x, kn, ns); break;                               \
      case 6: gvx_axpy_nv(MT, 6, acc, w, ldw, x, kn, ns); break;                               \
      case 7: gvx_axpy_nv(MT, 7, acc, w, ldw, x, kn, ns); break;                               \
      default: gvx_axpy_nv(MT, 8, acc, w, ldw, x, kn, ns); break;                              \
    }                                                                                          \
  }                                                                                            \
  GVX_TGT static void gvx_dot_##SFX(const void *m, int64_t os, const float *x, int64_t kn,     \
                                    int64_t rows, float *part) {                               \
    switch (rows) {                                                                            \
      case 1: gvx_dot_r(MT, 1, m, os, x, kn, part); break;                                     \
      case 2: gvx_dot_r(MT, 2, m, os, x, kn, part); break;                                     \
      case 3: gvx_dot_r(MT, 3, m, os, x, kn, part); break;                                     \
      default: gvx_dot_r(MT, 4, m, os, x, kn, part); break;                                    \
    }                                                                                          \
  }
GVX_KERNELS(f32, 0)
GVX_KERNELS(bf16, 1)
GVX_KERNELS(f16, 2)

/* AVX-512 F, BW (16-bit masked loads), VL and F16C; asked once (CPUID traps in a VM) */
static bool gvx_ok(void) {
  static _Atomic int ok = -1; /* a race only probes twice */
  int v = atomic_load_explicit(&ok, memory_order_relaxed);
  if (v < 0) {
    __builtin_cpu_init();
    unsigned a = 0, b = 0, c = 0, d = 0; /* F16C from leaf 1 (clang's builtin lacks "f16c") */
    v = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
    atomic_store_explicit(&ok, v, memory_order_relaxed);
  }
  return v;
}
#endif

/* ======================================================================== AVX2 */

#if defined(__x86_64__) && defined(__GNUC__)
/* The f32 dot form for AVX2 CPUs: the portable loop's 64 lanes kept in 8 ymm (lanes 8j..8j+7 in
 * a_j) instead of an array zeroed (rep stos) and updated through memory on every call. Same
 * rounding as the portable code (multiply, then add: no FMA, as GCC's avx2 clone has none), the
 * tail's lanes beyond kn left untouched (blended), and the same halving order, so the bits are
 * the portable path's on every input. */
#define GVY_TGT __attribute__((target("avx2")))
#define GVY_V(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define GVY_DECL(j) __m256 a##j = _mm256_setzero_ps();
#define GVY_STEP(j)                                                                           \
  a##j = _mm256_add_ps(                                                                       \
      a##j, _mm256_mul_ps(_mm256_loadu_ps(row + k + 8 * j), _mm256_loadu_ps(x + k + 8 * j)));
#define GVY_TAIL(j)                                                                           \
  {                                                                                           \
    __m256i mk = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(kn - k - 8 * j)), lane);          \
    __m256 p = _mm256_mul_ps(_mm256_maskload_ps(row + k + 8 * j, mk),                         \
                             _mm256_maskload_ps(x + k + 8 * j, mk));                          \
    a##j = _mm256_blendv_ps(a##j, _mm256_add_ps(a##j, p), _mm256_castsi256_ps(mk));          \
  }

GVY_TGT static void gvy_dot_f32(const void *m, int64_t os, const float *x, int64_t kn,
                                int64_t rows, float *part) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int64_t r = 0; r < rows; r++) {
    const float *row = (const float *)m + r * os;
    GVY_V(GVY_DECL)
    int64_t k = 0;
    for (; k + GV_LANES <= kn; k += GV_LANES) { GVY_V(GVY_STEP) }
    if (k < kn) {
      /* lanes kn - k.. keep their sums; only vectors with a lane below kn - k are touched */
      if (kn - k > 0) GVY_TAIL(0)
      if (kn - k > 8) GVY_TAIL(1)
      if (kn - k > 16) GVY_TAIL(2)
      if (kn - k > 24) GVY_TAIL(3)
      if (kn - k > 32) GVY_TAIL(4)
      if (kn - k > 40) GVY_TAIL(5)
      if (kn - k > 48) GVY_TAIL(6)
      if (kn - k > 56) GVY_TAIL(7)
    }
    /* gv_lanes_sum: acc[l] += acc[l + w] for w = 32, 16, 8, 4, 2, 1 */
    a0 = _mm256_add_ps(a0, a4), a1 = _mm256_add_ps(a1, a5);
    a2 = _mm256_add_ps(a2, a6), a3 = _mm256_add_ps(a3, a7);
    a0 = _mm256_add_ps(a0, a2), a1 = _mm256_add_ps(a1, a3);
    a0 = _mm256_add_ps(a0, a1);
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(a0), _mm256_extractf128_ps(a0, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
    part[r] = _mm_cvtss_f32(h);
  }
}

static bool gvy_ok(void) {
  static _Atomic int ok = -1; /* a race only probes twice */
  int v = atomic_load_explicit(&ok, memory_order_relaxed);
  if (v < 0) {
    __builtin_cpu_init();
    v = __builtin_cpu_supports("avx2");
    atomic_store_explicit(&ok, v, memory_order_relaxed);
  }
  return v;
}
#endif

cj_gv_dot_fn cj_gv_dot_portable(cj_dtype mt) {
  return mt == CJ_F32 ? gv_dot_f32 : mt == CJ_BF16 ? gv_dot_bf16 : mt == CJ_F16 ? gv_dot_f16 : NULL;
}

cj_gv_dot_fn cj_gv_dot_avx2(cj_dtype mt) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (mt == CJ_F32 && gvy_ok()) return gvy_dot_f32;
#endif
  (void)mt;
  return NULL;
}

bool cj_gv_pick(cj_dtype mt, cj_gv_axpy_fn *axpy, cj_gv_dot_fn *dot) {
  int t = mt == CJ_F32 ? 0 : mt == CJ_BF16 ? 1 : mt == CJ_F16 ? 2 : -1;
  if (t < 0) return false;
#if defined(__x86_64__) && defined(__GNUC__)
  if (gvx_ok()) {
    *axpy = (cj_gv_axpy_fn[]){gvx_axpy_f32, gvx_axpy_bf16, gvx_axpy_f16}[t];
    *dot = (cj_gv_dot_fn[]){gvx_dot_f32, gvx_dot_bf16, gvx_dot_f16}[t];
    return true;
  }
#endif
  *axpy = (cj_gv_axpy_fn[]){gv_axpy_f32, gv_axpy_bf16, gv_axpy_f16}[t];
  cj_gv_dot_fn dy = cj_gv_dot_avx2(mt);
  *dot = dy ? dy : cj_gv_dot_portable(mt);
  return true;
}
