/* cjrt: fft (FFT, IFFT, RFFT, IRFFT over the last 1 to 3 dimensions).
 *
 * One step per op. Each axis is transformed line by line, lines in parallel on the client's
 * pool; with more than one axis the values live between axes in a complex work buffer (of the
 * computing precision) of the spectral shape:
 *   FFT    last axis first (reading the operand), then the earlier axes;
 *   IFFT   the axes in order, the last one writing the result (scaled by 1/N once);
 *   RFFT   the last axis as a real transform (reading the operand), then the earlier axes;
 *   IRFFT  the earlier axes, then the last one as a complex-to-real transform into the result.
 * f64 data is computed in f64 and f32 data in f32 (as XLA:CPU does; computed in f64 with one
 * rounding at the end, f32 took twice XLA's time, for errors several times smaller:
 * FFT_F32_ARITH 0 brings that back), except IRFFT's last axis, which stays in f64 (its f32 form
 * was 10-20% less accurate than XLA's own; the earlier axes run in f32, a complex64 work buffer
 * between), by the kernels of k_fft_kern.h, built per type and lane count: on AVX-512 f64 with
 * V = 8 lanes, f32 with VF = 16 (and 8 for passes of fewer than 16 lines, and for the lines past a
 * pass's last whole block of 16); elsewhere (AVX2, the portable path) f64 with 4 lanes and f32
 * with 8, so that a vector is one register (lanes_wide). Twiddles are computed
 * in long double and rounded to the type. Each 1-D transform runs V lines at a time (VF for
 * f32): a block of V lines is gathered into vectors of V values (lane j holds line j; neighbours
 * on a strided axis are neighbours in memory, lines of the last axis are transposed on the way
 * in and out), and one mixed-radix Stockham FFT (radix 8, 4, 2, 3 and direct odd-prime
 * butterflies up to 61) runs on whole vectors, so every butterfly does V lines' work; lengths with
 * a larger prime factor go through Bluestein's algorithm (a power-of-two convolution), and long
 * lines (BIG_MIN and up; FEW_BIG_MIN and up where a pass has fewer lines than lanes) one at a
 * time through the four-step split n = n1 n2 (columns V at a time, a twiddle, rows V at a time).
 * Real transforms of even length are complex transforms of half the length with a pre- or
 * post-pass. The inverse is conj(FFT(conj x)).
 * Plans (factors, twiddles computed in long double from exact integer angles, Bluestein chirps and
 * their transforms) are built at compile time into the program.
 *
 * One exception keeps f32 results bit-compatible with XLA:CPU (which uses DUCC's FFTPACK-style
 * passes): an f32 real transform of an odd prime length 7..131 runs, in f32, the same generic
 * odd-length real DFT scheme those passes use (pairwise sums and differences of x[j] and
 * x[n-j], then per output one running sum over cosines and one over sines, four terms at a
 * time), so such transforms match XLA's to the bit instead of to a few ulps.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/lower.h"
#include "cpu/vmath.h"


typedef struct cplx {
  double re, im;
} cplx;
typedef struct cplxf {
  float re, im;
} cplxf;

/* V: lines per block of the f64 kernels (lanes of a vector), VF: of the f32 ones; BIG_MIN: lines
 * this long take the four-step route, and from FEW_BIG_MIN on those of a pass of fewer lines than
 * a vector has lanes (which would leave lanes idle) */
enum { V = 8, VF = 16, FFT_MAXF = 64, MAX_DIRECT_PRIME = 61, BIG_MIN = 16384, FEW_BIG_MIN = 2048 };
/* FFT_F32_ARITH: complex64 / f32 transforms computed in f32 (the _f / _h kernels, as XLA:CPU
 * does); 0: in f64, rounded once at the end (twice as accurate, twice as slow) */
#ifndef FFT_F32_ARITH
#define FFT_F32_ARITH 1
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
/* the copies into and out of vector layout are loops over the V lanes: vectorized */
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#define FFT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define FFT_CLONES
#endif
#define FFT_INLINE static inline __attribute__((always_inline))
/* small fixed loops (FL lanes) fully unrolled, so that arrays of vectors stay in registers */
#ifdef __clang__
#define FFT_UNROLL _Pragma("unroll")
#else
#define FFT_UNROLL _Pragma("GCC unroll 16")
#endif

/* ======================================================================== 1-D plans */

