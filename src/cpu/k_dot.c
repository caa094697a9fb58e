/* cjrt: dot_general (and the deprecated dot). Any batching and contracting dimensions: the
 * lowering turns the operands into index tables (element offsets for each batch, row, column
 * and contraction index), so no transpose is ever materialized. f32 and f64 (and bf16/f16,
 * computed in f32 and rounded once at the end, as XLA does) run a packed, register-blocked GEMM
 * with an AVX-512 or AVX2 micro-kernel chosen from CPUID, in parallel over output tiles of the
 * client's pool. Packing converts bf16/f16 to f32 a vector at a time (F16C, bf16 by shift),
 * transposes operands whose rows run along K in 8 x 8 blocks, uses contiguous runs of the index
 * tables where they have them, and tasks of few rows read f32 B panels in place; matrix-vector products with an f32, bf16 or f16 matrix run a GEMV (k_dot_gv.c); integers,
 * complex numbers and mixed types run a plain loop. No float sum is one long running sum: the
 * GEMM adds 256-term register blocks in two levels of chunks when K is long, the GEMV and the
 * plain loop combine block sums pairwise. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

#include "cpu/k_dot_bf.h"
#include "cpu/k_dot_gv.h"
#include "cpu/k_linalg.h"
#include "cpu/lower.h"


/* B's row k at bp + k * ldb (ldb = NR32 for a packed panel) */
typedef void (*ukr32_t)(int64_t kc, const float *ap, const float *bp, int64_t ldb, float *c, int64_t ldc,
                        int64_t mr, int64_t nr, bool acc);
typedef void (*ukr64_t)(int64_t kc, const double *ap, const double *bp, int64_t ldb, double *c,
                        int64_t ldc, int64_t mr, int64_t nr, bool acc);

/* as ukr32_t for panels of 16 or fewer columns, the 8 lhs rows read in place (contiguous along
 * K, f32) instead of from a packed panel */
typedef void (*ukr16r_t)(int64_t kc, const float *const *rows, const float *bp, int64_t ldb, float *c,
                         int64_t ldc, int64_t mr, int64_t nr, bool acc);

/* dst[k * ds + i] = rows[i][k] for i < 8, k < n: 8 rows contiguous along k into a k-major panel
 * (packing an operand whose rows run along the contraction) */
typedef void (*tr8_t)(const float *const *rows, int64_t n, float *dst, int64_t ds);
/* the same for f64 rows (8 x 8 blocks of doubles) */
typedef void (*tr8d_t)(const double *const *rows, int64_t n, double *dst, int64_t ds);

typedef struct dot_params {
  ukr32_t u32; /* micro-kernels picked from CPUID at compile time */
  ukr64_t u64;
  ukr16r_t u16r; /* NULL where there is none */
  cj_la_cvi cvi; /* 16-bit <-> f32 rows, picked from CPUID at compile time */
  cj_la_cvo cvo;
  tr8_t tr8;
  tr8d_t tr8d;
  cj_gv_axpy_fn gva; /* the GEMV's kernels for the matrix's element type */
  cj_gv_dot_fn gvd;
  cj_bd_ukr ubf; /* bf16 x bf16 on AVX512_BF16 (k_dot_bf.h), else NULL */
  int64_t B, M, N, K;
  int64_t *ab, *am, *ak; /* lhs element offsets: batch, row, contraction */
  int64_t *bb, *bk, *bn; /* rhs element offsets: batch, contraction, column */
  cj_dtype lt, rt, ot;
  int kind;              /* DK_F32, DK_F64, DK_GENERIC */
  int64_t kchunk;        /* contraction indices summed in one chunk (see gemm_task) */
  int gv;                /* GV_NONE or a matrix-vector form (see gemv) */
  bool a_affine, b_affine;   /* both of the operand's tables affine */
  bool ak_aff, bk_aff;       /* the contraction's tables affine */
  int64_t sam, sak, sbk, sbn; /* element strides of the affine tables */
} dot_params;

enum { DK_F32, DK_F64, DK_GENERIC };

/* ======================================================================== GEMM f32/f64 */

enum { MR = 8, NR32 = 32, NR64 = 16, KC = 256, MC = 128, NC = 512 };
/* long contractions (K > KTREE) are summed in chunks (see gemm_task), a task then covers at
 * most TREE_ROWS rows (its chunk sums need a scratch region of that many rows) */
enum { KTREE = 16 * KC, TREE_ROWS = 2 * MC };
/* tasks of at most this many rows multiply by f32 B panels in place, unpacked (see run32) */
enum { BDIRECT_ROWS = 4 * MR };

static void ukr32_generic(int64_t kc, const float *ap, const float *bp, int64_t ldb, float *c, int64_t ldc,
                          int64_t mr, int64_t nr, bool acc) {
  float t[MR][NR32];
  memset(t, 0, sizeof t);
  for (int64_t k = 0; k < kc; k++)
    for (int i = 0; i < MR; i++) {
      float a = ap[k * MR + i];
      for (int j = 0; j < NR32; j++) t[i][j] += a * bp[k * ldb + j];
    }
  for (int64_t i = 0; i < mr; i++)
    for (int64_t j = 0; j < nr; j++) c[i * ldc + j] = acc ? c[i * ldc + j] + t[i][j] : t[i][j];
}

