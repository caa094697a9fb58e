/* cjrt: fft (FFT, IFFT, RFFT, IRFFT over the last 1 to 3 dimensions).
 *
 * One step per op. Each axis is transformed line by line, lines in parallel on the client's
 * pool; with more than one axis the values live between axes in a complex f64 work buffer of
 * the spectral shape (so f32 data is rounded once, at the end):
 *   FFT    last axis first (reading the operand), then the earlier axes;
 *   IFFT   the axes in order, the last one writing the result (scaled by 1/N once);
 *   RFFT   the last axis as a real transform (reading the operand), then the earlier axes;
 *   IRFFT  the earlier axes, then the last one as a complex-to-real transform into the result.
 * Every 1-D transform is computed in f64 (f32 data too, rounded once on the way out), V lines at
 * a time: a block of V lines is gathered into vectors of V doubles (lane j holds line j; neighbours
 * on a strided axis are neighbours in memory, lines of the last axis are transposed on the way
 * in and out), and one mixed-radix Stockham FFT (radix 8, 4, 2, 3 and direct odd-prime
 * butterflies up to 61) runs on whole vectors, so every butterfly does V lines' work; lengths with
 * a larger prime factor go through Bluestein's algorithm (a power-of-two convolution), and long
 * lines (BIG_MIN and up) one at a time through the four-step split n = n1 n2 (columns V at a time,
 * a twiddle, rows V at a time). Real transforms of even length are complex transforms of half
 * the length with a pre- or post-pass. The inverse is conj(FFT(conj x)).
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


typedef struct cplx {
  double re, im;
} cplx;

/* V: lines per block (lanes of a vector); BIG_MIN: lines this long take the four-step route */
enum { V = 8, FFT_MAXF = 64, MAX_DIRECT_PRIME = 61, BIG_MIN = 16384 };
typedef double vd __attribute__((vector_size(V * sizeof(double))));
typedef struct vc {
  vd re, im;
} vc;

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
/* the copies into and out of vector layout are loops over the V lanes: vectorized */
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#define FFT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define FFT_CLONES
#endif
#define FFT_INLINE static inline __attribute__((always_inline))

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
  const vc *ftw;               /* exp(-2 pi i k1 (j0 + l) / n) in lane l of ftw[j0 / V * n1 + k1] */
  int64_t scratch;             /* vc elements of scratch an execution needs */
} fft_plan;

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

/* ======================================================================== vector butterflies */

FFT_INLINE void cmulw(vc *a, cplx w) {
  vd re = a->re * w.re - a->im * w.im;
  a->im = a->re * w.im + a->im * w.re;
  a->re = re;
}

/* the 4-point DFT of (a, b, c, e) in place */
FFT_INLINE void dft4(vc *a, vc *b, vc *c, vc *e) {
  vd t0r = a->re + c->re, t0i = a->im + c->im, t1r = a->re - c->re, t1i = a->im - c->im;
  vd t2r = b->re + e->re, t2i = b->im + e->im, t3r = b->re - e->re, t3i = b->im - e->im;
  a->re = t0r + t2r, a->im = t0i + t2i;
  c->re = t0r - t2r, c->im = t0i - t2i;
  b->re = t1r + t3i, b->im = t1i - t3r; /* t1 - i t3 */
  e->re = t1r - t3i, e->im = t1i + t3r;
}

/* radix R stage of a Stockham FFT: butterfly g * ns + k (k < ns) reads src[g * ns + k + r * nr],
 * writes dst[g * ns * R + k + q * ns] */
FFT_INLINE void stage8(int64_t ns, int64_t nr, const cplx *tw, const vc *src, vc *dst) {
  for (int64_t g0 = 0; g0 < nr; g0 += ns) {
    const vc *in = src + g0;
    vc *out = dst + g0 * 8;
    for (int64_t k = 0; k < ns; k++) {
      const double h = 0.70710678118654752440084436210485; /* sqrt(1/2) */
      vc x[8];
      for (int r = 0; r < 8; r++) x[r] = in[k + r * nr];
      if (ns > 1)
        for (int r = 1; r < 8; r++) cmulw(&x[r], tw[8 * k + r]);
      vc a[4], b[4];
      for (int r = 0; r < 4; r++) {
        a[r].re = x[r].re + x[r + 4].re, a[r].im = x[r].im + x[r + 4].im;
        b[r].re = x[r].re - x[r + 4].re, b[r].im = x[r].im - x[r + 4].im;
      }
      /* b[r] *= exp(-2 pi i r / 8) */
      vd t = (b[1].re + b[1].im) * h;
      b[1].im = (b[1].im - b[1].re) * h, b[1].re = t;
      t = b[2].im;
      b[2].im = -b[2].re, b[2].re = t;
      t = (b[3].im - b[3].re) * h;
      b[3].im = -(b[3].re + b[3].im) * h, b[3].re = t;
      dft4(&a[0], &a[1], &a[2], &a[3]);
      dft4(&b[0], &b[1], &b[2], &b[3]);
      for (int q = 0; q < 4; q++) out[k + 2 * q * ns] = a[q], out[k + (2 * q + 1) * ns] = b[q];
    }
  }
}