typedef struct fft_plan {
  int64_t n;
  int nst;                     /* Stockham stages */
  int radix[FFT_MAXF];
  const cplx *tw[FFT_MAXF];    /* per stage: ns * R twiddles exp(-2 pi i k r / (ns R)) */
  const double *cs[FFT_MAXF];  /* per stage with an odd R > 3: cos, sin of 2 pi j / R, j < R */
  /* Bluestein */
  bool blue;
  int64_t m;
  const cplx *chirp;           /* n: exp(-i pi k^2 / n) */
  const cplx *bfft;            /* m: FFT of the conjugate chirp, circularly placed, times 1/m */
  const struct fft_plan *sub;  /* the length-m plan */
  /* four-step (one line at a time, in scalar layout): n = n1 n2 */
  bool big;
  int64_t n1, n2;
  const struct fft_plan *p1, *p2;
  const void *ftw;             /* exp(-2 pi i k1 (j0 + l) / n) in lane l of ftw[j0 / dl * n1 + k1]
                                  (vectors of the f64 kernels' dl lanes) */
  int64_t scratch;             /* vc elements of scratch an execution needs */
  /* plans of f32 transforms: the same tables rounded to f32 (ftwf with the f32 kernels' fl
   * lanes) */
  const cplxf *twf[FFT_MAXF];
  const float *csf[FFT_MAXF];
  const cplxf *chirpf, *bfftf;
  const void *ftwf;
} fft_plan;

/* ======================================================================== the step */

enum { T_FFT = 0, T_IFFT = 1, T_RFFT = 2, T_IRFFT = 3 };

typedef struct fft_params {
  int type;
  int nax;                  /* transformed axes (1..3) */
  int64_t batch;
  int64_t len[3];           /* fft_length */
  int64_t sdim[3];          /* spectral (work) dims: len, last one n/2+1 for real types */
  int64_t wstr[3];          /* work strides (cplx elements) */
  int64_t wsize;            /* cplx elements per batch element */
  int64_t istr[3], ostr[3]; /* operand / result strides over the axes (elements) */
  int64_t ibatch, obatch;   /* elements per batch element */
  cj_dtype it, ot;          /* operand / result dtypes */
  const fft_plan *plan[3];
  bool f32prime;            /* RFFT in f32 through rdft_prime_f32 */
  const fft_plan *hplan;    /* even real lengths n: the complex plan of n / 2 */
  const cplx *htw;          /* and exp(-2 pi i k / n), k <= n / 2 */
  const cplxf *htwf;        /* those rounded to f32 (f32 transforms) */
  bool f32;                 /* computed in f32 (complex64 / f32 data), else in f64 */
  bool last64;              /* but the last axis in f64 (IRFFT) */
  cj_dtype wdt;             /* the work buffer's: complex of the type the earlier axes compute in */
  const float *cs;          /* its cos/sin table */
  double scale;             /* IFFT / IRFFT: 1 / prod(len) */
  int dl, fl;               /* lanes of the f64 and of the f32 kernels (lanes_wide) */
} fft_params;

typedef struct fft_run {
  const fft_params *p;
  const char *in;
  char *out;
  char *work;   /* complex f64, between axes */
  int ax;       /* the axis of this pass */
  bool read_in, write_out; /* this pass reads the operand / writes the result (else work) */
  cj_exec_ctx *ctx;
} fft_run;

/* where lines live: element k, lane j of a block at d[k * es + j] (real), d[k * es + ims + j]
 * (imaginary), in doubles */
typedef struct lay {
  int64_t es, ims;
  int lanes;
} lay;

/* how a line is read or written: complex values, real values (imaginary parts 0 or dropped), or
 * reals in pairs (element k is x[2k] + i x[2k+1]) */
enum { M_CPLX, M_REAL, M_PAIRS };

/* one line end: its memory (dtype, base), the offset of each line of the block (elements) and
 * the stride between its elements */
typedef struct lend {
  cj_dtype dt;
  char *base;
  int64_t off[VF];
  int64_t es;
} lend;

static void rdft_prime_f32(const float *x, int n, const float *cs, cplx *out);

/* the lines of axis ax one after the other: a line's coordinates over the other axes and its
 * offsets in work / operand / result elements */
typedef struct line_cursor {
  int64_t c[3];
  int64_t wo, io, oo;
} line_cursor;

/* the cursor at line l (divisions: once per pass body, not per line) */
static void cursor_at(const fft_params *p, int ax, int64_t l, line_cursor *k) {
  int64_t per = p->wsize / p->sdim[ax];
  int64_t bi = l / per;
  int64_t r = l % per;
  k->wo = bi * p->wsize, k->io = bi * p->ibatch, k->oo = bi * p->obatch;
  for (int a = p->nax - 1; a >= 0; a--) {
    if (a == ax) continue;
    k->c[a] = r % p->sdim[a];
    r /= p->sdim[a];
    k->wo += k->c[a] * p->wstr[a];
    k->io += k->c[a] * p->istr[a];
    k->oo += k->c[a] * p->ostr[a];
  }
}