static void ukr64_generic(int64_t kc, const double *ap, const double *bp, int64_t ldb, double *c,
                          int64_t ldc, int64_t mr, int64_t nr, bool acc) {
  double t[MR][NR64];
  memset(t, 0, sizeof t);
  for (int64_t k = 0; k < kc; k++)
    for (int i = 0; i < MR; i++) {
      double a = ap[k * MR + i];
      for (int j = 0; j < NR64; j++) t[i][j] += a * bp[k * ldb + j];
    }
  for (int64_t i = 0; i < mr; i++)
    for (int64_t j = 0; j < nr; j++) c[i * ldc + j] = acc ? c[i * ldc + j] + t[i][j] : t[i][j];
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The micro-kernels keep the MR x NR accumulator tile in registers: 16 zmm (8 rows x 2 vectors)
 * written out as named variables, since GCC does not keep array elements in registers. */
#include "cpu/gemm_tile.h"

__attribute__((target("avx512f"))) static void ukr32_avx512(int64_t kc, const float *ap,
                                                             const float *bp, int64_t ldb, float *c,
                                                             int64_t ldc, int64_t mr, int64_t nr,
                                                             bool acc) {
  /* a partial tile is stored under masks: the columns below nr of the rows below mr */
  __mmask16 ma = (__mmask16)(nr >= 16 ? 0xffff : (1u << nr) - 1);
  __mmask16 mb = (__mmask16)(nr >= NR32 ? 0xffff : nr > 16 ? (1u << (nr - 16)) - 1 : 0);
#define MST(i, V, M, OFF)                                                  \
  {                                                                        \
    __m512 v = V;                                                          \
    if (acc) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(M, c + i * ldc + OFF)); \
    _mm512_mask_storeu_ps(c + i * ldc + OFF, M, v);                        \
  }
  if (nr <= 16) { /* a half panel (N of 16 or less): one vector per row, half the products */
#define HDECL(i) __m512 h##i = _mm512_setzero_ps();
#define HFMA(i) h##i = _mm512_fmadd_ps(_mm512_set1_ps(a[i]), b0, h##i);
#define HST(i) if (i < mr) MST(i, h##i, ma, 0)
    GT_ROWS(HDECL)
    for (int64_t k = 0; k < kc; k++) {
      __m512 b0 = _mm512_loadu_ps(bp + k * ldb);
      const float *a = ap + k * MR;
      GT_ROWS(HFMA)
    }
    GT_ROWS(HST)
#undef HDECL
#undef HFMA
#undef HST
    return;
  }
  GT_ROWS(GT_DECL512)
  for (int64_t k = 0; k < kc; k++) {
    __m512 b0 = _mm512_loadu_ps(bp + k * ldb), b1 = _mm512_loadu_ps(bp + k * ldb + 16);
    const float *a = ap + k * MR;
#define GT_A(i) a[i]
    GT_ROWS(GT_FMA512)
#undef GT_A
  }
  if (mr == MR && nr == NR32) {
    GT_ROWS(GT_STORE512)
    return;
  }
#define PST(i)                  \
  if (i < mr) {                 \
    MST(i, c##i##a, ma, 0)      \
    MST(i, c##i##b, mb, 16)     \
  }
  GT_ROWS(PST)
#undef PST
#undef MST
}

__attribute__((target("avx512f"))) static void ukr16r_avx512(int64_t kc, const float *const *rows,
                                                              const float *bp, int64_t ldb, float *c,
                                                              int64_t ldc, int64_t mr, int64_t nr,
                                                              bool acc) {
  __mmask16 ma = (__mmask16)(nr >= 16 ? 0xffff : (1u << nr) - 1);
#define RDECL(i) __m512 h##i = _mm512_setzero_ps(); const float *a##i = rows[i];
#define RFMA(i) h##i = _mm512_fmadd_ps(_mm512_set1_ps(a##i[k]), b0, h##i);
#define RST(i)                                                                         \
  if (i < mr) {                                                                        \
    __m512 v = h##i;                                                                   \
    if (acc) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(ma, c + i * ldc));             \
    _mm512_mask_storeu_ps(c + i * ldc, ma, v);                                         \
  }
  GT_ROWS(RDECL)
  for (int64_t k = 0; k < kc; k++) {
    __m512 b0 = _mm512_loadu_ps(bp + k * ldb);
    GT_ROWS(RFMA)
  }
  GT_ROWS(RST)
#undef RDECL
#undef RFMA
#undef RST
}

__attribute__((target("avx512f"))) static void ukr64_avx512(int64_t kc, const double *ap,
                                                             const double *bp, int64_t ldb,
                                                             double *c, int64_t ldc, int64_t mr,
                                                             int64_t nr, bool acc) {
  GT_ROWS(GT_DECL512D)
  for (int64_t k = 0; k < kc; k++) {
    __m512d b0 = _mm512_loadu_pd(bp + k * ldb), b1 = _mm512_loadu_pd(bp + k * ldb + 8);
    const double *a = ap + k * MR;
#define GT_A(i) a[i]
    GT_ROWS(GT_FMA512D)
#undef GT_A
  }
  if (mr == MR && nr == NR64) {
    GT_ROWS(GT_STORE512D)
    return;
  }
  double t[MR][NR64];
  GT_ROWS(GT_SPILL512D)
  for (int64_t i = 0; i < mr; i++)
    for (int64_t j = 0; j < nr; j++) c[i * ldc + j] = acc ? c[i * ldc + j] + t[i][j] : t[i][j];
}

/* AVX2 (16 ymm registers): the 8-row tile in passes of 4 rows x 2 vectors (8 accumulators; the
 * 16 of 8 rows x 2 vectors left no room for the rhs vectors and the broadcast, and the f32
 * kernel that way ran at two thirds of this one's rate), for f32 (a 32-column panel, 16 columns
 * a pass) and f64 (16 columns, 8 a pass). Each element's sum is the same as in every other form
 * of the kernels: k in order, one FMA per term, then added to c when acc. */
#define UKR_AVX2(NAME, T, V, S, BC, L)                                                           \
  __attribute__((target("avx2,fma"))) static void NAME(int64_t kc, const T *ap, const T *bp,     \
                                                        int64_t ldb, T *c, int64_t ldc,          \
                                                        int64_t mr, int64_t nr, bool acc) {      \
    for (int64_t j0 = 0; j0 < nr; j0 += 2 * (L))                                                 \
      for (int64_t i0 = 0; i0 < mr; i0 += 4) {                                                   \
        V c0a = _mm256_setzero_##S(), c0b = c0a, c1a = c0a, c1b = c0a, c2a = c0a, c2b = c0a;     \
        V c3a = c0a, c3b = c0a;                                                                  \
        const T *a = ap + i0, *b = bp + j0;                                                      \
        for (int64_t k = 0; k < kc; k++, a += MR, b += ldb) {                                    \
          V b0 = _mm256_loadu_##S(b), b1 = _mm256_loadu_##S(b + (L)), x;                         \
          x = BC(a);                                                                             \
          c0a = _mm256_fmadd_##S(x, b0, c0a);                                                    \
          c0b = _mm256_fmadd_##S(x, b1, c0b);                                                    \
          x = BC(a + 1);                                                                         \
          c1a = _mm256_fmadd_##S(x, b0, c1a);                                                    \
          c1b = _mm256_fmadd_##S(x, b1, c1b);                                                    \
          x = BC(a + 2);                                                                         \
          c2a = _mm256_fmadd_##S(x, b0, c2a);                                                    \
          c2b = _mm256_fmadd_##S(x, b1, c2b);                                                    \
          x = BC(a + 3);                                                                         \
          c3a = _mm256_fmadd_##S(x, b0, c3a);                                                    \
          c3b = _mm256_fmadd_##S(x, b1, c3b);                                                    \
        }                                                                                        \
        T *cp = c + i0 * ldc + j0;                                                               \
        if (i0 + 4 <= mr && j0 + 2 * (L) <= nr) {                                                \
          UKR_AVX2_ST(0, S, L) UKR_AVX2_ST(1, S, L) UKR_AVX2_ST(2, S, L) UKR_AVX2_ST(3, S, L)    \
          continue;                                                                              \
        }                                                                                        \
        T t[4][2 * (L)];                                                                         \
        _mm256_storeu_##S(t[0], c0a);                                                            \
        _mm256_storeu_##S(t[0] + (L), c0b);                                                      \
        _mm256_storeu_##S(t[1], c1a);                                                            \
        _mm256_storeu_##S(t[1] + (L), c1b);                                                      \
        _mm256_storeu_##S(t[2], c2a);                                                            \
        _mm256_storeu_##S(t[2] + (L), c2b);                                                      \
        _mm256_storeu_##S(t[3], c3a);                                                            \
        _mm256_storeu_##S(t[3] + (L), c3b);                                                      \
        int64_t ni = mr - i0 < 4 ? mr - i0 : 4, nj = nr - j0 < 2 * (L) ? nr - j0 : 2 * (L);     \
        for (int64_t i = 0; i < ni; i++)                                                         \
          for (int64_t j = 0; j < nj; j++)                                                       \
            cp[i * ldc + j] = acc ? cp[i * ldc + j] + t[i][j] : t[i][j];                         \
      }                                                                                          \
  }
#define UKR_AVX2_ST(i, S, L)                                                      \
  if (acc) {                                                                      \
    c##i##a = _mm256_add_##S(c##i##a, _mm256_loadu_##S(cp + i * ldc));            \
    c##i##b = _mm256_add_##S(c##i##b, _mm256_loadu_##S(cp + i * ldc + (L)));      \
  }                                                                               \
  _mm256_storeu_##S(cp + i * ldc, c##i##a);                                       \
  _mm256_storeu_##S(cp + i * ldc + (L), c##i##b);
UKR_AVX2(ukr32_avx2, float, __m256, ps, _mm256_broadcast_ss, 8)
UKR_AVX2(ukr64_avx2, double, __m256d, pd, _mm256_broadcast_sd, 4)
#undef UKR_AVX2
#undef UKR_AVX2_ST

static ukr32_t pick32(void) { return (ukr32_t[]){ukr32_generic, ukr32_avx2, ukr32_avx512}[gt_isa()]; }
static ukr64_t pick64(void) { return (ukr64_t[]){ukr64_generic, ukr64_avx2, ukr64_avx512}[gt_isa()]; }
static ukr16r_t pick16r(void) { return gt_isa() == 2 ? ukr16r_avx512 : NULL; }
#else
static ukr16r_t pick16r(void) { return NULL; }
static ukr32_t pick32(void) { return ukr32_generic; }
static ukr64_t pick64(void) { return ukr64_generic; }
#endif

/* packing: A block [mc x kc] into MR-row panels (k-major), B panel [kc x nc] into NR-column
 * panels; zero padded; small floats converted to f32 */
static inline float ld32(cj_dtype dt, const char *base, int64_t off) {
  switch (dt) {
    case CJ_F32: return ((const float *)base)[off];
    case CJ_BF16: return cj_bf16_to_f32(((const uint16_t *)base)[off]);
    case CJ_F16: return cj_f16_to_f32(((const uint16_t *)base)[off]);
    default: return (float)cj_elem_get_f64(dt, base, (size_t)off);
  }
}

/* ======================================================================== 16-bit <-> f32 */

static void cvi_generic(const uint16_t *src, int64_t ss, float *dst, int64_t ds, int64_t rows,
                        int64_t n, bool bf) {
  for (int64_t r = 0; r < rows; r++, src += ss, dst += ds)
    for (int64_t i = 0; i < n; i++) dst[i] = bf ? cj_bf16_to_f32(src[i]) : cj_f16_to_f32(src[i]);
}
static void cvo_generic(const float *src, uint16_t *dst, int64_t n, bool bf) {
  for (int64_t i = 0; i < n; i++) dst[i] = bf ? cj_f32_to_bf16(src[i]) : cj_f32_to_f16(src[i]);
}

/* n elements of sb bytes each at src converted to elements of db bytes at dst, W at a time by
 * `vec`, the tail through zero-padded buffers (inlined, so that `vec` is a direct call) */
static inline __attribute__((always_inline)) void cv_row(void (*vec)(const void *, void *, bool),
                                                         int64_t W, const char *src, int64_t sb,
                                                         char *dst, int64_t db, int64_t n,
                                                         bool bf) {
  int64_t i = 0;
  for (; i + W <= n; i += W) vec(src + i * sb, dst + i * db, bf);
  if (i < n) {
    char tb[64] = {0}, fb[64];
    memcpy(tb, src + i * sb, (size_t)((n - i) * sb));
    vec(tb, fb, bf);
    memcpy(dst + i * db, fb, (size_t)((n - i) * db));
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
/* One vector of W elements each way, written once for both ISAs with GCC vector types: bf16 by
 * shifts (rounding to nearest even on the bits; a NaN keeps its top bits, made quiet), f16 by
 * the F16C instruction of the width (HF: __m256i -> __m512 or __m128i -> __m256; FH back). */
#define CV_VEC(SFX, TGT, W, HV, FV, HF, FH)                                                    \
  typedef uint16_t cv_h##SFX __attribute__((vector_size(2 * W)));                            \
  typedef uint32_t cv_u##SFX __attribute__((vector_size(4 * W)));                            \
  __attribute__((target(TGT))) static inline void cv_in_##SFX(const void *s, void *d,        \
                                                              bool bf) {                     \
    cv_h##SFX h;                                                                             \
    memcpy(&h, s, sizeof h);                                                                 \
    FV f;                                                                                    \
    if (bf) {                                                                                \
      cv_u##SFX u = __builtin_convertvector(h, cv_u##SFX) << 16;                             \
      memcpy(&f, &u, sizeof f);                                                              \
    } else {                                                                                 \
      f = HF((HV)h);                                                                         \
    }                                                                                        \
    memcpy(d, &f, sizeof f);                                                                 \
  }                                                                                          \
  __attribute__((target(TGT))) static inline void cv_out_##SFX(const void *s, void *d,       \
                                                               bool bf) {                    \
    FV f;                                                                                    \
    memcpy(&f, s, sizeof f);                                                                 \
    cv_h##SFX h;                                                                             \
    if (!bf) {                                                                               \
      h = (cv_h##SFX)FH(f);                                                                  \
    } else {                                                                                 \
      cv_u##SFX u, hi, r, nan;                                                               \
      memcpy(&u, &f, sizeof u);                                                              \
      hi = u >> 16;                                                                          \
      r = (u + 0x7fffu + (hi & 1u)) >> 16;                                                   \
      nan = (cv_u##SFX)((u & 0x7fffffffu) > 0x7f800000u);                                    \
      r = (r & ~nan) | ((hi | 0x40u) & nan);                                                 \
      h = __builtin_convertvector(r, cv_h##SFX);                                             \
    }                                                                                        \
    memcpy(d, &h, sizeof h);                                                                 \
  }                                                                                          \
  __attribute__((target(TGT))) static void cvi_##SFX(const uint16_t *src, int64_t ss,         \
                                                     float *dst, int64_t ds, int64_t rows,   \
                                                     int64_t n, bool bf) {                   \
    for (int64_t r = 0; r < rows; r++)                                                       \
      cv_row(cv_in_##SFX, W, (const char *)(src + r * ss), 2, (char *)(dst + r * ds), 4, n, bf); \
  }                                                                                          \
  __attribute__((target(TGT))) static void cvo_##SFX(const float *src, uint16_t *dst,         \
                                                     int64_t n, bool bf) {                   \
    cv_row(cv_out_##SFX, W, (const char *)src, 4, (char *)dst, 2, n, bf);                    \
  }
#define CV_F2H512(f) _mm512_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define CV_F2H256(f) _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
CV_VEC(avx512, "avx512f,f16c", 16, __m256i, __m512, _mm512_cvtph_ps, CV_F2H512)
CV_VEC(avx2, "avx2,f16c", 8, __m128i, __m256, _mm256_cvtph_ps, CV_F2H256)
#endif

/* the row conversions for this CPU: 2 AVX-512, 1 AVX2 (both with F16C), 0 generic. Asked once:
 * convert ops pick their conversion per block, and CPUID traps to the hypervisor in a VM (a
 * CPUID per call made bf16/f16 models 3-12x slower) */
static int cv_isa_probe(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  unsigned a = 0, b = 0, c = 0, d = 0; /* F16C from CPUID leaf 1 (clang's builtin lacks "f16c") */
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_F16C)) return 0;
  return __builtin_cpu_supports("avx512f") ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
#else
  return 0;
#endif
}

static int cv_isa(void) {
  static _Atomic int isa = -1; /* a race only probes twice */
  int v = atomic_load_explicit(&isa, memory_order_relaxed);
  if (v < 0) {
    v = cv_isa_probe();
    atomic_store_explicit(&isa, v, memory_order_relaxed);
  }
  return v;
}
#if defined(__x86_64__) && defined(__GNUC__)
cj_la_cvi cj_la_cvi_pick(void) { return (cj_la_cvi[]){cvi_generic, cvi_avx2, cvi_avx512}[cv_isa()]; }
cj_la_cvo cj_la_cvo_pick(void) { return (cj_la_cvo[]){cvo_generic, cvo_avx2, cvo_avx512}[cv_isa()]; }
#else
cj_la_cvi cj_la_cvi_pick(void) { return cvi_generic; }
cj_la_cvo cj_la_cvo_pick(void) { return cvo_generic; }
#endif

/* ======================================================================== 8-row transpose */

/* the portable transposes of 8 f32 or f64 rows (tr8_t, tr8d_t) */
#define TR8_GENERIC(NAME, T)                                                           \
  static void NAME(const T *const *rows, int64_t n, T *dst, int64_t ds) {              \
    for (int i = 0; i < 8; i++)                                                        \
      for (int64_t k = 0; k < n; k++) dst[k * ds + i] = rows[i][k];                    \
  }
TR8_GENERIC(tr8_generic, float)
TR8_GENERIC(tr8d_generic, double)
#undef TR8_GENERIC

#if defined(__x86_64__) && defined(__GNUC__)
/* 8 x 8 blocks through registers (gemm_tile.h) */
__attribute__((target("avx2"))) static void tr8_avx2(const float *const *rows, int64_t n,
                                                     float *dst, int64_t ds) {
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    __m256 r[8];
    for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(rows[i] + k);
    gt_tr8x8(r, dst + k * ds, ds);
  }
  if (k < n) {
    const float *rest[8];
    for (int i = 0; i < 8; i++) rest[i] = rows[i] + k;
    tr8_generic(rest, n - k, dst + k * ds, ds);
  }
}

/* f64: 4 x 4 blocks (rows 0-3, then 4-7) */
__attribute__((target("avx2"))) static void tr8d_avx2(const double *const *rows, int64_t n,
                                                      double *dst, int64_t ds) {
  int64_t k = 0;
  for (; k + 4 <= n; k += 4)
    for (int h = 0; h < 8; h += 4) {
      __m256d r0 = _mm256_loadu_pd(rows[h] + k), r1 = _mm256_loadu_pd(rows[h + 1] + k);
      __m256d r2 = _mm256_loadu_pd(rows[h + 2] + k), r3 = _mm256_loadu_pd(rows[h + 3] + k);
      __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
      __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
      double *d = dst + k * ds + h;
      _mm256_storeu_pd(d, _mm256_permute2f128_pd(t0, t2, 0x20));
      _mm256_storeu_pd(d + ds, _mm256_permute2f128_pd(t1, t3, 0x20));
      _mm256_storeu_pd(d + 2 * ds, _mm256_permute2f128_pd(t0, t2, 0x31));
      _mm256_storeu_pd(d + 3 * ds, _mm256_permute2f128_pd(t1, t3, 0x31));
    }
  if (k < n) {
    const double *rest[8];
    for (int i = 0; i < 8; i++) rest[i] = rows[i] + k;
    tr8d_generic(rest, n - k, dst + k * ds, ds);
  }
}
#endif

static tr8d_t pick_tr8d(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (gt_isa() > 0) return tr8d_avx2; /* AVX2, also on AVX-512 CPUs */
#endif
  return tr8d_generic;
}

static tr8_t pick_tr8(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (cv_isa() > 0) return tr8_avx2; /* AVX2 (and F16C) */
#endif
  return tr8_generic;
}

typedef struct gemm_ctx {
  const dot_params *p;
  const char *a, *b;
  char *c;
  cj_exec_ctx *ctx;
  int64_t ntiles, mgroups, mper; /* tasks: batch x ntiles x mgroups, mper rows each */
  int64_t nw;                    /* columns per tile (NC, or fewer to give every thread a task) */
  ukr32_t u32;
  ukr64_t u64;
} gemm_ctx;

/* rows x n elements of dtype dt (f32, bf16 or f16) at element offset off of base, row stride
 * ss, as f32 into dst (row stride ds) */
static inline void ld_rows(const dot_params *p, cj_dtype dt, const char *base, int64_t off,
                           int64_t ss, float *dst, int64_t ds, int64_t rows, int64_t n) {
  if (dt == CJ_F32) { /* the panel widths as constant sizes: moves, not calls */
    const float *src = (const float *)base + off;
    if (n == NR32)
      for (int64_t r = 0; r < rows; r++) memcpy(dst + r * ds, src + r * ss, sizeof(float) * NR32);
    else if (n == MR)
      for (int64_t r = 0; r < rows; r++) memcpy(dst + r * ds, src + r * ss, sizeof(float) * MR);
    else
      for (int64_t r = 0; r < rows; r++) memcpy(dst + r * ds, src + r * ss, sizeof(float) * (size_t)n);
    return;
  }
  p->cvi((const uint16_t *)base + off, ss, dst, ds, rows, n, dt == CJ_BF16);
}
/* n contiguous elements at element offset off as f32: in place when f32, else converted into sc */
static inline const float *ld_run(const dot_params *p, cj_dtype dt, const char *base,
                                  int64_t off, int64_t n, float *sc) {
  if (dt == CJ_F32) return (const float *)base + off;
  p->cvi((const uint16_t *)base + off, 0, sc, 0, 1, n, dt == CJ_BF16);
  return sc;
}

/* whether offsets t[0..n) are t[0] + 0, 1, ..., n - 1 (a run of contiguous elements) */
static inline bool run_of(const int64_t *t, int64_t n) {
  for (int64_t i = 1; i < n; i++)
    if (t[i] != t[0] + i) return false;
  return true;
}

/* A block [mc x kc] into MR-row panels (k-major, zero padded); sc: MR x KC floats of scratch.
 * Each table is used as it is: rows contiguous along k need only the contraction's offsets to
 * be affine with stride 1 (any row offsets), a panel's 8 rows contiguous only their 8 offsets. */
static void pack_a32(const dot_params *p, const char *a, int64_t ab, int64_t m0, int64_t mc,
                     int64_t k0, int64_t kc, float *ap, float *sc) {
  bool krow = p->ak_aff && p->sak == 1;
  for (int64_t i0 = 0; i0 < mc; i0 += MR) {
    float *dst = ap + i0 * kc;
    int64_t mr = mc - i0 < MR ? mc - i0 : MR;
    const int64_t *am = p->am + m0 + i0;
    if (krow && mr == MR) { /* rows contiguous along k: transpose */
      const float *rows[MR];
      for (int64_t i = 0; i < MR; i++) rows[i] = ld_run(p, p->lt, a, ab + am[i] + k0, kc, sc + i * KC);
      p->tr8(rows, kc, dst, MR);
      continue;
    }
    if (krow) {
      for (int64_t i = 0; i < MR; i++) {
        if (i >= mr) {
          for (int64_t k = 0; k < kc; k++) dst[k * MR + i] = 0.0f;
          continue;
        }
        const float *src = ld_run(p, p->lt, a, ab + am[i] + k0, kc, sc);
        for (int64_t k = 0; k < kc; k++) dst[k * MR + i] = src[k];
      }
      continue;
    }
    if (mr == MR && run_of(am, MR)) { /* the panel's rows contiguous */
      if (p->ak_aff)
        ld_rows(p, p->lt, a, ab + k0 * p->sak + am[0], p->sak, dst, MR, kc, MR);
      else
        for (int64_t k = 0; k < kc; k++) ld_rows(p, p->lt, a, ab + p->ak[k0 + k] + am[0], 0, dst + k * MR, MR, 1, MR);
      continue;
    }
    for (int64_t k = 0; k < kc; k++) {
      int64_t ko = ab + p->ak[k0 + k];
      for (int64_t i = 0; i < MR; i++) dst[k * MR + i] = i < mr ? ld32(p->lt, a, ko + am[i]) : 0.0f;
    }
  }
}

/* B block [kc x nc] into NR-column panels (zero padded); sc: MR x KC floats of scratch; the
 * tables used as in pack_a32 */
static void pack_b32(const dot_params *p, const char *b, int64_t bb, int64_t n0, int64_t nc,
                     int64_t k0, int64_t kc, float *bp, float *sc) {
  bool kcol = p->bk_aff && p->sbk == 1;
  if (!kcol && p->bk_aff && p->rt == CJ_F32 && run_of(p->bn + n0, nc)) {
    /* f32 rows contiguous along n: each row of the block is read once, in order, and dealt
     * into the panels (a panel at a time read every row's 128 bytes at the row stride, which
     * the prefetchers do not follow: packing cost a 64-row GEMM a fifth of its time) */
    const float *src = (const float *)b + bb + k0 * p->sbk + p->bn[n0];
    for (int64_t k = 0; k < kc; k++, src += p->sbk) {
      int64_t j0 = 0;
      for (; j0 + NR32 <= nc; j0 += NR32) memcpy(bp + j0 * kc + k * NR32, src + j0, sizeof(float) * NR32);
      if (j0 < nc) {
        float *d = bp + j0 * kc + k * NR32;
        memcpy(d, src + j0, sizeof(float) * (size_t)(nc - j0));
        memset(d + (nc - j0), 0, sizeof(float) * (size_t)(NR32 - (nc - j0)));
      }
    }
    return;
  }
  for (int64_t j0 = 0; j0 < nc; j0 += NR32) {
    float *dst = bp + j0 * kc;
    int64_t nr = nc - j0 < NR32 ? nc - j0 : NR32;
    const int64_t *bn = p->bn + n0 + j0;
    if (!kcol && run_of(bn, nr)) { /* the panel's columns contiguous */
      if (p->bk_aff)
        ld_rows(p, p->rt, b, bb + k0 * p->sbk + bn[0], p->sbk, dst, NR32, kc, nr);
      else
        for (int64_t k = 0; k < kc; k++) ld_rows(p, p->rt, b, bb + p->bk[k0 + k] + bn[0], 0, dst + k * NR32, NR32, 1, nr);
      if (nr < NR32)
        for (int64_t k = 0; k < kc; k++) memset(dst + k * NR32 + nr, 0, sizeof(float) * (size_t)(NR32 - nr));
      continue;
    }
    if (kcol && nr % 8 == 0) { /* columns contiguous along k: transpose (padding zeroed) */
      for (int64_t j = 0; j < nr; j += 8) {
        const float *cols[8];
        for (int64_t i = 0; i < 8; i++) cols[i] = ld_run(p, p->rt, b, bb + bn[j + i] + k0, kc, sc + i * KC);
        p->tr8(cols, kc, dst + j, NR32);
      }
      if (nr < NR32)
        for (int64_t k = 0; k < kc; k++) memset(dst + k * NR32 + nr, 0, sizeof(float) * (size_t)(NR32 - nr));
      continue;
    }
    if (kcol) {
      for (int64_t j = 0; j < NR32; j++) {
        if (j >= nr) {
          for (int64_t k = 0; k < kc; k++) dst[k * NR32 + j] = 0.0f;
          continue;
        }
        const float *src = ld_run(p, p->rt, b, bb + bn[j] + k0, kc, sc);
        for (int64_t k = 0; k < kc; k++) dst[k * NR32 + j] = src[k];
      }
      continue;
    }
    for (int64_t k = 0; k < kc; k++) {
      int64_t ko = bb + p->bk[k0 + k];
      for (int64_t j = 0; j < NR32; j++) dst[k * NR32 + j] = j < nr ? ld32(p->rt, b, ko + bn[j]) : 0.0f;
    }
  }
}

/* A block [mc x kc] of f64 into MR-row panels (k-major), the tables used as in pack_a32: rows
 * contiguous along k by 8 x 8 transposes, a panel's rows contiguous by a copy per k, else an
 * element at a time. The rows of a partial panel past mr repeat its last row or are zero (the
 * micro-kernel never stores them). */
static void pack_a64(const dot_params *p, const double *a, int64_t ab, int64_t m0, int64_t mc,
                     int64_t k0, int64_t kc, double *ap) {
  bool krow = p->ak_aff && p->sak == 1;
  for (int64_t i0 = 0; i0 < mc; i0 += MR) {
    double *dst = ap + i0 * kc;
    int64_t mr = mc - i0 < MR ? mc - i0 : MR;
    const int64_t *am = p->am + m0 + i0;
    if (krow) {
      const double *rows[MR];
      for (int64_t i = 0; i < MR; i++) rows[i] = a + ab + am[i < mr ? i : mr - 1] + k0;
      p->tr8d(rows, kc, dst, MR);
      continue;
    }
    if (run_of(am, mr)) {
      for (int64_t k = 0; k < kc; k++) {
        const double *src = a + ab + p->ak[k0 + k] + am[0];
        if (mr == MR) {
          memcpy(dst + k * MR, src, sizeof(double) * MR);
          continue;
        }
        memcpy(dst + k * MR, src, sizeof(double) * (size_t)mr);
        memset(dst + k * MR + mr, 0, sizeof(double) * (size_t)(MR - mr));
      }
      continue;
    }
    for (int64_t k = 0; k < kc; k++) {
      int64_t ko = ab + p->ak[k0 + k];
      for (int64_t i = 0; i < MR; i++) dst[k * MR + i] = i < mr ? a[ko + am[i]] : 0.0;
    }
  }
}

/* B block [kc x nc] of f64 into NR64-column panels: rows contiguous along n are read once each,
 * in order, and dealt into the panels; columns contiguous along k (a transposed rhs) by 8 x 8
 * transposes (columns past nr repeat the last one); else a panel's run of columns per k, or an
 * element at a time */
static void pack_b64(const dot_params *p, const double *b, int64_t bb, int64_t n0, int64_t nc,
                     int64_t k0, int64_t kc, double *bp) {
  bool kcol = p->bk_aff && p->sbk == 1;
  const int64_t *bn = p->bn + n0;
  if (!kcol && run_of(bn, nc)) {
    for (int64_t k = 0; k < kc; k++) {
      const double *src = b + bb + p->bk[k0 + k] + bn[0];
      int64_t j0 = 0;
      for (; j0 + NR64 <= nc; j0 += NR64) memcpy(bp + j0 * kc + k * NR64, src + j0, sizeof(double) * NR64);
      if (j0 < nc) {
        double *d = bp + j0 * kc + k * NR64;
        memcpy(d, src + j0, sizeof(double) * (size_t)(nc - j0));
        memset(d + (nc - j0), 0, sizeof(double) * (size_t)(NR64 - (nc - j0)));
      }
    }
    return;
  }
  for (int64_t j0 = 0; j0 < nc; j0 += NR64) {
    double *dst = bp + j0 * kc;
    int64_t nr = nc - j0 < NR64 ? nc - j0 : NR64;
    const int64_t *bj = bn + j0;
    if (kcol) {
      for (int64_t j = 0; j < NR64; j += 8) {
        const double *cols[8];
        for (int64_t i = 0; i < 8; i++) cols[i] = b + bb + bj[j + i < nr ? j + i : nr - 1] + k0;
        p->tr8d(cols, kc, dst + j, NR64);
      }
      continue;
    }
    bool run = run_of(bj, nr);
    for (int64_t k = 0; k < kc; k++) {
      int64_t ko = bb + p->bk[k0 + k];
      if (run) {
        memcpy(dst + k * NR64, b + ko + bj[0], sizeof(double) * (size_t)nr);
        memset(dst + k * NR64 + nr, 0, sizeof(double) * (size_t)(NR64 - nr));
        continue;
      }
      for (int64_t j = 0; j < NR64; j++) dst[k * NR64 + j] = j < nr ? b[ko + bj[j]] : 0.0;
    }
  }
}

static void store_out32(const dot_params *p, char *c, int64_t off, const float *t, int64_t n) {
  switch (p->ot) {
    case CJ_F32: memcpy((float *)c + off, t, sizeof(float) * (size_t)n); break;
    case CJ_BF16:
    case CJ_F16: p->cvo(t, (uint16_t *)c + off, n, p->ot == CJ_BF16); break;
    case CJ_F64:
      for (int64_t j = 0; j < n; j++) ((double *)c)[off + j] = t[j];
      break;
    default:
      for (int64_t j = 0; j < n; j++) cj_elem_set_f64(p->ot, c, (size_t)(off + j), t[j]);
  }
}

/* ======================================================================== bf16 pairs */

/* the pair (element at offset o0, element at o1) of a 16-bit operand; o1 < 0: none */
static inline uint32_t bf_pair(const char *base, int64_t o0, int64_t o1) {
  const uint16_t *e = (const uint16_t *)base;
  return (uint32_t)e[o0] | (o1 >= 0 ? (uint32_t)e[o1] << 16 : 0u);
}

static const uint16_t bf_zero[KC]; /* the rows of a panel past the matrix */

/* w words per pair q < (kc + 1) / 2 at dst + q * w: k rows k0 + 2q and k0 + 2q + 1 (offsets
 * off + ko[k]) zipped, n <= w contiguous elements from each, or, with idx, the elements at idx[i]
 * of those rows gathered (i < n), the rest 0 */
static void pairs_of_krows(const char *base, int64_t off, const int64_t *ko, int64_t k0,
                           int64_t kc, const int64_t *idx, int64_t n, int64_t w, uint32_t *dst) {
  for (int64_t q = 0; q < (kc + 1) / 2; q++, dst += w) {
    int64_t o0 = off + ko[k0 + 2 * q], o1 = 2 * q + 1 < kc ? off + ko[k0 + 2 * q + 1] : -1;
    if (!idx) {
      const uint16_t *e = (const uint16_t *)base;
      cj_bd_zip(e + o0, o1 < 0 ? NULL : e + o1, n, w, dst);
      continue;
    }
    for (int64_t i = 0; i < w; i++) dst[i] = i < n ? bf_pair(base, o0 + idx[i], o1 < 0 ? -1 : o1 + idx[i]) : 0u;
  }
}

/* count rows of A (idx = the row offsets, w = MR) or columns of B (the column offsets, w = NR32)
 * at element offsets off + idx[i], contraction indices [k0, k0 + kc), into panels of w of pairs
 * (pair-major: out[i0 * kp + q * w + i], zero padded); kcont: their elements contiguous along k
 * (8 x 8 pair transposes), else at the k offsets ko (two k rows zipped where the panel's offsets
 * are a run, else gathered) */
static void pack_bf(const char *base, int64_t off, const int64_t *idx, const int64_t *ko,
                    bool kcont, int64_t w, int64_t count, int64_t k0, int64_t kc, uint32_t *out) {
  int64_t kp = (kc + 1) / 2;
  for (int64_t i0 = 0; i0 < count; i0 += w) {
    uint32_t *dst = out + i0 * kp;
    int64_t n = count - i0 < w ? count - i0 : w;
    const int64_t *ix = idx + i0;
    if (kcont) {
      for (int64_t j = 0; j < w; j += 8) {
        const uint16_t *r[8];
        for (int64_t i = 0; i < 8; i++) r[i] = j + i < n ? (const uint16_t *)base + off + ix[j + i] + k0 : bf_zero;
        cj_bd_tr8(r, kc, dst + j, w);
      }
      continue;
    }
    bool run = run_of(ix, n);
    pairs_of_krows(base, off + (run ? ix[0] : 0), ko, k0, kc, run ? NULL : ix, n, w, dst);
  }
}

/* run32 for bf16 x bf16 with the pair kernel: the same blocking, half the packed words */
static void run_bf(const dot_params *p, const gemm_ctx *G, char *tmp, int64_t ab, int64_t bb,
                   int64_t mlo, int64_t mhi, int64_t n0, int64_t nc, int64_t kb, int64_t ke,
                   float *dst, int64_t ldd) {
  uint32_t *ap = (uint32_t *)tmp, *bp = ap + MC * KC;
  for (int64_t k0 = kb; k0 < ke; k0 += KC) {
    int64_t kc = ke - k0 < KC ? ke - k0 : KC, kp = (kc + 1) / 2;
    pack_bf(G->b, bb, p->bn + n0, p->bk, p->bk_aff && p->sbk == 1, NR32, nc, k0, kc, bp);
    for (int64_t m0 = mlo; m0 < mhi; m0 += MC) {
      int64_t mc = mhi - m0 < MC ? mhi - m0 : MC;
      pack_bf(G->a, ab, p->am + m0, p->ak, p->ak_aff && p->sak == 1, MR, mc, k0, kc, ap);
      for (int64_t j0 = 0; j0 < nc; j0 += NR32)
        for (int64_t i0 = 0; i0 < mc; i0 += MR)
          p->ubf(kp, ap + i0 * kp, bp + j0 * kp, dst + (m0 - mlo + i0) * ldd + j0, ldd,
                 mc - i0 < MR ? mc - i0 : MR, nc - j0 < NR32 ? nc - j0 : NR32, k0 > kb);
    }
  }
}

/* dst rows [mlo, mhi) (dst[(i - mlo) * ldd + j], columns [0, nc) of the task's n0) = the
 * products over contraction indices [kb, ke). GotoBLAS order: for each KC block the B panel is
 * packed once and reused by every MC block of A. (Inlined: a call here costs small GEMMs 5-15%.) */
static inline __attribute__((always_inline)) void run32(gemm_ctx *G, char *tmp, int64_t ab,
                                                        int64_t bb, int64_t mlo, int64_t mhi,
                                                        int64_t n0, int64_t nc, int64_t kb,
                                                        int64_t ke, float *dst, int64_t ldd) {
  const dot_params *p = G->p;
  if (p->ubf) {
    run_bf(p, G, tmp, ab, bb, mlo, mhi, n0, nc, kb, ke, dst, ldd);
    return;
  }
  float *ap = (float *)tmp, *bp = ap + MC * KC, *sc = bp + KC * NC;
  bool arows = p->u16r && nc <= 16 && p->lt == CJ_F32 && p->ak_aff && p->sak == 1;
  for (int64_t k0 = kb; k0 < ke; k0 += KC) {
    int64_t kc = ke - k0 < KC ? ke - k0 : KC;
    /* few rows: whole B panels are read in place (packing them cost as much as using them),
     * only the last, partial one is packed */
    int64_t jt = 0;
    if (p->rt == CJ_F32 && p->b_affine && p->sbn == 1 && mhi - mlo <= BDIRECT_ROWS) jt = nc / NR32 * NR32;
    const float *bdir = (const float *)G->b + bb + k0 * p->sbk + n0;
    if (jt < nc) pack_b32(p, G->b, bb, n0 + jt, nc - jt, k0, kc, bp, sc);
    for (int64_t m0 = mlo; m0 < mhi; m0 += MC) {
      int64_t mc = mhi - m0 < MC ? mhi - m0 : MC;
      if (arows) { /* one narrow panel: the lhs rows are read in place, not packed */
        for (int64_t i0 = 0; i0 < mc; i0 += MR) {
          int64_t mr = mc - i0 < MR ? mc - i0 : MR;
          const float *rows[MR];
          for (int64_t i = 0; i < MR; i++) rows[i] = (const float *)G->a + ab + p->am[m0 + i0 + (i < mr ? i : 0)] + k0;
          p->u16r(kc, rows, bp, NR32, dst + (m0 - mlo + i0) * ldd, ldd, mr, nc, k0 > kb);
        }
        continue;
      }
      pack_a32(p, G->a, ab, m0, mc, k0, kc, ap, sc);
      for (int64_t j0 = 0; j0 < nc; j0 += NR32) {
        const float *bj = j0 < jt ? bdir + j0 : bp + (j0 - jt) * kc;
        int64_t ldb = j0 < jt ? p->sbk : NR32;
        for (int64_t i0 = 0; i0 < mc; i0 += MR)
          G->u32(kc, ap + i0 * kc, bj, ldb, dst + (m0 - mlo + i0) * ldd + j0, ldd,
                 mc - i0 < MR ? mc - i0 : MR, nc - j0 < NR32 ? nc - j0 : NR32, k0 > kb);
      }
    }
  }
}

static inline __attribute__((always_inline)) void run64(gemm_ctx *G, char *tmp, int64_t ab,
                                                        int64_t bb, int64_t mlo, int64_t mhi,
                                                        int64_t n0, int64_t nc, int64_t kb,
                                                        int64_t ke, double *dst, int64_t ldd) {
  const dot_params *p = G->p;
  double *ap = (double *)tmp, *bp = ap + MC * KC;
  for (int64_t k0 = kb; k0 < ke; k0 += KC) {
    int64_t kc = ke - k0 < KC ? ke - k0 : KC;
    pack_b64(p, (const double *)G->b, bb, n0, nc, k0, kc, bp);
    for (int64_t m0 = mlo; m0 < mhi; m0 += MC) {
      int64_t mc = mhi - m0 < MC ? mhi - m0 : MC;
      pack_a64(p, (const double *)G->a, ab, m0, mc, k0, kc, ap);
      for (int64_t j0 = 0; j0 < nc; j0 += NR64)
        for (int64_t i0 = 0; i0 < mc; i0 += MR)
          G->u64(kc, ap + i0 * kc, bp + j0 * kc, NR64, dst + (m0 - mlo + i0) * ldd + j0, ldd,
                 mc - i0 < MR ? mc - i0 : MR, nc - j0 < NR64 ? nc - j0 : NR64, k0 > kb);
    }
  }
}

/* One task: batch bi, columns [n0, n0 + nc), rows [mlo, mhi). Each micro-kernel call sums KC
 * products per element in registers; the KC blocks of a chunk of p->kchunk contraction indices
 * are added one after the other, and when K is long (over KTREE) the chunks' sums (about
 * sqrt(K / KC) of them, each of about as many blocks) are computed into a scratch region and
 * added to the result one after the other. A running sum of all K / KC blocks would let the
 * error grow with K / KC (K = 262144: 1.6e-6 relative, XLA:CPU 6e-7); two levels of about
 * sqrt(K / KC) terms keep it near 1e-7. */
static void gemm_task(void *vg, int64_t t, char *tmp) {
  gemm_ctx *G = vg;
  const dot_params *p = G->p;
  int64_t per = G->ntiles * G->mgroups;
  int64_t bi = t / per, r = t % per, ni = r / G->mgroups, mg = r % G->mgroups;
  int64_t n0 = ni * G->nw, nc = p->N - n0 < G->nw ? p->N - n0 : G->nw;
  int64_t mlo = mg * G->mper, mhi = mlo + G->mper < p->M ? mlo + G->mper : p->M;
  if (mlo >= mhi || nc <= 0) return;
  int64_t ab = p->ab[bi], bb = p->bb[bi];
  int64_t cbase = bi * p->M * p->N, K = p->K, step = p->kchunk;
  if (p->kind == DK_F64) {
    double *c = (double *)G->c + cbase + mlo * p->N + n0;
    double *T = (double *)tmp + MC * KC + KC * NC; /* chunk sums (long K) */
    if (K == 0)
      for (int64_t i = mlo; i < mhi; i++) memset(c + (i - mlo) * p->N, 0, sizeof(double) * (size_t)nc);
    run64(G, tmp, ab, bb, mlo, mhi, n0, nc, 0, K < step ? K : step, c, p->N);
    for (int64_t kb = step; kb < K; kb += step) {
      run64(G, tmp, ab, bb, mlo, mhi, n0, nc, kb, K - kb < step ? K : kb + step, T, nc);
      for (int64_t i = 0; i < mhi - mlo; i++)
        for (int64_t j = 0; j < nc; j++) c[i * p->N + j] += T[i * nc + j];
    }
    return;
  }
  float *bp = (float *)tmp + MC * KC, *tile = bp + KC * NC + MR * KC, *T = tile + MC * NC;
  if (p->ot == CJ_F32) {
    float *c = (float *)G->c + cbase + mlo * p->N + n0;
    if (K == 0)
      for (int64_t i = mlo; i < mhi; i++) memset(c + (i - mlo) * p->N, 0, sizeof(float) * (size_t)nc);
    run32(G, tmp, ab, bb, mlo, mhi, n0, nc, 0, K < step ? K : step, c, p->N);
    for (int64_t kb = step; kb < K; kb += step) {
      run32(G, tmp, ab, bb, mlo, mhi, n0, nc, kb, K - kb < step ? K : kb + step, T, nc);
      for (int64_t i = 0; i < mhi - mlo; i++)
        for (int64_t j = 0; j < nc; j++) c[i * p->N + j] += T[i * nc + j];
    }
    return;
  }
  /* bf16/f16 results: accumulate an MC x NC tile in f32, round once */
  for (int64_t m0 = mlo; m0 < mhi; m0 += MC) {
    int64_t mc = mhi - m0 < MC ? mhi - m0 : MC;
    if (K == 0) memset(tile, 0, sizeof(float) * (size_t)(mc * nc));
    run32(G, tmp, ab, bb, m0, m0 + mc, n0, nc, 0, K < step ? K : step, tile, nc);
    for (int64_t kb = step; kb < K; kb += step) {
      run32(G, tmp, ab, bb, m0, m0 + mc, n0, nc, kb, K - kb < step ? K : kb + step, T, nc);
      for (int64_t i = 0; i < mc * nc; i++) tile[i] += T[i];
    }
    for (int64_t i = 0; i < mc; i++) store_out32(p, G->c, cbase + (m0 + i) * p->N + n0, tile + i * nc, nc);
  }
}

static void gemm_body(void *vctx, int64_t b, int64_t e) {
  cj_tls_tasks(((gemm_ctx *)vctx)->ctx, b, e, gemm_task, vctx);
}

/* ======================================================================== GEMV */

/* Matrix-vector products (N == 1: A x; M == 1: x B, batch-1 inference) with an f32, bf16 or
 * f16 matrix whose elements are contiguous along the contraction (dot form: each output is one
 * long dot product) or along the outputs (axpy form: outputs += x[k] * matrix row k), by the
 * kernels of k_dot_gv.c, which stream the matrix once. The GEMM would pad the vector to a whole
 * register panel (1/32 or 1/8 of its work useful). Sums are blocked: the dot form keeps lanes
 * of partial sums per output over blocks of GV_BLOCK terms, adds the lanes pairwise and
 * combines the blocks pairwise; the axpy form sums GV_KB terms per output, then combines those
 * block sums pairwise, per strip of GV_STRIP outputs. */
enum { GV_NONE, GV_A_DOT, GV_A_AXPY, GV_B_DOT, GV_B_AXPY };
enum { GV_BLOCK = 1024, GV_STRIP = CJ_GV_STRIP, GV_KB = 256, GV_LEVELS = 48 };

typedef struct gemv_ctx {
  const dot_params *p;
  const char *a, *b;
  char *c;
  cj_exec_ctx *ctx;
  int64_t P;      /* outputs per batch */
  int64_t units;  /* per batch: outputs (dot form) or strips (axpy form) */
} gemv_ctx;

/* the vector of batch bi as contiguous f32: in place when it is f32 and contiguous, else
 * converted into x (an element at a time only when it is strided: the per-element dtype switch
 * cost a 256 x 256 GEMV a third of its time) */
static const float *gv_vector(const gemv_ctx *V, int64_t bi, float *x) {
  const dot_params *p = V->p;
  bool bvec = p->gv == GV_A_DOT || p->gv == GV_A_AXPY;
  cj_dtype dt = bvec ? p->rt : p->lt;
  const char *base = bvec ? V->b : V->a;
  int64_t off = bvec ? p->bb[bi] + p->bn[0] : p->ab[bi] + p->am[0];
  const int64_t *ko = bvec ? p->bk : p->ak;
  if (bvec ? p->bk_aff && p->sbk == 1 : p->ak_aff && p->sak == 1)
    return ld_run(p, dt, base, off, p->K, x);
  for (int64_t k = 0; k < p->K; k++) x[k] = ld32(dt, base, off + ko[k]);
  return x;
}

/* the axpy form for strips [r0, r1) of batch bi: K-blocks outermost, so that a block's GV_KB
 * rows of the matrix are walked for all the strips while they are in the TLB and the caches (a
 * strip at a time over all of K was a third slower on 1x4096x4096); each output's block sums
 * combined pairwise through level rows lv[level][output] (the merges depend only on the block
 * count) */
static void gemv_axpy(const gemv_ctx *V, int64_t bi, int64_t r0, int64_t r1, const float *x,
                      float *lv) {
  const dot_params *p = V->p;
  bool amat = p->gv == GV_A_AXPY;
  size_t es = (size_t)cj_dtype_bytes(amat ? p->lt : p->rt);
  int64_t ks = amat ? p->sak : p->sbk, K = p->K;
  int64_t mbase = amat ? p->ab[bi] : p->bb[bi];
  const char *mat = amat ? V->a : V->b;
  int64_t lo = r0 * GV_STRIP, hi = r1 * GV_STRIP < V->P ? r1 * GV_STRIP : V->P, w = hi - lo;
  float acc[GV_STRIP];
  int n = 0;
  int64_t cnt = 0;
  for (int64_t k0 = 0; k0 < K; k0 += GV_KB) {
    int64_t kn = K - k0 < GV_KB ? K - k0 : GV_KB;
    int merges = 0;
    for (int64_t c = ++cnt; !(c & 1); c >>= 1) merges++;
    for (int64_t i0 = lo; i0 < hi; i0 += GV_STRIP) {
      int64_t ns = hi - i0 < GV_STRIP ? hi - i0 : GV_STRIP;
      p->gva(acc, mat + (size_t)(mbase + k0 * ks + i0) * es, ks, x + k0, kn, ns);
      for (int t = 0; t < merges; t++) {
        const float *l = lv + (int64_t)(n - 1 - t) * w + (i0 - lo);
        for (int64_t i = 0; i < ns; i++) acc[i] = l[i] + acc[i];
      }
      memcpy(lv + (int64_t)(n - merges) * w + (i0 - lo), acc, sizeof(float) * (size_t)ns);
    }
    n = n - merges + 1;
  }
  for (int64_t i0 = lo; i0 < hi; i0 += GV_STRIP) {
    int64_t ns = hi - i0 < GV_STRIP ? hi - i0 : GV_STRIP;
    memset(acc, 0, sizeof(float) * (size_t)ns);
    for (int l = n - 1; l >= 0; l--) {
      const float *lr = lv + (int64_t)l * w + (i0 - lo);
      for (int64_t i = 0; i < ns; i++) acc[i] = lr[i] + acc[i];
    }
    store_out32(p, V->c, bi * V->P + i0, acc, ns);
  }
}

static void gemv_body(void *vctx, int64_t u0, int64_t u1) {
  const gemv_ctx *V = vctx;
  const dot_params *p = V->p;
  cj_tls_area *area = cj_tls_claim(V->ctx);
  if (!area) return;
  float *xs = (float *)area->mem, *lv = xs + p->K;
  bool amat = p->gv == GV_A_DOT || p->gv == GV_A_AXPY;
  bool dotf = p->gv == GV_A_DOT || p->gv == GV_B_DOT;
  size_t es = (size_t)cj_dtype_bytes(amat ? p->lt : p->rt);
  int64_t os = amat ? p->sam : p->sbn; /* the matrix's stride along the outputs */
  int64_t K = p->K;
  for (int64_t u = u0; u < u1;) {
    int64_t bi = u / V->units, r = u % V->units;
    int64_t r1 = u1 - bi * V->units < V->units ? u1 - bi * V->units : V->units;
    const float *x = gv_vector(V, bi, xs);
    if (!dotf) { /* strips [r, r1) of this batch */
      gemv_axpy(V, bi, r, r1, x, lv);
      u += r1 - r;
      continue;
    }
    const char *mat = (amat ? V->a : V->b) + (size_t)(amat ? p->ab[bi] : p->bb[bi]) * es;
    for (; r < r1;) { /* outputs [r, r + nr): dot products along contiguous k */
      int64_t nr = r1 - r < CJ_GV_ROWS ? r1 - r : CJ_GV_ROWS;
      float sum[CJ_GV_ROWS];
      if (K <= GV_BLOCK) {
        p->gvd(mat + (size_t)(r * os) * es, os, x, K, nr, sum);
      } else {
        float lvd[CJ_GV_ROWS][GV_LEVELS], part[CJ_GV_ROWS];
        int n = 0;
        int64_t cnt = 0;
        for (int64_t k0 = 0; k0 < K; k0 += GV_BLOCK) {
          int64_t kn = K - k0 < GV_BLOCK ? K - k0 : GV_BLOCK, c = ++cnt;
          p->gvd(mat + (size_t)(r * os + k0) * es, os, x + k0, kn, nr, part);
          for (; !(c & 1); c >>= 1, n--)
            for (int64_t i = 0; i < nr; i++) part[i] = lvd[i][n - 1] + part[i];
          for (int64_t i = 0; i < nr; i++) lvd[i][n] = part[i];
          n++;
        }
        for (int64_t i = 0; i < nr; i++) {
          sum[i] = 0;
          for (int l = n - 1; l >= 0; l--) sum[i] = lvd[i][l] + sum[i];
        }
      }
      store_out32(p, V->c, bi * V->P + r, sum, nr);
      r += nr;
      u += nr;
    }
  }
  cj_tls_release(V->ctx, area);
}

static void gemv(const dot_params *p, cj_exec_ctx *ctx, const char *a, const char *b, char *c) {
  bool amat = p->gv == GV_A_DOT || p->gv == GV_A_AXPY; /* then N == 1: outputs along M */
  gemv_ctx V = {p, a, b, c, ctx, amat ? p->M : p->N, 0};
  bool dotf = p->gv == GV_A_DOT || p->gv == GV_B_DOT;
  V.units = dotf ? V.P : (V.P + GV_STRIP - 1) / GV_STRIP;
  int64_t total = p->B * V.units;
  double work = (double)p->B * (double)V.P * (double)p->K;
  int nthreads = ctx->pool ? cj_pool_size(ctx->pool) : 1;
  if (nthreads > 1 && work > 2e6 && total > 1) {
    int64_t grain = total / (4 * nthreads);
    cj_pool_parallel_for(ctx->pool, total, grain < 1 ? 1 : grain, gemv_body, &V);
  } else {
    gemv_body(&V, 0, total);
  }
}

/* ======================================================================== generic */

/* Float and complex sums here are blocked: GEN_BLOCK products summed one after the other, the
 * block sums then combined pairwise (a binary counter of partial sums: level i holds the sum
 * of 2^i blocks), so the error grows with log2(K / GEN_BLOCK), not with K. */
enum { GEN_BLOCK = 128, GEN_LEVELS = 64 };

typedef struct ptree {
  double v[GEN_LEVELS][2]; /* (re, im) */
  int n;
  int64_t cnt;
  bool f32; /* partial sums rounded to f32 (complex<f32> and f32-or-smaller results) */
} ptree;

static inline void pt_push(ptree *t, double re, double im) {
  for (int64_t c = ++t->cnt; !(c & 1); c >>= 1) {
    t->n--;
    if (t->f32) {
      re = (double)((float)t->v[t->n][0] + (float)re);
      im = (double)((float)t->v[t->n][1] + (float)im);
    } else {
      re = t->v[t->n][0] + re;
      im = t->v[t->n][1] + im;
    }
  }
  t->v[t->n][0] = re;
  t->v[t->n][1] = im;
  t->n++;
}

static inline void pt_sum(const ptree *t, double *re, double *im) {
  double r = 0, i = 0;
  float fr = 0, fi = 0;
  for (int k = t->n - 1; k >= 0; k--) {
    if (t->f32) {
      fr = (float)t->v[k][0] + fr;
      fi = (float)t->v[k][1] + fi;
    } else {
      r = t->v[k][0] + r;
      i = t->v[k][1] + i;
    }
  }
  *re = t->f32 ? fr : r;
  *im = t->f32 ? fi : i;
}

static inline void ld_cplx(cj_dtype dt, const char *base, int64_t off, double *re, double *im) {
  if (dt == CJ_C64) {
    *re = ((const float *)base)[2 * off];
    *im = ((const float *)base)[2 * off + 1];
  } else if (dt == CJ_C128) {
    *re = ((const double *)base)[2 * off];
    *im = ((const double *)base)[2 * off + 1];
  } else {
    *re = cj_elem_get_f64(dt, base, (size_t)off);
    *im = 0;
  }
}

static void dot_generic(const dot_params *p, const char *a, const char *b, char *c) {
  cj_dtype_kind ok = cj_dtype_kindof(p->ot);
  int obytes = cj_dtype_bytes(p->ot);
  /* complex<f32> and float results of 4 bytes or fewer accumulate in f32, as XLA does */
  bool f32acc = ok == CJ_DK_COMPLEX ? p->ot == CJ_C64 : obytes <= 4;
  for (int64_t bi = 0; bi < p->B; bi++)
    for (int64_t m = 0; m < p->M; m++)
      for (int64_t n = 0; n < p->N; n++) {
        int64_t oi = (bi * p->M + m) * p->N + n;
        int64_t ao0 = p->ab[bi] + p->am[m], bo0 = p->bb[bi] + p->bn[n];
        if (ok == CJ_DK_SINT || ok == CJ_DK_UINT || ok == CJ_DK_BOOL) {
          uint64_t acc = 0;
          for (int64_t k = 0; k < p->K; k++) {
            uint64_t x = (uint64_t)cj_elem_get_i64(p->lt, a, (size_t)(ao0 + p->ak[k]));
            uint64_t y = (uint64_t)cj_elem_get_i64(p->rt, b, (size_t)(bo0 + p->bk[k]));
            acc += x * y;
          }
          if (ok == CJ_DK_BOOL) acc = acc != 0;
          cj_elem_set_i64(p->ot, c, (size_t)oi, (int64_t)acc);
          continue;
        }
        bool cplx = ok == CJ_DK_COMPLEX;
        ptree t;
        t.n = 0;
        t.cnt = 0;
        t.f32 = f32acc;
        for (int64_t k0 = 0; k0 < p->K; k0 += GEN_BLOCK) {
          int64_t k1 = p->K - k0 < GEN_BLOCK ? p->K : k0 + GEN_BLOCK;
          double re = 0, im = 0;
          float fre = 0, fim = 0;
          for (int64_t k = k0; k < k1; k++) {
            int64_t ao = ao0 + p->ak[k], bo = bo0 + p->bk[k];
            double xr, xi = 0, yr, yi = 0;
            if (cplx) {
              ld_cplx(p->lt, a, ao, &xr, &xi);
              ld_cplx(p->rt, b, bo, &yr, &yi);
            } else {
              xr = cj_elem_get_f64(p->lt, a, (size_t)ao);
              yr = cj_elem_get_f64(p->rt, b, (size_t)bo);
            }
            if (f32acc) {
              float a = (float)xr, b = (float)xi, cc = (float)yr, d = (float)yi;
              fre += a * cc - b * d;
              fim += a * d + b * cc;
            } else {
              re += xr * yr - xi * yi;
              im += xr * yi + xi * yr;
            }
          }
          if (f32acc)
            pt_push(&t, fre, fim);
          else
            pt_push(&t, re, im);
        }
        double re, im;
        pt_sum(&t, &re, &im);
        if (p->ot == CJ_C64) {
          ((float *)c)[2 * oi] = (float)re;
          ((float *)c)[2 * oi + 1] = (float)im;
        } else if (p->ot == CJ_C128) {
          ((double *)c)[2 * oi] = re;
          ((double *)c)[2 * oi + 1] = im;
        } else {
          cj_elem_set_f64(p->ot, c, (size_t)oi, re);
        }
      }
}

/* ======================================================================== kernel */

static CJ_MUST_USE cj_status k_dot(cj_exec_ctx *ctx, const cj_step *st) {
  const dot_params *p = st->params;
  const char *a = CJ_PTR(ctx, st->in[0]), *b = CJ_PTR(ctx, st->in[1]);
  char *c = CJ_PTR(ctx, st->out[0]);
  if (p->B * p->M * p->N == 0) return NULL;
  if (p->kind == DK_GENERIC) {
    dot_generic(p, a, b, c);
    return NULL;
  }
  if (p->gv != GV_NONE) {
    gemv(p, ctx, a, b, c);
    return NULL;
  }
  gemm_ctx G;
  G.p = p;
  G.a = a;
  G.b = b;
  G.c = c;
  G.ctx = ctx;
  G.u32 = p->u32;
  G.u64 = p->u64;
  G.nw = NC;
  G.ntiles = (p->N + NC - 1) / NC;
  int64_t mtiles = (p->M + MC - 1) / MC;
  int nthreads = ctx->pool ? cj_pool_size(ctx->pool) : 1;
  double work = (double)p->M * (double)p->N * (double)p->K * (double)p->B;
  bool par = nthreads > 1 && work > 2e6;
  /* enough tasks for every thread (x2 for balance), each a range of MC blocks of rows */
  int64_t want = par ? 2 * nthreads : 1;
  int64_t have = p->B * G.ntiles;
  G.mgroups = have >= want ? 1 : (want + have - 1) / have;
  if (p->kchunk < p->K && G.mgroups < (mtiles * MC + TREE_ROWS - 1) / TREE_ROWS)
    G.mgroups = (mtiles * MC + TREE_ROWS - 1) / TREE_ROWS;
  if (G.mgroups > mtiles) G.mgroups = mtiles;
  if (G.mgroups < 1) G.mgroups = 1;
  G.mper = ((mtiles + G.mgroups - 1) / G.mgroups) * MC;
  int64_t ntasks = p->B * G.ntiles * G.mgroups;
  if (par && ntasks < want && p->N > NR32) {
    /* too few row blocks and column tiles for the threads (a batch of 64 rows times a wide
     * matrix ran on one thread): narrower column tiles, whole panels each */
    int64_t split = (want + ntasks - 1) / ntasks, w = p->N < NC ? p->N : NC;
    G.nw = ((w + split - 1) / split + NR32 - 1) / NR32 * NR32;
    G.ntiles = (p->N + G.nw - 1) / G.nw;
    ntasks = p->B * G.ntiles * G.mgroups;
  }
  if (par && ntasks > 1)
    cj_pool_parallel_for(ctx->pool, ntasks, 1, gemm_body, &G);
  else
    gemm_body(&G, 0, ntasks);
  return NULL;
}

/* ======================================================================== lowering */

static int64_t *offsets(cj_lw *L, int32_t nd, const int64_t *dims, const int64_t *str, int64_t *count) {
  int64_t n = 1;
  for (int32_t i = 0; i < nd; i++) n *= dims[i];
  *count = n;
  int64_t *t = cj_lw_alloc(L, sizeof(int64_t) * (size_t)(n ? n : 1));
  if (!t) return NULL;
  for (int64_t i = 0; i < n; i++) t[i] = cj_strided_offset(i, nd, dims, str);
  return t;
}

static bool affine(const int64_t *t, int64_t n, int64_t *stride) {
  if (n <= 1) {
    *stride = 1;
    return true;
  }
  int64_t s = t[1] - t[0];
  for (int64_t i = 1; i < n; i++)
    if (t[i] - t[i - 1] != s) return false;
  *stride = s;
  return t[0] == 0;
}

static CJ_MUST_USE cj_status lower_dot_dims(cj_lw *L, cj_op *op, int64_t nlb, const int64_t *lb, int64_t nrb,
                                const int64_t *rb, int64_t nlc, const int64_t *lc, int64_t nrc,
                                const int64_t *rc) {
  cj_lw_tensor x, y, r;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &x));
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 1, &y));
  if (nlb != nrb || nlc != nrc) return cj_op_error(op, CJ_INVALID_ARGUMENT, "dimension lists differ in length");
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &r));
  int64_t xs[CJ_MAX_RANK], ys[CJ_MAX_RANK];
  cj_row_strides(x.rank, x.dims, xs);
  cj_row_strides(y.rank, y.dims, ys);
  bool xused[CJ_MAX_RANK] = {false}, yused[CJ_MAX_RANK] = {false};
  int64_t bd[CJ_MAX_RANK], bxs[CJ_MAX_RANK], bys[CJ_MAX_RANK];
  int64_t kd[CJ_MAX_RANK], kxs[CJ_MAX_RANK], kys[CJ_MAX_RANK];
  for (int64_t i = 0; i < nlb; i++) {
    if (lb[i] < 0 || lb[i] >= x.rank || rb[i] < 0 || rb[i] >= y.rank || x.dims[lb[i]] != y.dims[rb[i]])
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad batching dimension %lld", (long long)i);
    bd[i] = x.dims[lb[i]];
    bxs[i] = xs[lb[i]];
    bys[i] = ys[rb[i]];
    xused[lb[i]] = yused[rb[i]] = true;
  }
  for (int64_t i = 0; i < nlc; i++) {
    if (lc[i] < 0 || lc[i] >= x.rank || rc[i] < 0 || rc[i] >= y.rank || x.dims[lc[i]] != y.dims[rc[i]])
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad contracting dimension %lld", (long long)i);
    kd[i] = x.dims[lc[i]];
    kxs[i] = xs[lc[i]];
    kys[i] = ys[rc[i]];
    xused[lc[i]] = yused[rc[i]] = true;
  }
  int64_t md[CJ_MAX_RANK], mxs[CJ_MAX_RANK], nd[CJ_MAX_RANK], nys[CJ_MAX_RANK];
  int32_t nm = 0, nn = 0;
  for (int32_t d = 0; d < x.rank; d++)
    if (!xused[d]) {
      md[nm] = x.dims[d];
      mxs[nm++] = xs[d];
    }
  for (int32_t d = 0; d < y.rank; d++)
    if (!yused[d]) {
      nd[nn] = y.dims[d];
      nys[nn++] = ys[d];
    }
  dot_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  memset(p, 0, sizeof *p);
  int64_t B2;
  p->ab = offsets(L, (int32_t)nlb, bd, bxs, &p->B);
  p->bb = offsets(L, (int32_t)nlb, bd, bys, &B2);
  p->am = offsets(L, nm, md, mxs, &p->M);
  p->ak = offsets(L, (int32_t)nlc, kd, kxs, &p->K);
  p->bk = offsets(L, (int32_t)nlc, kd, kys, &B2);
  p->bn = offsets(L, nn, nd, nys, &p->N);
  if (!p->ab || !p->bb || !p->am || !p->ak || !p->bk || !p->bn) return cj_oom();
  if (p->B * p->M * p->N != r.nelems)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "result has %lld elements, expected %lld",
                       (long long)r.nelems, (long long)(p->B * p->M * p->N));
  p->u32 = pick32();
  p->u64 = pick64();
  p->u16r = pick16r();
  p->cvi = cj_la_cvi_pick();
  p->cvo = cj_la_cvo_pick();
  p->tr8 = pick_tr8();
  p->tr8d = pick_tr8d();
  p->ubf = x.dtype == CJ_BF16 && y.dtype == CJ_BF16 ? cj_bd_pick() : NULL;
  p->lt = x.dtype;
  p->rt = y.dtype;
  p->ot = r.dtype;
  int64_t s1 = 0, s2 = 0;
  bool am_aff = affine(p->am, p->M, &p->sam), bn_aff = affine(p->bn, p->N, &s2);
  p->ak_aff = affine(p->ak, p->K, &p->sak);
  p->bk_aff = affine(p->bk, p->K, &s1);
  p->a_affine = am_aff && p->ak_aff;
  p->b_affine = p->bk_aff && bn_aff;
  p->sbk = s1;
  p->sbn = s2;
  bool small_f = (x.dtype == CJ_F32 || x.dtype == CJ_BF16 || x.dtype == CJ_F16) &&
                 (y.dtype == CJ_F32 || y.dtype == CJ_BF16 || y.dtype == CJ_F16) &&
                 (r.dtype == CJ_F32 || r.dtype == CJ_BF16 || r.dtype == CJ_F16);
  /* chunks of about sqrt(K / KC) blocks when K is long; the chunk sums' scratch region */
  p->kchunk = p->K;
  int64_t treg = 0;
  if (p->K > KTREE) {
    int64_t nb = (p->K + KC - 1) / KC, g = 1;
    while (g * g < nb) g++;
    p->kchunk = g * KC;
    treg = (p->M < TREE_ROWS ? (p->M > MC ? p->M : MC) : TREE_ROWS) * (p->N < NC ? p->N : NC);
  }
  if (x.dtype == CJ_F64 && y.dtype == CJ_F64 && r.dtype == CJ_F64) {
    p->kind = DK_F64;
    cj_lw_set_tls_bytes(L, (int64_t)sizeof(double) * (MC * KC + KC * NC + treg));
  } else if (small_f) {
    p->kind = DK_F32;
    /* a matrix-vector product: which operand is the matrix, and its layout */
    cj_gv_axpy_fn ga = NULL, gb = NULL;
    cj_gv_dot_fn da = NULL, db = NULL;
    bool amat = cj_gv_pick(p->lt, &ga, &da), bmat = cj_gv_pick(p->rt, &gb, &db);
    p->gv = GV_NONE;
    if (p->K > 0 && p->N == 1 && amat && p->a_affine && p->sak == 1)
      p->gv = GV_A_DOT;
    else if (p->K > 0 && p->N == 1 && amat && p->a_affine && p->sam == 1 && p->M > 1)
      p->gv = GV_A_AXPY;
    else if (p->K > 0 && p->M == 1 && bmat && p->b_affine && p->sbk == 1)
      p->gv = GV_B_DOT;
    else if (p->K > 0 && p->M == 1 && bmat && p->b_affine && p->sbn == 1)
      p->gv = GV_B_AXPY;
    p->gva = p->gv == GV_A_DOT || p->gv == GV_A_AXPY ? ga : gb;
    p->gvd = p->gv == GV_A_DOT || p->gv == GV_A_AXPY ? da : db;
    if (cj_bd_pick()) p->cvo = cj_bd_cvo;
    if (p->gv == GV_A_DOT || p->gv == GV_B_DOT) {
      cj_lw_set_tls_bytes(L, (int64_t)sizeof(float) * p->K);
    } else if (p->gv != GV_NONE) { /* and the axpy form's level rows (see gemv_axpy) */
      int64_t levels = 1, P = p->gv == GV_A_AXPY ? p->M : p->N;
      for (int64_t nb = (p->K + GV_KB - 1) / GV_KB; nb > 1; nb >>= 1) levels++;
      cj_lw_set_tls_bytes(L, (int64_t)sizeof(float) * (p->K + levels * P));
    }
    else
      cj_lw_set_tls_bytes(L, (int64_t)sizeof(float) * (MC * KC + KC * NC + MR * KC + MC * NC + treg));
  } else {
    p->kind = DK_GENERIC;
  }
  cj_lw_add_cost(L, 2.0 * (double)p->B * (double)p->M * (double)p->N * (double)p->K, 0);
  int32_t ins[2] = {x.buf, y.buf};
  if (!cj_lw_emit(L, op, k_dot, p, 2, ins, 1, &r.buf)) return cj_oom();
  return NULL;
}