FFT_INLINE void stage4(int64_t ns, int64_t nr, const cplx *tw, const vc *src, vc *dst) {
  for (int64_t g0 = 0; g0 < nr; g0 += ns) {
    const vc *in = src + g0;
    vc *out = dst + g0 * 4;
    for (int64_t k = 0; k < ns; k++) {
      vc a = in[k], b = in[k + nr], c = in[k + 2 * nr], e = in[k + 3 * nr];
      if (ns > 1) {
        cmulw(&b, tw[4 * k + 1]);
        cmulw(&c, tw[4 * k + 2]);
        cmulw(&e, tw[4 * k + 3]);
      }
      dft4(&a, &b, &c, &e);
      out[k] = a, out[k + ns] = b, out[k + 2 * ns] = c, out[k + 3 * ns] = e;
    }
  }
}

FFT_INLINE void stage2(int64_t ns, int64_t nr, const cplx *tw, const vc *src, vc *dst) {
  for (int64_t g0 = 0; g0 < nr; g0 += ns) {
    const vc *in = src + g0;
    vc *out = dst + g0 * 2;
    for (int64_t k = 0; k < ns; k++) {
      vc a = in[k], b = in[k + nr];
      if (ns > 1) cmulw(&b, tw[2 * k + 1]);
      out[k].re = a.re + b.re, out[k].im = a.im + b.im;
      out[k + ns].re = a.re - b.re, out[k + ns].im = a.im - b.im;
    }
  }
}

FFT_INLINE void stage3(int64_t ns, int64_t nr, const cplx *tw, const vc *src, vc *dst) {
  const double s3 = 0.86602540378443864676372317075294;
  for (int64_t g0 = 0; g0 < nr; g0 += ns) {
    const vc *in = src + g0;
    vc *out = dst + g0 * 3;
    for (int64_t k = 0; k < ns; k++) {
      vc a = in[k], b = in[k + nr], c = in[k + 2 * nr];
      if (ns > 1) {
        cmulw(&b, tw[3 * k + 1]);
        cmulw(&c, tw[3 * k + 2]);
      }
      vd t1r = b.re + c.re, t1i = b.im + c.im;
      vd t2r = a.re - 0.5 * t1r, t2i = a.im - 0.5 * t1i;
      vd t3r = s3 * (b.im - c.im), t3i = -s3 * (b.re - c.re); /* -i sqrt(3)/2 (b - c) */
      out[k].re = a.re + t1r, out[k].im = a.im + t1i;
      out[k + ns].re = t2r + t3r, out[k + ns].im = t2i + t3i;
      out[k + 2 * ns].re = t2r - t3r, out[k + 2 * ns].im = t2i - t3i;
    }
  }
}

/* an odd radix R: the direct DFT, through the sums and differences of v[r] and v[R - r]:
 *   X[q] = v0 + sum_r s_r cos(2 pi r q / R) - i sum_r d_r sin(2 pi r q / R), X[R - q] likewise
 *   with +i */
FFT_INLINE void stage_odd(int R, int64_t ns, int64_t nr, const cplx *tw, const double *cs,
                          const vc *src, vc *dst) {
  int h = (R - 1) / 2;
  vc v[MAX_DIRECT_PRIME], sp[MAX_DIRECT_PRIME / 2], dm[MAX_DIRECT_PRIME / 2];
  for (int64_t g0 = 0; g0 < nr; g0 += ns) {
    const vc *in = src + g0;
    vc *out = dst + g0 * R;
    for (int64_t k = 0; k < ns; k++) {
      for (int r = 0; r < R; r++) {
        v[r] = in[k + r * nr];
        if (ns > 1 && r) cmulw(&v[r], tw[k * R + r]);
      }
      vc x0 = v[0];
      for (int r = 1; r <= h; r++) {
        sp[r - 1].re = v[r].re + v[R - r].re, sp[r - 1].im = v[r].im + v[R - r].im;
        dm[r - 1].re = v[r].re - v[R - r].re, dm[r - 1].im = v[r].im - v[R - r].im;
        x0.re += sp[r - 1].re, x0.im += sp[r - 1].im;
      }
      out[k] = x0;
      for (int q = 1; q <= h; q++) {
        vc a = v[0], b = {{0}, {0}};
        int idx = 0;
        for (int r = 0; r < h; r++) {
          idx += q;
          if (idx >= R) idx -= R;
          double c = cs[2 * idx], s = cs[2 * idx + 1];
          a.re += sp[r].re * c, a.im += sp[r].im * c;
          b.re += dm[r].re * s, b.im += dm[r].im * s;
        }
        out[k + q * ns].re = a.re + b.im, out[k + q * ns].im = a.im - b.re;
        out[k + (R - q) * ns].re = a.re - b.im, out[k + (R - q) * ns].im = a.im + b.re;
      }
    }
  }
}