/* the cursor to the next line: the last other axis steps, carrying into the earlier ones and
 * from the first into the batch */
static void cursor_next(const fft_params *p, int ax, line_cursor *k) {
  for (int a = p->nax - 1; a >= 0; a--) {
    if (a == ax) continue;
    k->wo += p->wstr[a], k->io += p->istr[a], k->oo += p->ostr[a];
    if (++k->c[a] < p->sdim[a]) return;
    k->wo -= p->sdim[a] * p->wstr[a], k->io -= p->sdim[a] * p->istr[a];
    k->oo -= p->sdim[a] * p->ostr[a];
    k->c[a] = 0;
  }
  k->wo += p->wsize, k->io += p->ibatch, k->oo += p->obatch;
}

/* what a pass does to each line */
enum { K_CPLX, K_RFULL, K_RHALF, K_RPRIME, K_IFULL, K_IHALF };

static int pass_kind(const fft_params *p, int ax) {
  if (ax != p->nax - 1 || p->type == T_FFT || p->type == T_IFFT) return K_CPLX;
  if (p->type == T_RFFT) return p->f32prime ? K_RPRIME : p->hplan ? K_RHALF : K_RFULL;
  return p->hplan ? K_IHALF : K_IFULL;
}

/* ======================================================================== the kernels, per type */

typedef long long vi8 __attribute__((vector_size(8 * sizeof(long long))));
typedef int vi8s __attribute__((vector_size(8 * sizeof(int))));
typedef int vi16 __attribute__((vector_size(16 * sizeof(int))));

#define FT double
#define FL 8
#define FN(x) x##_d
#define VR vd
#define VC vc
#define VI vi8
#define FFT_F32 0
#include "cpu/k_fft_kern.h"

#define FT float
#define FL 16
#define FN(x) x##_f
#define VR vf
#define VC vcf
#define VI vi16
#define FFT_F32 1
#include "cpu/k_fft_kern.h"

/* f32 with 8 lanes: the f32 kernels where the CPU has no AVX-512 (16 lanes would be two ymm
 * registers a vector, and the radix-8 butterflies would spill), and on AVX-512 those of passes
 * of fewer than VF lines (not four-step ones: their ftwf have the plan's f32 lanes) */
#define FT float
#define FL 8
#define FN(x) x##_h
#define VR vh
#define VC vch
#define VI vi8s
#define FFT_F32 1
#include "cpu/k_fft_kern.h"

/* f64 with 4 lanes: the f64 kernels where the CPU has no AVX-512 (one ymm register a vector) */
typedef long long vi4 __attribute__((vector_size(4 * sizeof(long long))));
#define FT double
#define FL 4
#define FN(x) x##_q
#define VR vq
#define VC vcq
#define VI vi4
#define FFT_F32 0
#include "cpu/k_fft_kern.h"

/* the kernels use wide vectors (16 f32 / 8 f64 lanes): on an AVX-512 CPU (one register a
 * vector), or where CJ_FFT_LANES=wide says so (tests: any CPU runs them, a vector then being
 * several registers); else 8 / 4 lanes (AVX2 and the portable path: the wide ones would spill).
 * CJ_VMATH_ISA caps the ISA, so that tests can force the narrow kernels on an AVX-512 CPU. */
static bool lanes_wide(void) {
  const char *env = getenv("CJ_FFT_LANES");
  if (env && strcmp(env, "wide") == 0) return true;
  return cj_vm_get_isa() >= CJ_VM_ISA_AVX512;
}

/* ======================================================================== 1-D plans */

static cplx cexpi_frac(int64_t num, int64_t den) {
  /* exp(-2 pi i num / den), num reduced first so the angle stays small */
  num %= den;
  if (num < 0) num += den;
  long double a = -2.0L * 3.141592653589793238462643383279502884L * (long double)num / (long double)den;
  cplx c = {(double)cosl(a), (double)sinl(a)};
  return c;
}

static int64_t next_pow2(int64_t x) {
  int64_t p = 1;
  while (p < x) p <<= 1;
  return p;
}

/* factors into radices 8, then one 4 or 2, then 3, then odd primes; returns false if a prime
 * factor is larger than MAX_DIRECT_PRIME */