cj_status cj_lower_dot_general(cj_lw *L, cj_op *op) {
  const cj_attr *dn = cj_op_attr(op, "dot_dimension_numbers");
  if (!dn || dn->kind != CJ_ATTR_STRUCT)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "missing dot_dimension_numbers");
  int64_t lb[CJ_MAX_RANK], rb[CJ_MAX_RANK], lc[CJ_MAX_RANK], rc[CJ_MAX_RANK];
  int64_t nlb = 0, nrb = 0, nlc = 0, nrc = 0;
  cj_attr_get_i64s(cj_attr_field(dn, CJ_SK_DOT, CJ_SF_DOT_lhs_batching_dimensions), lb, CJ_MAX_RANK, &nlb);
  cj_attr_get_i64s(cj_attr_field(dn, CJ_SK_DOT, CJ_SF_DOT_rhs_batching_dimensions), rb, CJ_MAX_RANK, &nrb);
  cj_attr_get_i64s(cj_attr_field(dn, CJ_SK_DOT, CJ_SF_DOT_lhs_contracting_dimensions), lc, CJ_MAX_RANK, &nlc);
  cj_attr_get_i64s(cj_attr_field(dn, CJ_SK_DOT, CJ_SF_DOT_rhs_contracting_dimensions), rc, CJ_MAX_RANK, &nrc);
  if (nlb > CJ_MAX_RANK || nlc > CJ_MAX_RANK)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "too many dimensions");
  return lower_dot_dims(L, op, nlb, lb, nrb, rb, nlc, lc, nrc, rc);
}

cj_status cj_lower_dot(cj_lw *L, cj_op *op) {
  const cj_type *xt = op->operands[0]->type;
  int64_t lc[1] = {xt->rank - 1}, rc[1] = {0};
  return lower_dot_dims(L, op, 0, NULL, 0, NULL, 1, lc, 1, rc);
}