/* the Stockham stages of a factored plan: x (n vectors) in place, scr: n vectors */
FFT_CLONES static void stockham(const fft_plan *p, vc *x, vc *scr) {
  int64_t n = p->n, ns = 1;
  vc *src = x, *dst = scr;
  for (int s = 0; s < p->nst; s++) {
    int R = p->radix[s];
    switch (R) {
      case 8: stage8(ns, n / 8, p->tw[s], src, dst); break;
      case 4: stage4(ns, n / 4, p->tw[s], src, dst); break;
      case 2: stage2(ns, n / 2, p->tw[s], src, dst); break;
      case 3: stage3(ns, n / 3, p->tw[s], src, dst); break;
      default: stage_odd(R, ns, n / R, p->tw[s], p->cs[s], src, dst);
    }
    vc *t = src;
    src = dst;
    dst = t;
    ns *= R;
  }
  if (src != x) memcpy(x, src, sizeof(vc) * (size_t)n);
}

/* Forward transform of V lines in place (x: n vectors); scratch: p->scratch vectors. */
FFT_CLONES static void fftv_exec(const fft_plan *p, vc *x, vc *scr) {
  int64_t n = p->n;
  if (n <= 1) return;
  if (!p->blue) {
    stockham(p, x, scr);
    return;
  }
  int64_t m = p->m;
  vc *a = scr;
  for (int64_t k = 0; k < n; k++) {
    a[k] = x[k];
    cmulw(&a[k], p->chirp[k]);
  }
  memset(a + n, 0, sizeof(vc) * (size_t)(m - n));
  stockham(p->sub, a, scr + m);
  for (int64_t k = 0; k < m; k++) {
    cmulw(&a[k], p->bfft[k]);
    a[k].im = -a[k].im; /* conjugate: the inverse transform as a forward one */
  }
  stockham(p->sub, a, scr + m);
  for (int64_t k = 0; k < n; k++) {
    x[k].re = a[k].re;
    x[k].im = -a[k].im;
    cmulw(&x[k], p->chirp[k]);
  }
}

/* Forward transform of one line x (n values, scalar layout) by the four-step split: the n2
 * columns of length n1 (x[i n2 + j]) V at a time, times exp(-2 pi i k1 j / n), into tmp; then
 * the n1 rows of length n2, V at a time, to x[k1 + n1 k2]. */
FFT_CLONES static void four_step(const fft_plan *p, cplx *x, vc *scr) {
  int64_t n = p->n, n1 = p->n1, n2 = p->n2;
  cplx *tmp = (cplx *)scr;
  vc *vb = scr + (n * (int64_t)sizeof(cplx) + (int64_t)sizeof(vc) - 1) / (int64_t)sizeof(vc);
  vc *sub = vb + (n1 > n2 ? n1 : n2);
  for (int64_t j0 = 0; j0 < n2; j0 += V) {
    int cnt = n2 - j0 < V ? (int)(n2 - j0) : V;
    for (int64_t i = 0; i < n1; i++)
      for (int l = 0; l < V; l++) {
        cplx c = l < cnt ? x[i * n2 + j0 + l] : (cplx){0, 0};
        vb[i].re[l] = c.re, vb[i].im[l] = c.im;
      }
    fftv_exec(p->p1, vb, sub);
    const vc *w = p->ftw + j0 / V * n1;
    for (int64_t k1 = 0; k1 < n1; k1++) {
      vd re = vb[k1].re * w[k1].re - vb[k1].im * w[k1].im;
      vd im = vb[k1].re * w[k1].im + vb[k1].im * w[k1].re;
      for (int l = 0; l < cnt; l++) tmp[k1 * n2 + j0 + l].re = re[l], tmp[k1 * n2 + j0 + l].im = im[l];
    }
  }
  for (int64_t r0 = 0; r0 < n1; r0 += V) {
    int cnt = n1 - r0 < V ? (int)(n1 - r0) : V;
    for (int64_t j = 0; j < n2; j++)
      for (int l = 0; l < V; l++) {
        cplx c = l < cnt ? tmp[(r0 + l) * n2 + j] : (cplx){0, 0};
        vb[j].re[l] = c.re, vb[j].im[l] = c.im;
      }
    fftv_exec(p->p2, vb, sub);
    for (int64_t k2 = 0; k2 < n2; k2++)
      for (int l = 0; l < cnt; l++) {
        x[r0 + l + n1 * k2].re = vb[k2].re[l];
        x[r0 + l + n1 * k2].im = vb[k2].im[l];
      }
  }
  (void)n;
}