static bool factorize(int64_t n, int *radix, int *nst) {
  int k = 0;
  while (n % 8 == 0 && k < FFT_MAXF) radix[k++] = 8, n /= 8;
  if (n % 4 == 0) radix[k++] = 4, n /= 4;
  if (n % 2 == 0) radix[k++] = 2, n /= 2;
  for (int64_t p = 3; n > 1 && k < FFT_MAXF; p += 2) {
    while (n % p == 0 && k < FFT_MAXF) {
      if (p > MAX_DIRECT_PRIME) return false;
      radix[k++] = (int)p;
      n /= p;
    }
    if (p * p > n && n > 1) {
      if (n > MAX_DIRECT_PRIME) return false;
      radix[k++] = (int)n;
      n = 1;
    }
  }
  *nst = k;
  return n == 1;
}

static const fft_plan *plan_new(cj_lw *L, int64_t n, int64_t big_min, bool f32, int dl, int fl);

/* n complex values rounded to f32 (NULL: out of memory) */
static const cplxf *round_f32(cj_lw *L, const cplx *c, int64_t n) {
  cplxf *f = cj_lw_alloc(L, sizeof(cplxf) * (size_t)(n ? n : 1));
  if (f)
    for (int64_t k = 0; k < n; k++) f[k].re = (float)c[k].re, f[k].im = (float)c[k].im;
  return f;
}

/* Bluestein: the chirp, and the transform of its conjugate (computed here, in lane 0) */
static bool plan_bluestein(cj_lw *L, fft_plan *p, bool f32, int dl, int fl) {
  int64_t n = p->n;
  p->blue = true;
  p->m = next_pow2(2 * n - 1);
  const fft_plan *sub = plan_new(L, p->m, INT64_MAX, f32, dl, fl);
  cplx *chirp = cj_lw_alloc(L, sizeof(cplx) * (size_t)n);
  cplx *b = cj_lw_alloc(L, sizeof(cplx) * (size_t)p->m);
  if (!sub || !chirp || !b) return false;
  vc *tmp = aligned_alloc(64, sizeof(vc) * (size_t)(p->m + sub->scratch));
  if (!tmp) return false;
  memset(tmp, 0, sizeof(vc) * (size_t)(p->m + sub->scratch));
  for (int64_t k = 0; k < n; k++) {
    /* exp(-i pi k^2 / n) = exp(-2 pi i (k^2 mod 2n) / 2n) */
    int64_t kk = (int64_t)(((__int128)k * k) % (2 * n));
    chirp[k] = cexpi_frac(kk, 2 * n);
  }
  for (int64_t k = 0; k < n; k++) {
    tmp[k].re[0] = chirp[k].re, tmp[k].im[0] = -chirp[k].im;
    if (k) tmp[p->m - k].re[0] = chirp[k].re, tmp[p->m - k].im[0] = -chirp[k].im;
  }
  const vc *o = stockham_d(sub, tmp, tmp + p->m);
  double inv = 1.0 / (double)p->m;
  for (int64_t k = 0; k < p->m; k++) b[k].re = o[k].re[0] * inv, b[k].im = o[k].im[0] * inv;
  free(tmp);
  p->sub = sub;
  p->chirp = chirp;
  p->bfft = b;
  p->scratch = p->m + sub->scratch;
  if (f32) {
    p->chirpf = round_f32(L, chirp, n);
    p->bfftf = round_f32(L, b, p->m);
    if (!p->chirpf || !p->bfftf) return false;
  }
  return true;
}

/* the four-step split of n: n1 the largest divisor of n not above sqrt(n) */
static int64_t big_split(int64_t n) {
  int64_t n1 = 1;
  for (int64_t d = 2; d * d <= n; d++)
    if (n % d == 0) n1 = d;
  return n1;
}

/* the four-step twiddles of lane blocks of `lanes` columns, in f64 or f32: for column block b
 * and k1 < n1 a complex vector (lanes real parts, then lanes imaginary ones), 64-byte aligned */
static const void *four_step_tw(cj_lw *L, const fft_plan *p, int lanes, bool f32) {
  int64_t n = p->n, n1 = p->n1, nb = (p->n2 + lanes - 1) / lanes;
  size_t es = f32 ? sizeof(float) : sizeof(double);
  char *raw = cj_lw_alloc(L, 2 * (size_t)lanes * es * (size_t)(nb * n1) + 64);
  if (!raw) return NULL;
  char *ftw = raw + (64 - (uintptr_t)raw % 64) % 64;
  for (int64_t b = 0; b < nb; b++)
    for (int64_t k1 = 0; k1 < n1; k1++)
      for (int l = 0; l < lanes; l++) {
        cplx w = cexpi_frac(k1 * (b * lanes + l), n);
        int64_t i = (b * n1 + k1) * 2 * lanes + l;
        if (f32)
          ((float *)ftw)[i] = (float)w.re, ((float *)ftw)[i + lanes] = (float)w.im;
        else
          ((double *)ftw)[i] = w.re, ((double *)ftw)[i + lanes] = w.im;
      }
  return ftw;
}