static const fft_plan *plan_new(cj_lw *L, int64_t n, bool allow_big);

/* Bluestein: the chirp, and the transform of its conjugate (computed here, in lane 0) */
static bool plan_bluestein(cj_lw *L, fft_plan *p) {
  int64_t n = p->n;
  p->blue = true;
  p->m = next_pow2(2 * n - 1);
  const fft_plan *sub = plan_new(L, p->m, false);
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
  stockham(sub, tmp, tmp + p->m);
  double inv = 1.0 / (double)p->m;
  for (int64_t k = 0; k < p->m; k++) b[k].re = tmp[k].re[0] * inv, b[k].im = tmp[k].im[0] * inv;
  free(tmp);
  p->sub = sub;
  p->chirp = chirp;
  p->bfft = b;
  p->scratch = p->m + sub->scratch;
  return true;
}

/* the four-step split of n: n1 the largest divisor of n not above sqrt(n) */
static int64_t big_split(int64_t n) {
  int64_t n1 = 1;
  for (int64_t d = 2; d * d <= n; d++)
    if (n % d == 0) n1 = d;
  return n1;
}

static bool plan_four_step(cj_lw *L, fft_plan *p, int64_t n1) {
  int64_t n = p->n, n2 = n / n1;
  int64_t nb = (n2 + V - 1) / V;
  char *raw = cj_lw_alloc(L, sizeof(vc) * (size_t)(nb * n1) + 64);
  p->p1 = plan_new(L, n1, false);
  p->p2 = plan_new(L, n2, false);
  if (!raw || !p->p1 || !p->p2) return false;
  vc *ftw = (vc *)(raw + (64 - (uintptr_t)raw % 64) % 64);
  for (int64_t b = 0; b < nb; b++)
    for (int64_t k1 = 0; k1 < n1; k1++)
      for (int l = 0; l < V; l++) {
        cplx w = cexpi_frac(k1 * (b * V + l), n);
        ftw[b * n1 + k1].re[l] = w.re, ftw[b * n1 + k1].im[l] = w.im;
      }
  p->big = true;
  p->n1 = n1;
  p->n2 = n2;
  p->ftw = ftw;
  int64_t s = p->p1->scratch > p->p2->scratch ? p->p1->scratch : p->p2->scratch;
  p->scratch = (n * (int64_t)sizeof(cplx) + (int64_t)sizeof(vc) - 1) / (int64_t)sizeof(vc) +
               (n1 > n2 ? n1 : n2) + s;
  return true;
}