static bool plan_four_step(cj_lw *L, fft_plan *p, int64_t n1, bool f32, int dl, int fl) {
  int64_t n = p->n, n2 = n / n1;
  p->p1 = plan_new(L, n1, INT64_MAX, f32, dl, fl);
  p->p2 = plan_new(L, n2, INT64_MAX, f32, dl, fl);
  if (!p->p1 || !p->p2) return false;
  p->big = true;
  p->n1 = n1;
  p->n2 = n2;
  if (!(p->ftw = four_step_tw(L, p, dl, false))) return false;
  int64_t s = p->p1->scratch > p->p2->scratch ? p->p1->scratch : p->p2->scratch;
  p->scratch = (n * (int64_t)sizeof(cplx) + (int64_t)sizeof(vc) - 1) / (int64_t)sizeof(vc) +
               (n1 > n2 ? n1 : n2) + s;
  return !f32 || (p->ftwf = four_step_tw(L, p, fl, true)) != NULL;
}

static const fft_plan *plan_new(cj_lw *L, int64_t n, int64_t big_min, bool f32, int dl, int fl) {
  fft_plan *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return NULL;
  memset(p, 0, sizeof *p);
  p->n = n;
  if (n <= 1) return p;
  if (!factorize(n, p->radix, &p->nst)) return plan_bluestein(L, p, f32, dl, fl) ? p : NULL;
  if (n >= big_min && big_split(n) >= 16)
    return plan_four_step(L, p, big_split(n), f32, dl, fl) ? p : NULL;
  int64_t ns = 1;
  for (int s = 0; s < p->nst; s++) {
    int R = p->radix[s];
    cplx *tw = cj_lw_alloc(L, sizeof(cplx) * (size_t)(ns * R));
    if (!tw) return NULL;
    for (int64_t k = 0; k < ns; k++)
      for (int r = 0; r < R; r++) tw[k * R + r] = cexpi_frac(k * r, ns * R);
    p->tw[s] = tw;
    if (f32 && !(p->twf[s] = round_f32(L, tw, ns * R))) return NULL;
    if (R > 4 && R != 8) {
      double *cs = cj_lw_alloc(L, sizeof(double) * (size_t)(2 * R));
      if (!cs) return NULL;
      for (int j = 0; j < R; j++) {
        cplx c = cexpi_frac(j, R);
        cs[2 * j] = c.re, cs[2 * j + 1] = -c.im;
      }
      p->cs[s] = cs;
      float *csf = f32 ? cj_lw_alloc(L, sizeof(float) * (size_t)(2 * R)) : NULL;
      if (f32 && !csf) return NULL;
      for (int j = 0; f32 && j < 2 * R; j++) csf[j] = (float)cs[j];
      p->csf[s] = csf;
    }
    ns *= R;
  }
  p->scratch = n;
  return p;
}
/* ======================================================================== f32 real prime DFT */

/* The generic odd-length real DFT of FFTPACK/DUCC in f32 (see the top of the file). cs holds
 * cos and sin of 2 pi k / n for k < n (as f32); out gets n/2 + 1 values. */