static const fft_plan *plan_new(cj_lw *L, int64_t n, bool allow_big) {
  fft_plan *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return NULL;
  memset(p, 0, sizeof *p);
  p->n = n;
  if (n <= 1) return p;
  if (!factorize(n, p->radix, &p->nst)) return plan_bluestein(L, p) ? p : NULL;
  if (allow_big && n >= BIG_MIN && big_split(n) >= 16)
    return plan_four_step(L, p, big_split(n)) ? p : NULL;
  int64_t ns = 1;
  for (int s = 0; s < p->nst; s++) {
    int R = p->radix[s];
    cplx *tw = cj_lw_alloc(L, sizeof(cplx) * (size_t)(ns * R));
    if (!tw) return NULL;
    for (int64_t k = 0; k < ns; k++)
      for (int r = 0; r < R; r++) tw[k * R + r] = cexpi_frac(k * r, ns * R);
    p->tw[s] = tw;
    if (R > 4 && R != 8) {
      double *cs = cj_lw_alloc(L, sizeof(double) * (size_t)(2 * R));
      if (!cs) return NULL;
      for (int j = 0; j < R; j++) {
        cplx c = cexpi_frac(j, R);
        cs[2 * j] = c.re, cs[2 * j + 1] = -c.im;
      }
      p->cs[s] = cs;
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


/* ======================================================================== even real lengths */

/* after a complex transform Z of length h = n / 2 of the pairs (x[2k], x[2k+1]): X[k] and
 * X[h - k] from Z[k] and Z[h - k] (u, v):
 *   X[k] = E + w^k O,  E = (u + conj v) / 2,  O = -i (u - conj v) / 2 */
FFT_INLINE void rpost_one(vc *out, const vc *u, const vc *v, cplx w) {
  vc e = {0.5 * (u->re + v->re), 0.5 * (u->im - v->im)};
  vc o = {0.5 * (u->im + v->im), -0.5 * (u->re - v->re)};
  cmulw(&o, w);
  out->re = e.re + o.re, out->im = e.im + o.im;
}

/* x[0..h-1] holds Z; on return x[0..h] holds X[0..h]; tw[k] = exp(-2 pi i k / n) */
FFT_CLONES static void rfft_post(const cplx *tw, vc *x, int64_t h) {
  vc z0 = x[0];
  vd zero = {0};
  x[0].re = z0.re + z0.im, x[0].im = zero;
  x[h].re = z0.re - z0.im, x[h].im = zero;
  for (int64_t k = 1; 2 * k <= h; k++) {
    vc a = x[k], b = x[h - k];
    rpost_one(&x[k], &a, &b, tw[k]);
    if (k != h - k) rpost_one(&x[h - k], &b, &a, tw[h - k]);
  }
}

/* the inverse split, conjugated for conj(FFT(conj .)): Z'[k] = conj(E + i w^-k D),
 * E = u + conj v, D = u - conj v */
FFT_INLINE void ipre_one(vc *out, const vc *u, const vc *v, cplx w) {
  vd er = u->re + v->re, ei = u->im - v->im;
  vc o = {u->re - v->re, u->im + v->im};
  w.im = -w.im;
  cmulw(&o, w);
  out->re = er - o.im;
  out->im = -(ei + o.re);
}

/* x[0..h] holds X[0..h] (the imaginary parts of X[0] and X[h] are ignored); on return x[0..h-1]
 * holds conj of the half-length spectrum whose forward transform, conjugated, is
 * n * (x[2m] + i x[2m+1]) of the inverse */
FFT_CLONES static void irfft_pre(const cplx *tw, vc *x, int64_t h) {
  vd a0 = x[0].re, ah = x[h].re;
  x[0].re = a0 + ah;
  x[0].im = ah - a0;
  for (int64_t k = 1; 2 * k <= h; k++) {
    vc a = x[k], b = x[h - k];
    ipre_one(&x[k], &a, &b, tw[k]);
    if (k != h - k) ipre_one(&x[h - k], &b, &a, tw[h - k]);
  }
}

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
  const float *cs;          /* its cos/sin table */
  double scale;             /* IFFT / IRFFT: 1 / prod(len) */
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
  int64_t off[V];
  int64_t es;
} lend;

static inline double ld(bool f32, const char *b, int64_t i) {
  return f32 ? (double)((const float *)b)[i] : ((const double *)b)[i];
}

static inline void st(bool f32, char *b, int64_t i, double v) {
  if (f32)
    ((float *)b)[i] = (float)v;
  else
    ((double *)b)[i] = v;
}

/* complex lines in vector layout, of element type T: the lanes side by side in memory
 * (contiguous offsets, a strided axis) or each line contiguous (es == 1, the last axis) */
#define FFT_CPLX_COPY(T, TO_D)                                                                     \
  if (side) {                                                                                      \
    for (int64_t k = 0; k < n; k++) {                                                              \
      T *q = (T *)s->base + 2 * (s->off[0] + k * s->es);                                           \
      double *e = d + k * 2 * V;                                                                   \
      for (int j = 0; j < V; j++) {                                                                \
        if (TO_D)                                                                                  \
          e[j] = sre * q[2 * j], e[V + j] = sim * q[2 * j + 1];                                    \
        else                                                                                       \
          q[2 * j] = (T)(sre * e[j]), q[2 * j + 1] = (T)(sim * e[V + j]);                          \
      }                                                                                            \
    }                                                                                              \
  } else {                                                                                         \
    T *q = (T *)s->base + 2 * (s->off[0] + k0);                                                    \
    int64_t lo[V];                                                                                 \
    for (int j = 0; j < V; j++) lo[j] = 2 * (s->off[j] - s->off[0]);                               \
    for (int64_t k = k0; k < n; k++, q += 2) {                                                     \
      double *e = d + k * 2 * V;                                                                   \
      for (int j = 0; j < V; j++) {                                                                \
        if (TO_D)                                                                                  \
          e[j] = sre * q[lo[j]], e[V + j] = sim * q[lo[j] + 1];                                    \
        else                                                                                       \
          q[lo[j]] = (T)(sre * e[j]), q[lo[j] + 1] = (T)(sim * e[V + j]);                          \
      }                                                                                            \
    }                                                                                              \
  }

typedef float vf8 __attribute__((vector_size(8 * sizeof(float))));
typedef long long vi8 __attribute__((vector_size(8 * sizeof(long long))));
/* lanes of two 8-lane vectors picked by constant indices (0..7 the first, 8..15 the second) */
#ifdef __clang__
#define SHUF8(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define SHUF8(a, b, ...) __builtin_shuffle(a, b, (vi8){__VA_ARGS__})
#endif

/* r[j] (row j) becomes column j of the 8 x 8 matrix in place */
FFT_INLINE void transpose8(vd *r) {
  vd t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = SHUF8(r[i], r[i + 1], 0, 8, 2, 10, 4, 12, 6, 14);
    t[i + 1] = SHUF8(r[i], r[i + 1], 1, 9, 3, 11, 5, 13, 7, 15);
  }
  for (int i = 0; i < 8; i += 4)
    for (int c = 0; c < 2; c++) {
      u[i + c] = SHUF8(t[i + c], t[i + c + 2], 0, 1, 8, 9, 4, 5, 12, 13);
      u[i + c + 2] = SHUF8(t[i + c], t[i + c + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    }
  for (int c = 0; c < 4; c++) {
    r[c] = SHUF8(u[c], u[c + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    r[c + 4] = SHUF8(u[c], u[c + 4], 4, 5, 6, 7, 12, 13, 14, 15);
  }
}

/* V = 8 complex lines, each contiguous in memory at q + lo[j] (element type f32 or f64), to or
 * from vector layout d, 8 elements at a time (8 x 8 transposes); returns the elements done */
FFT_INLINE int64_t copy_transposed(double *d, int64_t n, bool f32, char *base, const int64_t *off,
                                   double sre, double sim, bool to_d) {
  _Static_assert(V == 8, "copy_transposed moves 8 x 8 blocks");
  size_t es = f32 ? sizeof(float) : sizeof(double);
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    vd re[8], im[8];
    vc *e = (vc *)d + k;
    if (to_d) {
      for (int j = 0; j < 8; j++) {
        const char *p = base + (size_t)(2 * (off[j] + k)) * es;
        vd a, b;
        if (f32) {
          vf8 fa, fb;
          memcpy(&fa, p, sizeof fa), memcpy(&fb, p + sizeof fa, sizeof fb);
          a = __builtin_convertvector(fa, vd), b = __builtin_convertvector(fb, vd);
        } else {
          memcpy(&a, p, sizeof a), memcpy(&b, p + sizeof a, sizeof b);
        }
        re[j] = SHUF8(a, b, 0, 2, 4, 6, 8, 10, 12, 14) * sre;
        im[j] = SHUF8(a, b, 1, 3, 5, 7, 9, 11, 13, 15) * sim;
      }
      transpose8(re), transpose8(im);
      for (int c = 0; c < 8; c++) e[c].re = re[c], e[c].im = im[c];
    } else {
      for (int c = 0; c < 8; c++) re[c] = e[c].re * sre, im[c] = e[c].im * sim;
      transpose8(re), transpose8(im);
      for (int j = 0; j < 8; j++) {
        char *p = base + (size_t)(2 * (off[j] + k)) * es;
        vd a = SHUF8(re[j], im[j], 0, 8, 1, 9, 2, 10, 3, 11);
        vd b = SHUF8(re[j], im[j], 4, 12, 5, 13, 6, 14, 7, 15);
        if (f32) {
          vf8 fa = __builtin_convertvector(a, vf8), fb = __builtin_convertvector(b, vf8);
          memcpy(p, &fa, sizeof fa), memcpy(p + sizeof fa, &fb, sizeof fb);
        } else {
          memcpy(p, &a, sizeof a), memcpy(p + sizeof a, &b, sizeof b);
        }
      }
    }
  }
  return k;
}

/* the common case of gather and scatter: V complex lines in vector layout, either side by side
 * or each contiguous; false if the block is not such a case */
FFT_CLONES static bool copy_fast(double *d, lay y, int cnt, int64_t n, const lend *s, double sre,
                                 double sim, bool to_d) {
  if (cnt != V || y.lanes != V || (s->dt != CJ_C64 && s->dt != CJ_C128)) return false;
  bool side = true;
  for (int j = 1; j < V; j++) side = side && s->off[j] == s->off[0] + j;
  if (!side && s->es != 1) return false;
  int64_t k0 = side ? 0 : copy_transposed(d, n, s->dt == CJ_C64, s->base, s->off, sre, sim, to_d);
  if (s->dt == CJ_C64) {
    if (to_d) {
      FFT_CPLX_COPY(float, 1)
    } else {
      FFT_CPLX_COPY(float, 0)
    }
  } else {
    if (to_d) {
      FFT_CPLX_COPY(double, 1)
    } else {
      FFT_CPLX_COPY(double, 0)
    }
  }
  return true;
}

/* n elements of cnt lines into d (lanes past cnt zeroed), imaginary parts times sim */
static void gather(double *d, lay y, int cnt, int64_t n, const lend *s, int mode, double sim) {
  if (mode == M_CPLX && copy_fast(d, y, cnt, n, s, 1.0, sim, true)) return;
  bool f32 = s->dt == CJ_F32 || s->dt == CJ_C64;
  int64_t mul = mode == M_CPLX ? 2 : 1, eso = mode == M_PAIRS ? 2 * s->es : s->es;
  int64_t di = mode == M_CPLX ? 1 : s->es;
  if (cnt < y.lanes)
    for (int64_t k = 0; k < n; k++)
      for (int j = cnt; j < y.lanes; j++) d[k * y.es + j] = d[k * y.es + y.ims + j] = 0;
  for (int64_t k = 0; k < n; k++) {
    double *e = d + k * y.es;
    for (int j = 0; j < cnt; j++) {
      int64_t ri = mul * (s->off[j] + k * eso);
      e[j] = ld(f32, s->base, ri);
      e[y.ims + j] = mode == M_REAL ? 0.0 : sim * ld(f32, s->base, ri + di);
    }
  }
}

/* n elements of cnt lines from d, real parts times sre and imaginary ones times sim */
static void scatter(const double *d, lay y, int cnt, int64_t n, const lend *s, int mode,
                    double sre, double sim) {
  if (mode == M_CPLX && copy_fast((double *)d, y, cnt, n, s, sre, sim, false)) return;
  bool f32 = s->dt == CJ_F32 || s->dt == CJ_C64;
  int64_t mul = mode == M_CPLX ? 2 : 1, eso = mode == M_PAIRS ? 2 * s->es : s->es;
  int64_t di = mode == M_CPLX ? 1 : s->es;
  for (int64_t k = 0; k < n; k++) {
    const double *e = d + k * y.es;
    for (int j = 0; j < cnt; j++) {
      int64_t ri = mul * (s->off[j] + k * eso);
      st(f32, s->base, ri, sre * e[j]);
      if (mode != M_REAL) st(f32, s->base, ri + di, sim * e[y.ims + j]);
    }
  }
}

/* line l of axis ax: its offset in work / operand / result elements */
static void line_offsets(const fft_params *p, int ax, int64_t l, int64_t *woff, int64_t *ioff,
                         int64_t *ooff) {
  int64_t per = p->wsize / p->sdim[ax];
  int64_t bi = l / per;
  int64_t r = l % per, wo = 0, io = 0, oo = 0;
  for (int a = p->nax - 1; a >= 0; a--) {
    if (a == ax) continue;
    int64_t c = r % p->sdim[a];
    r /= p->sdim[a];
    wo += c * p->wstr[a];
    io += c * p->istr[a];
    oo += c * p->ostr[a];
  }
  *woff = bi * p->wsize + wo;
  *ioff = bi * p->ibatch + io;
  *ooff = bi * p->obatch + oo;
}

/* what a pass does to each line */
enum { K_CPLX, K_RFULL, K_RHALF, K_RPRIME, K_IFULL, K_IHALF };

static int pass_kind(const fft_params *p, int ax) {
  if (ax != p->nax - 1 || p->type == T_FFT || p->type == T_IFFT) return K_CPLX;
  if (p->type == T_RFFT) return p->f32prime ? K_RPRIME : p->hplan ? K_RHALF : K_RFULL;
  return p->hplan ? K_IHALF : K_IFULL;
}

static void transform(const fft_plan *pl, vc *buf, vc *scr) {
  if (pl->big)
    four_step(pl, (cplx *)buf, scr);
  else
    fftv_exec(pl, buf, scr);
}

/* one block of cnt lines: read from s, transform, write to t */
static void do_block(const fft_run *R, int kind, lay y, vc *buf, vc *scr, int cnt, const lend *s,
                     const lend *t) {
  const fft_params *p = R->p;
  int ax = R->ax;
  const fft_plan *pl = p->plan[ax];
  int64_t n = p->len[ax], m = p->sdim[ax], h = n / 2;
  bool inverse = p->type == T_IFFT || p->type == T_IRFFT;
  double sc = inverse && R->write_out ? p->scale : 1.0, sg = inverse ? -1.0 : 1.0;
  double *d = (double *)buf;
  switch (kind) {
    case K_CPLX:
      gather(d, y, cnt, n, s, M_CPLX, sg);
      transform(pl, buf, scr);
      scatter(d, y, cnt, n, t, M_CPLX, sc, sg * sc);
      break;
    case K_RFULL:
      gather(d, y, cnt, n, s, M_REAL, 1.0);
      transform(pl, buf, scr);
      scatter(d, y, cnt, m, t, M_CPLX, 1.0, 1.0);
      break;
    case K_RHALF:
      gather(d, y, cnt, h, s, M_PAIRS, 1.0);
      fftv_exec(p->hplan, buf, scr);
      rfft_post(p->htw, buf, h);
      scatter(d, y, cnt, h + 1, t, M_CPLX, 1.0, 1.0);
      break;
    case K_RPRIME:
      for (int j = 0; j < cnt; j++) {
        float xf[136];
        cplx o[136];
        for (int64_t k = 0; k < n; k++) xf[k] = ((const float *)s->base)[s->off[j] + k * s->es];
        rdft_prime_f32(xf, (int)n, p->cs, o);
        for (int64_t k = 0; k < m; k++) d[k * y.es + j] = o[k].re, d[k * y.es + y.ims + j] = o[k].im;
      }
      scatter(d, y, cnt, m, t, M_CPLX, 1.0, 1.0);
      break;
    case K_IFULL:
      /* conj X[k], k < m; past m the Hermitian half: conj X[n - k] conjugated */
      gather(d, y, cnt, m, s, M_CPLX, -1.0);
      for (int64_t k = m; k < n; k++)
        for (int j = 0; j < y.lanes; j++) {
          d[k * y.es + j] = d[(n - k) * y.es + j];
          d[k * y.es + y.ims + j] = -d[(n - k) * y.es + y.ims + j];
        }
      transform(pl, buf, scr);
      scatter(d, y, cnt, n, t, M_REAL, sc, 0.0);
      break;
    default: /* K_IHALF */
      gather(d, y, cnt, h + 1, s, M_CPLX, 1.0);
      irfft_pre(p->htw, buf, h);
      fftv_exec(p->hplan, buf, scr);
      scatter(d, y, cnt, h, t, M_PAIRS, sc, -sc);
  }
}

static void pass_body(void *vctx, int64_t b, int64_t e) {
  fft_run *R = vctx;
  const fft_params *p = R->p;
  int ax = R->ax;
  cj_tls_area *area = cj_tls_claim(R->ctx);
  if (!area) return;
  int kind = pass_kind(p, ax);
  bool scalar = (kind == K_CPLX || kind == K_RFULL || kind == K_IFULL) && p->plan[ax]->big;
  lay y = scalar ? (lay){2, 1, 1} : (lay){2 * V, V, V};
  int64_t n = p->len[ax];
  vc *buf = (vc *)area->mem;
  vc *scr = buf + (scalar ? (n + 2) / 8 + 1 : n + 2);
  lend s = {R->read_in ? p->it : CJ_C128, R->read_in ? (char *)R->in : R->work, {0},
            R->read_in ? p->istr[ax] : p->wstr[ax]};
  lend t = {R->write_out ? p->ot : CJ_C128, R->write_out ? R->out : R->work, {0},
            R->write_out ? p->ostr[ax] : p->wstr[ax]};
  for (int64_t l = b; l < e;) {
    int cnt = e - l < y.lanes ? (int)(e - l) : y.lanes;
    for (int j = 0; j < cnt; j++) {
      int64_t wo, io, oo;
      line_offsets(p, ax, l + j, &wo, &io, &oo);
      s.off[j] = R->read_in ? io : wo;
      t.off[j] = R->write_out ? oo : wo;
    }
    do_block(R, kind, y, buf, scr, cnt, &s, &t);
    l += cnt;
  }
  cj_tls_release(R->ctx, area);
}

static void run_lines(fft_run *R, int ax, bool read_in, bool write_out) {
  const fft_params *p = R->p;
  R->ax = ax;
  R->read_in = read_in;
  R->write_out = write_out;
  int64_t lines = p->batch * (p->wsize / p->sdim[ax]);
  double work = (double)lines * (double)p->len[ax] * 8.0;
  int64_t grain = ((int64_t)(16384.0 / ((double)p->len[ax] * 8.0 + 1.0)) / V + 1) * V;
  if (R->ctx->pool && cj_pool_size(R->ctx->pool) > 1 && work > 65536.0)
    cj_pool_parallel_for(R->ctx->pool, lines, grain, pass_body, R);
  else
    pass_body(R, 0, lines);
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
      pass_body(&R, bi * per, (bi + 1) * per);
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
    if (!pl) pl = plan_new(L, len[a], true);
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
    const fft_plan *hp = plan_new(L, n / 2, false);
    cplx *tw = cj_lw_alloc(L, sizeof(cplx) * (size_t)(n / 2 + 1));
    if (!hp || !tw) return cj_oom();
    for (int64_t k = 0; k <= n / 2; k++) tw[k] = cexpi_frac(k, n);
    p->hplan = hp;
    p->htw = tw;
    int64_t need = n + 2 + hp->scratch;
    if (need > tls) tls = need;
  }
  cj_lw_set_tls_bytes(L, (int64_t)sizeof(vc) * tls + 128);
  double lg = 0;
  for (int a = 0; a < nax; a++) lg += log2((double)len[a] + 1.0);
  cj_lw_add_cost(L, 5.0 * (double)p->batch * (double)p->wsize * lg, 0);
  /* between axes the values live in a complex f64 work buffer of the spectral shape */
  int64_t wbytes = nax > 1 ? (int64_t)sizeof(cplx) * p->batch * p->wsize : 0;
  int32_t work = cj_lw_new_buf(L, wbytes, CJ_BK_ARENA);
  int32_t outs[2] = {r.buf, work};
  if (!cj_lw_emit(L, op, k_fft, p, 1, &x.buf, 2, outs)) return cj_oom();
  return NULL;
}