static void rdft_prime_f32(const float *x, int n, const float *cs, cplx *out) {
  float c[136], ch[136];
  int ipph = (n + 1) / 2;
  for (int j = 0; j < n; j++) c[j] = x[j];
  for (int j = 1; j < ipph; j++) {
    int jc = n - j;
    float t = c[jc];
    c[jc] = t - c[j];
    c[j] = t + c[j];
  }
  for (int l = 1; l < ipph; l++) {
    int lc = n - l;
    float a = c[0] + cs[2 * l] * c[1];
    a = a + cs[4 * l % (2 * n)] * c[2];
    float b = cs[2 * l + 1] * c[n - 1];
    b = b + cs[(4 * l + 1) % (2 * n)] * c[n - 2];
    int iang = 2 * l, j = 3, jc = n - 3;
    for (; j < ipph - 3; j += 4, jc -= 4) {
      float ar[4], ai[4];
      for (int q = 0; q < 4; q++) {
        iang += l;
        if (iang >= n) iang -= n;
        ar[q] = cs[2 * iang];
        ai[q] = cs[2 * iang + 1];
      }
      float sa = ar[0] * c[j] + ar[1] * c[j + 1];
      sa = sa + ar[2] * c[j + 2];
      sa = sa + ar[3] * c[j + 3];
      float sb = ai[0] * c[jc] + ai[1] * c[jc - 1];
      sb = sb + ai[2] * c[jc - 2];
      sb = sb + ai[3] * c[jc - 3];
      a = a + sa;
      b = b + sb;
    }
    for (; j < ipph - 1; j += 2, jc -= 2) {
      float ar[2], ai[2];
      for (int q = 0; q < 2; q++) {
        iang += l;
        if (iang >= n) iang -= n;
        ar[q] = cs[2 * iang];
        ai[q] = cs[2 * iang + 1];
      }
      float sa = ar[0] * c[j] + ar[1] * c[j + 1];
      float sb = ai[0] * c[jc] + ai[1] * c[jc - 1];
      a = a + sa;
      b = b + sb;
    }
    for (; j < ipph; j++, jc--) {
      iang += l;
      if (iang >= n) iang -= n;
      a = a + cs[2 * iang] * c[j];
      b = b + cs[2 * iang + 1] * c[jc];
    }
    ch[l] = a;
    ch[lc] = b;
  }
  float s = c[0];
  for (int j = 1; j < ipph; j++) s = s + c[j];
  out[0].re = s;
  out[0].im = 0;
  for (int j = 1; j < ipph; j++) {
    out[j].re = ch[j];
    out[j].im = ch[n - j];
  }
}

static bool is_prime(int64_t n) {
  if (n < 2) return false;
  for (int64_t d = 2; d * d <= n; d++)
    if (n % d == 0) return false;
  return true;
}


typedef void (*pass_fn)(void *vctx, int64_t b, int64_t e);

/* f32 with VF lanes for whole blocks, then 8 for the rest of the lines (1..VF-1 of them) */
static void pass_body_fh(void *vctx, int64_t b, int64_t e) {
  int64_t whole = b + (e - b) / VF * VF;
  if (whole > b) pass_body_f(vctx, b, whole);
  if (e > whole) pass_body_h(vctx, whole, e);
}

/* pass ax computes in f32 (else in f64) */
static bool pass_f32(const fft_params *p, int ax) {
  return p->f32 && !(p->last64 && ax == p->nax - 1);
}

/* the kernels of pass ax over `lines` lines: f64; or f32 with VF lanes, or with 8 where there
 * are fewer than VF lines (so that few lines do not leave most lanes idle) or for the lines past
 * the last whole block of VF, where the pass is not a four-step one (whose twiddles have VF
 * lanes) */

static pass_fn pass_kernels(const fft_params *p, int ax, int64_t lines) {
  if (!pass_f32(p, ax)) return p->dl == V ? pass_body_d : pass_body_q;
  if (p->fl == 8) return pass_body_h;
  int kind = pass_kind(p, ax);
  bool four_step = (kind == K_CPLX || kind == K_RFULL || kind == K_IFULL) && p->plan[ax]->big;
  if (four_step) return pass_body_f;
  return lines < VF ? pass_body_h : pass_body_fh;
}

static void run_lines(fft_run *R, int ax, bool read_in, bool write_out) {
  const fft_params *p = R->p;
  R->ax = ax;
  R->read_in = read_in;
  R->write_out = write_out;
  int64_t lines = p->batch * (p->wsize / p->sdim[ax]);
  double work = (double)lines * (double)p->len[ax] * 8.0;
  int64_t lanes = pass_f32(p, ax) ? p->fl : p->dl;
  int64_t grain = ((int64_t)(16384.0 / ((double)p->len[ax] * 8.0 + 1.0)) / lanes + 1) * lanes;
  if (R->ctx->pool && cj_pool_size(R->ctx->pool) > 1 && work > 65536.0)
    cj_pool_parallel_for(R->ctx->pool, lines, grain, pass_kernels(p, ax, lines), R);
  else
    pass_kernels(p, ax, lines)(R, 0, lines);
}

/* pass i of a transform: its axis (FFT, RFFT: the last axis first, then the earlier ones;
 * IFFT, IRFFT: the axes in order) */
static int pass_axis(const fft_params *p, int i) {
  return p->type == T_FFT || p->type == T_RFFT ? p->nax - 1 - i : i;
}

/* batch elements b..e-1 through all passes, one element after the other, so that its slice of
 * the work buffer stays in cache between the passes */
static void batch_body(void *vctx, int64_t b, int64_t e) {
  fft_run R = *(const fft_run *)vctx;
  const fft_params *p = R.p;
  for (int64_t bi = b; bi < e; bi++)
    for (int i = 0; i < p->nax; i++) {
      R.ax = pass_axis(p, i);
      R.read_in = i == 0;
      R.write_out = i == p->nax - 1;
      int64_t per = p->wsize / p->sdim[R.ax];
      pass_kernels(p, R.ax, per)(&R, bi * per, (bi + 1) * per);
    }
}

enum { BATCH_WISE_BYTES = 1 << 19 };

static CJ_MUST_USE cj_status k_fft(cj_exec_ctx *ctx, const cj_step *st) {
  const fft_params *p = st->params;
  fft_run R = {p, CJ_PTR(ctx, st->in[0]), CJ_PTR(ctx, st->out[0]), CJ_PTR(ctx, st->out[1]), 0,
               false, false, ctx};
  if (p->nax > 1 && p->batch > 1 && p->wsize * (int64_t)sizeof(cplx) <= BATCH_WISE_BYTES) {
    if (ctx->pool && cj_pool_size(ctx->pool) > 1)
      cj_pool_parallel_for(ctx->pool, p->batch, 1, batch_body, &R);
    else
      batch_body(&R, 0, p->batch);
    return NULL;
  }
  for (int i = 0; i < p->nax; i++) run_lines(&R, pass_axis(p, i), i == 0, i == p->nax - 1);
  return NULL;
}
cj_status cj_lower_fft(cj_lw *L, cj_op *op) {
  int32_t type;
  if (!cj_op_get_enum(op, "fft_type", CJ_EK_FFT_TYPE, &type))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "missing fft_type");
  int64_t len[4], nax = 0;
  if (!cj_op_get_i64s(op, "fft_length", len, 4, &nax) || nax < 1 || nax > 3)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "fft_length must have 1 to 3 entries");
  cj_lw_tensor x, r;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &x));
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &r));
  int rank = x.rank;
  if (r.rank != rank || rank < nax)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "operand and result ranks do not fit fft_length");
  bool ok;
  switch (type) {
    case T_FFT:
    case T_IFFT: ok = (x.dtype == CJ_C64 || x.dtype == CJ_C128) && r.dtype == x.dtype; break;
    case T_RFFT: ok = (x.dtype == CJ_F32 && r.dtype == CJ_C64) || (x.dtype == CJ_F64 && r.dtype == CJ_C128); break;
    default: ok = (x.dtype == CJ_C64 && r.dtype == CJ_F32) || (x.dtype == CJ_C128 && r.dtype == CJ_F64);
  }
  if (!ok)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "%s from %s to %s is not supported",
                       cj_enum_case_name(CJ_EK_FFT_TYPE, type), cj_dtype_get(x.dtype)->id,
                       cj_dtype_get(r.dtype)->id);
  fft_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  p->type = type;
  p->nax = (int)nax;
  p->it = x.dtype;
  p->ot = r.dtype;
  /* IRFFT's last axis stays in f64: its f32 form (a different algorithm from XLA's) was 10-20%
   * less accurate than XLA:CPU's on the accuracy test, and a fast path may not be less accurate.
   * Its earlier (complex) axes run in f32 as XLA:CPU's do, so that only they round in f32. */
  p->f32 = FFT_F32_ARITH && (x.dtype == CJ_C64 || x.dtype == CJ_F32);
  p->last64 = type == T_IRFFT;
  bool wide = lanes_wide();
  p->dl = wide ? V : 4;
  p->fl = wide ? VF : 8;
  p->wdt = p->f32 ? CJ_C64 : CJ_C128;
  int64_t istr[CJ_MAX_RANK], ostr[CJ_MAX_RANK];
  cj_row_strides(rank, x.dims, istr);
  cj_row_strides(rank, r.dims, ostr);
  p->batch = 1;
  for (int d = 0; d < rank - nax; d++) {
    if (x.dims[d] != r.dims[d])
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "batch dimension %d differs", d);
    p->batch *= x.dims[d];
  }
  bool real = type == T_RFFT || type == T_IRFFT;
  p->wsize = 1;
  double tot = 1;
  for (int a = 0; a < nax; a++) {
    int d = rank - (int)nax + a;
    p->len[a] = len[a];
    p->sdim[a] = (real && a == nax - 1) ? (len[a] == 0 ? 0 : len[a] / 2 + 1) : len[a];
    const int64_t *spec_dims = type == T_IRFFT ? x.dims : r.dims;
    const int64_t *real_dims = type == T_RFFT ? x.dims : r.dims;
    if (spec_dims[d] != p->sdim[a] || (real && real_dims[d] != len[a]) ||
        (!real && (x.dims[d] != len[a] || r.dims[d] != len[a])))
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "dimension %d does not fit fft_length", d);
    p->istr[a] = istr[d];
    p->ostr[a] = ostr[d];
    p->wsize *= p->sdim[a];
    tot *= (double)len[a];
  }
  p->ibatch = x.nelems / (p->batch ? p->batch : 1);
  p->obatch = r.nelems / (p->batch ? p->batch : 1);
  {
    int64_t s = 1;
    for (int a = (int)nax - 1; a >= 0; a--) {
      p->wstr[a] = s;
      s *= p->sdim[a];
    }
  }
  p->scale = tot > 0 ? 1.0 / tot : 1.0;
  if (r.nelems == 0 || x.nelems == 0) {
    if (r.nbytes) { /* an empty operand but a non-empty result cannot happen with valid shapes */
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "empty operand with a non-empty result");
    }
    return NULL;
  }
  int64_t tls = 0;
  for (int a = 0; a < nax; a++) {
    const fft_plan *pl = NULL;
    for (int b = 0; b < a; b++)
      if (p->len[b] == len[a]) pl = p->plan[b];
    int64_t lines = p->batch * (p->wsize / p->sdim[a]);
    int lanes = pass_f32(p, a) ? p->fl : p->dl;
    if (!pl) pl = plan_new(L, len[a], lines < lanes ? FEW_BIG_MIN : BIG_MIN, p->f32, p->dl, p->fl);
    if (!pl) return cj_oom();
    p->plan[a] = pl;
    int64_t need = (pl->big ? (len[a] + 2) / 8 + 1 : len[a] + 2) + pl->scratch;
    if (need > tls) tls = need;
  }
  int64_t n = len[nax - 1];
  if (type == T_RFFT && x.dtype == CJ_F32 && n >= 7 && n < 135 && is_prime(n)) {
    float *cs = cj_lw_alloc(L, sizeof(float) * (size_t)(2 * n));
    if (!cs) return cj_oom();
    for (int64_t k = 0; k < n; k++) {
      long double a = 2.0L * 3.141592653589793238462643383279502884L * (long double)k / (long double)n;
      cs[2 * k] = (float)cosl(a);
      cs[2 * k + 1] = (float)sinl(a);
    }
    /* symmetric, as the scheme expects: entries past n/2 mirror the first half */
    for (int64_t k = 1; k < (n + 1) / 2; k++) {
      cs[2 * (n - k)] = cs[2 * k];
      cs[2 * (n - k) + 1] = -cs[2 * k + 1];
    }
    p->f32prime = true;
    p->cs = cs;
  }
  if (real && n >= 4 && n % 2 == 0 && n / 2 < BIG_MIN && !p->f32prime) {
    const fft_plan *hp = plan_new(L, n / 2, INT64_MAX, p->f32, p->dl, p->fl);
    cplx *tw = cj_lw_alloc(L, sizeof(cplx) * (size_t)(n / 2 + 1));
    if (!hp || !tw) return cj_oom();
    for (int64_t k = 0; k <= n / 2; k++) tw[k] = cexpi_frac(k, n);
    p->hplan = hp;
    p->htw = tw;
    if (p->f32 && !(p->htwf = round_f32(L, tw, n / 2 + 1))) return cj_oom();
    int64_t need = n + 2 + hp->scratch + 1; /* + 1: RFFT's X[n/2] may land in the scratch */
    if (need > tls) tls = need;
  }
  cj_lw_set_tls_bytes(L, (int64_t)sizeof(vc) * tls + 128);
  double lg = 0;
  for (int a = 0; a < nax; a++) lg += log2((double)len[a] + 1.0);
  cj_lw_add_cost(L, 5.0 * (double)p->batch * (double)p->wsize * lg, 0);
  /* between axes the values live in a complex f64 work buffer of the spectral shape */
  int64_t wbytes = nax > 1 ? (int64_t)(p->f32 ? sizeof(cplxf) : sizeof(cplx)) * p->batch * p->wsize : 0;
  int32_t work = cj_lw_new_buf(L, wbytes, CJ_BK_ARENA);
  int32_t outs[2] = {r.buf, work};
  if (!cj_lw_emit(L, op, k_fft, p, 1, &x.buf, 2, outs)) return cj_oom();
  return NULL;
}
