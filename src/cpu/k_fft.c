/* cjrt: fft (FFT, IFFT, RFFT, IRFFT over the last 1 to 3 dimensions).
 *
 * One step per op. Each axis is transformed line by line (neighbouring lines of strided axes in
 * blocks), lines in parallel on the client's pool; between axes the values live in the result
 * (complex, of the spectral shape) or, for IRFFT, in a complex f64 work buffer:
 *   FFT    last axis first (reading the operand), then the earlier axes;
 *   IFFT   the axes in order, the last one writing the result (scaled by 1/N once);
 *   RFFT   the last axis as a real transform (reading the operand), then the earlier axes;
 *   IRFFT  the earlier axes, then the last one as a complex-to-real transform into the result.
 * Every 1-D transform is computed in f64 (f32 data too, rounded once on the way out): a
 * mixed-radix Stockham FFT with radix 4, 2, 3 and direct odd-prime butterflies up to 61, and
 * Bluestein's algorithm (a power-of-two convolution) for lengths with a larger prime factor.
 * Plans (factors, twiddles computed in long double, Bluestein chirps and their transforms) are
 * built at compile time into the program.
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

enum { FFT_MAXF = 64, MAX_DIRECT_PRIME = 61, LB = 8 /* lines per block on strided axes */ };

/* ======================================================================== 1-D plans */

typedef struct fft_plan {
  int64_t n;
  int nst;                     /* Stockham stages */
  int radix[FFT_MAXF];
  const cplx *tw[FFT_MAXF];    /* per stage: Ns * R twiddles exp(-2 pi i k r / (Ns R)) */
  const cplx *roots[FFT_MAXF]; /* per stage with R > 4: exp(-2 pi i j / R), j < R */
  /* Bluestein */
  bool blue;
  int64_t m;
  const cplx *chirp;           /* n: exp(-i pi k^2 / n) */
  const cplx *bfft;            /* m: FFT of the conjugate chirp, circularly placed, times 1/m */
  const struct fft_plan *sub;  /* the length-m plan */
  int64_t scratch;             /* cplx elements of scratch an execution needs */
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

/* factors into radices 4, 2, 3, then odd primes; returns false if a prime factor is larger than
 * MAX_DIRECT_PRIME */
static bool factorize(int64_t n, int *radix, int *nst) {
  int k = 0;
  while (n % 4 == 0 && k < FFT_MAXF) radix[k++] = 4, n /= 4;
  while (n % 2 == 0 && k < FFT_MAXF) radix[k++] = 2, n /= 2;
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

static void fft_exec(const fft_plan *p, cplx *x, cplx *scratch);

static const fft_plan *plan_new(cj_lw *L, int64_t n) {
  fft_plan *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return NULL;
  p->n = n;
  if (n <= 1) return p;
  if (!factorize(n, p->radix, &p->nst)) {
    p->blue = true;
    p->m = next_pow2(2 * n - 1);
    const fft_plan *sub = plan_new(L, p->m);
    cplx *chirp = cj_lw_alloc(L, sizeof(cplx) * (size_t)n);
    cplx *b = cj_lw_alloc(L, sizeof(cplx) * (size_t)p->m);
    cplx *tmp = malloc(sizeof(cplx) * (size_t)(sub ? sub->scratch + 1 : 1));
    if (!sub || !chirp || !b || !tmp) {
      free(tmp);
      return NULL;
    }
    for (int64_t k = 0; k < n; k++) {
      /* exp(-i pi k^2 / n) = exp(-2 pi i (k^2 mod 2n) / 2n) */
      int64_t kk = (int64_t)(((__int128)k * k) % (2 * n));
      chirp[k] = cexpi_frac(kk, 2 * n);
    }
    memset(b, 0, sizeof(cplx) * (size_t)p->m);
    for (int64_t k = 0; k < n; k++) {
      cplx c = {chirp[k].re, -chirp[k].im};
      b[k] = c;
      if (k) b[p->m - k] = c;
    }
    fft_exec(sub, b, tmp);
    double inv = 1.0 / (double)p->m;
    for (int64_t k = 0; k < p->m; k++) b[k].re *= inv, b[k].im *= inv;
    free(tmp);
    p->sub = sub;
    p->chirp = chirp;
    p->bfft = b;
    p->scratch = p->m + sub->scratch;
    return p;
  }
  int64_t ns = 1;
  for (int s = 0; s < p->nst; s++) {
    int R = p->radix[s];
    cplx *tw = cj_lw_alloc(L, sizeof(cplx) * (size_t)(ns * R));
    if (!tw) return NULL;
    for (int64_t k = 0; k < ns; k++)
      for (int r = 0; r < R; r++) tw[k * R + r] = cexpi_frac(k * r, ns * R);
    p->tw[s] = tw;
    if (R > 4) {
      cplx *ro = cj_lw_alloc(L, sizeof(cplx) * (size_t)R);
      if (!ro) return NULL;
      for (int j = 0; j < R; j++) ro[j] = cexpi_frac(j, R);
      p->roots[s] = ro;
    }
    ns *= R;
  }
  p->scratch = n + MAX_DIRECT_PRIME;
  return p;
}

static inline cplx cmul(cplx a, cplx b) {
  cplx c = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  return c;
}

/* Forward transform in place (x: n elements); scratch: p->scratch elements. */
static void fft_exec(const fft_plan *p, cplx *x, cplx *scratch) {
  int64_t n = p->n;
  if (n <= 1) return;
  if (p->blue) {
    int64_t m = p->m;
    cplx *a = scratch;
    for (int64_t k = 0; k < n; k++) a[k] = cmul(x[k], p->chirp[k]);
    memset(a + n, 0, sizeof(cplx) * (size_t)(m - n));
    fft_exec(p->sub, a, scratch + m);
    for (int64_t k = 0; k < m; k++) {
      cplx t = cmul(a[k], p->bfft[k]);
      a[k].re = t.re;
      a[k].im = -t.im; /* conjugate: the inverse transform as a forward one */
    }
    fft_exec(p->sub, a, scratch + m);
    for (int64_t k = 0; k < n; k++) {
      cplx t = {a[k].re, -a[k].im};
      x[k] = cmul(t, p->chirp[k]);
    }
    return;
  }
  /* Stockham autosort: stage s reads src, writes dst; the data ends up back in x */
  cplx *src = x, *dst = scratch + MAX_DIRECT_PRIME, *v = scratch;
  int64_t ns = 1;
  for (int s = 0; s < p->nst; s++) {
    int R = p->radix[s];
    int64_t nr = n / R;
    const cplx *tw = p->tw[s];
    /* butterfly j = g * ns + k (k < ns) reads src[j + r * nr], writes dst[g * ns * R + k + q * ns] */
    for (int64_t g0 = 0; g0 < nr; g0 += ns) {
      const cplx *in = src + g0;
      cplx *out = dst + g0 * R;
      if (R == 2) {
        for (int64_t k = 0; k < ns; k++) {
          cplx a = in[k], b = ns > 1 ? cmul(in[k + nr], tw[2 * k + 1]) : in[k + nr];
          out[k].re = a.re + b.re, out[k].im = a.im + b.im;
          out[k + ns].re = a.re - b.re, out[k + ns].im = a.im - b.im;
        }
      } else if (R == 4) {
        for (int64_t k = 0; k < ns; k++) {
          cplx a = in[k], b = in[k + nr], c = in[k + 2 * nr], e = in[k + 3 * nr];
          if (ns > 1) {
            b = cmul(b, tw[4 * k + 1]);
            c = cmul(c, tw[4 * k + 2]);
            e = cmul(e, tw[4 * k + 3]);
          }
          cplx t0 = {a.re + c.re, a.im + c.im}, t1 = {a.re - c.re, a.im - c.im};
          cplx t2 = {b.re + e.re, b.im + e.im}, t3 = {b.re - e.re, b.im - e.im};
          cplx t3m = {t3.im, -t3.re}; /* -i * t3 */
          out[k].re = t0.re + t2.re, out[k].im = t0.im + t2.im;
          out[k + ns].re = t1.re + t3m.re, out[k + ns].im = t1.im + t3m.im;
          out[k + 2 * ns].re = t0.re - t2.re, out[k + 2 * ns].im = t0.im - t2.im;
          out[k + 3 * ns].re = t1.re - t3m.re, out[k + 3 * ns].im = t1.im - t3m.im;
        }
      } else if (R == 3) {
        static const double s3 = 0.86602540378443864676372317075294;
        for (int64_t k = 0; k < ns; k++) {
          cplx a = in[k], b = in[k + nr], c = in[k + 2 * nr];
          if (ns > 1) {
            b = cmul(b, tw[3 * k + 1]);
            c = cmul(c, tw[3 * k + 2]);
          }
          cplx t1 = {b.re + c.re, b.im + c.im};
          cplx t2 = {a.re - 0.5 * t1.re, a.im - 0.5 * t1.im};
          cplx t3 = {s3 * (b.im - c.im), -s3 * (b.re - c.re)}; /* -i sqrt(3)/2 (b - c) */
          out[k].re = a.re + t1.re, out[k].im = a.im + t1.im;
          out[k + ns].re = t2.re + t3.re, out[k + ns].im = t2.im + t3.im;
          out[k + 2 * ns].re = t2.re - t3.re, out[k + 2 * ns].im = t2.im - t3.im;
        }
      } else {
        const cplx *ro = p->roots[s];
        for (int64_t k = 0; k < ns; k++) {
          for (int r = 0; r < R; r++) v[r] = r ? cmul(in[k + r * nr], tw[k * R + r]) : in[k];
          for (int q = 0; q < R; q++) {
            double re = 0, im = 0;
            int idx = 0;
            for (int r = 0; r < R; r++) {
              cplx w = ro[idx];
              re += v[r].re * w.re - v[r].im * w.im;
              im += v[r].re * w.im + v[r].im * w.re;
              idx += q;
              if (idx >= R) idx -= R;
            }
            out[k + q * ns].re = re;
            out[k + q * ns].im = im;
          }
        }
      }
    }
    cplx *t = src;
    src = dst;
    dst = t;
    ns *= R;
  }
  if (src != x) memcpy(x, src, sizeof(cplx) * (size_t)n);
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

/* x holds n = 2h reals as h complex pairs (x[2k], x[2k+1]); on return x[0..h] is the spectrum
 * X[0..h]. One complex transform of length h, then the even/odd split:
 *   X[k] = E[k] + w^k O[k],  E = (Z[k] + conj Z[h-k]) / 2,  O = -i (Z[k] - conj Z[h-k]) / 2. */
static void rfft_even(const fft_plan *hp, const cplx *tw, cplx *x, cplx *scr) {
  int64_t h = hp->n;
  fft_exec(hp, x, scr);
  cplx z0 = x[0];
  x[0].re = z0.re + z0.im, x[0].im = 0;
  x[h].re = z0.re - z0.im, x[h].im = 0;
  for (int64_t k = 1; 2 * k <= h; k++) {
    cplx a = x[k], b = x[h - k];
    for (int pass = 0; pass < 2; pass++) {
      int64_t kk = pass ? h - k : k;
      cplx u = pass ? b : a, v = pass ? a : b;
      cplx e = {0.5 * (u.re + v.re), 0.5 * (u.im - v.im)};
      cplx o = {0.5 * (u.im + v.im), -0.5 * (u.re - v.re)};
      cplx wo = cmul(tw[kk], o);
      x[kk].re = e.re + wo.re;
      x[kk].im = e.im + wo.im;
      if (kk == h - kk) break;
    }
  }
}

/* x[0..h] holds X[0..h] (the imaginary parts of X[0] and X[h] are ignored); on return x[0..h-1]
 * holds n * (x[2m] + i x[2m+1]) of the inverse (unnormalized, like the full-length inverse). */
static void irfft_even(const fft_plan *hp, const cplx *tw, cplx *x, cplx *scr) {
  int64_t h = hp->n;
  double a0 = x[0].re, ah = x[h].re;
  x[0].re = a0 + ah;
  x[0].im = a0 - ah;
  for (int64_t k = 1; 2 * k <= h; k++) {
    cplx a = x[k], b = x[h - k];
    for (int pass = 0; pass < 2; pass++) {
      int64_t kk = pass ? h - k : k;
      cplx u = pass ? b : a, v = pass ? a : b;
      cplx e = {u.re + v.re, u.im - v.im};           /* u + conj v */
      cplx d = {u.re - v.re, u.im + v.im};           /* u - conj v */
      cplx wc = {tw[kk].re, -tw[kk].im};             /* w^-k */
      cplx o = cmul(d, wc);
      x[kk].re = e.re - o.im;                        /* e + i o */
      x[kk].im = e.im + o.re;
      if (kk == h - kk) break;
    }
  }
  /* the unnormalized inverse of length h: conjugate, forward, conjugate */
  for (int64_t k = 0; k < h; k++) x[k].im = -x[k].im;
  fft_exec(hp, x, scr);
  for (int64_t k = 0; k < h; k++) x[k].im = -x[k].im;
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
  bool work_is_out;         /* complex results hold the intermediate values (else: work) */
  const fft_plan *hplan;    /* even real lengths n: the complex plan of n / 2 */
  const cplx *htw;          /* and exp(-2 pi i k / n), k <= n / 2 */
  const float *cs;          /* its cos/sin table */
  double scale;             /* IFFT / IRFFT: 1 / prod(len) */
  int64_t tls;              /* cplx elements of per-thread scratch */
} fft_params;

typedef struct fft_run {
  const fft_params *p;
  const char *in;
  char *out;
  cplx *work;
  int ax;       /* the axis of this pass */
  bool read_in, write_out; /* this pass reads the operand / writes the result (else work) */
  cj_exec_ctx *ctx;
} fft_run;

static inline cplx load_c(cj_dtype dt, const char *base, int64_t i) {
  cplx c;
  if (dt == CJ_C64) {
    c.re = ((const float *)base)[2 * i];
    c.im = ((const float *)base)[2 * i + 1];
  } else {
    c.re = ((const double *)base)[2 * i];
    c.im = ((const double *)base)[2 * i + 1];
  }
  return c;
}

static inline void store_c(cj_dtype dt, char *base, int64_t i, cplx c) {
  if (dt == CJ_C64) {
    ((float *)base)[2 * i] = (float)c.re;
    ((float *)base)[2 * i + 1] = (float)c.im;
  } else {
    ((double *)base)[2 * i] = c.re;
    ((double *)base)[2 * i + 1] = c.im;
  }
}

/* line l of axis ax: its batch element, and its offset in work / operand / result elements */
static void line_offsets(const fft_params *p, int ax, int64_t l, int64_t *bi, int64_t *woff,
                         int64_t *ioff, int64_t *ooff) {
  int64_t per = p->wsize / p->sdim[ax];
  *bi = l / per;
  int64_t r = l % per, wo = 0, io = 0, oo = 0;
  for (int a = p->nax - 1; a >= 0; a--) {
    if (a == ax) continue;
    int64_t c = r % p->sdim[a];
    r /= p->sdim[a];
    wo += c * p->wstr[a];
    io += c * p->istr[a];
    oo += c * p->ostr[a];
  }
  *woff = *bi * p->wsize + wo;
  *ioff = *bi * p->ibatch + io;
  *ooff = *bi * p->obatch + oo;
}

static void pass_body(void *vctx, int64_t b, int64_t e) {
  fft_run *R = vctx;
  const fft_params *p = R->p;
  int ax = R->ax, last = p->nax - 1;
  cj_tls_area *area = cj_tls_claim(R->ctx);
  if (!area) return;
  const fft_plan *pl = p->plan[ax];
  int64_t n = p->len[ax], m = p->sdim[ax], ldl = n + 2;
  cplx *line = (cplx *)area->mem, *scr = line + LB * ldl;
  bool inverse = p->type == T_IFFT || p->type == T_IRFFT;
  if (ax != last) {
    /* a strided axis: up to LB neighbouring lines at once, so that every memory access moves
     * LB consecutive elements (the last axis is contiguous in work, operand and result) */
    int64_t per = p->wsize / p->sdim[ax];
    for (int64_t l = b; l < e;) {
      int64_t coord = (l % per) % p->sdim[last];
      int64_t cnt = p->sdim[last] - coord;
      if (cnt > e - l) cnt = e - l;
      if (cnt > LB) cnt = LB;
      int64_t bi, wo, io, oo;
      line_offsets(p, ax, l, &bi, &wo, &io, &oo);
      cplx *w = R->work + wo;
      int64_t ws = p->wstr[ax];
      for (int64_t k = 0; k < n; k++)
        for (int64_t j = 0; j < cnt; j++)
          line[j * ldl + k] = R->read_in      ? load_c(p->it, R->in, io + k * p->istr[ax] + j)
                              : p->work_is_out ? load_c(p->ot, R->out, oo + k * p->ostr[ax] + j)
                                               : w[k * ws + j];
      for (int64_t j = 0; j < cnt; j++) {
        cplx *ln = line + j * ldl;
        if (inverse)
          for (int64_t k = 0; k < n; k++) ln[k].im = -ln[k].im;
        fft_exec(pl, ln, scr);
        if (inverse)
          for (int64_t k = 0; k < n; k++) ln[k].im = -ln[k].im;
      }
      if (R->write_out || p->work_is_out) {
        double sc = inverse && R->write_out ? p->scale : 1.0;
        for (int64_t k = 0; k < n; k++)
          for (int64_t j = 0; j < cnt; j++) {
            cplx c = {line[j * ldl + k].re * sc, line[j * ldl + k].im * sc};
            store_c(p->ot, R->out, oo + k * p->ostr[ax] + j, c);
          }
      } else {
        for (int64_t k = 0; k < n; k++)
          for (int64_t j = 0; j < cnt; j++) w[k * ws + j] = line[j * ldl + k];
      }
      l += cnt;
    }
    cj_tls_release(R->ctx, area);
    return;
  }
  for (int64_t l = b; l < e; l++) {
    int64_t bi, wo, io, oo;
    line_offsets(p, ax, l, &bi, &wo, &io, &oo);
    cplx *w = R->work + wo;
    int64_t ws = p->wstr[ax];
    bool transformed = false;
    /* gather */
    if (R->read_in && p->type == T_RFFT) {
      if (p->f32prime) {
        float xf[136];
        for (int64_t k = 0; k < n; k++) xf[k] = ((const float *)R->in)[io + k * p->istr[ax]];
        rdft_prime_f32(xf, (int)n, p->cs, line);
        transformed = true;
      } else if (p->hplan) {
        double *lr = (double *)line; /* n reals as n / 2 complex pairs */
        for (int64_t k = 0; k < n; k++)
          lr[k] = p->it == CJ_F32 ? ((const float *)R->in)[io + k * p->istr[ax]]
                                  : ((const double *)R->in)[io + k * p->istr[ax]];
        rfft_even(p->hplan, p->htw, line, scr);
        transformed = true;
      } else {
        for (int64_t k = 0; k < n; k++) {
          double v = p->it == CJ_F32 ? ((const float *)R->in)[io + k * p->istr[ax]]
                                     : ((const double *)R->in)[io + k * p->istr[ax]];
          line[k].re = v;
          line[k].im = 0;
        }
      }
    } else if (p->type == T_IRFFT && ax == last) {
      for (int64_t k = 0; k < m && k < n; k++)
        line[k] = R->read_in ? load_c(p->it, R->in, io + k * p->istr[ax]) : w[k * ws];
      if (p->hplan) {
        irfft_even(p->hplan, p->htw, line, scr);
        /* n reals, as n / 2 pairs, into the result */
        const double *lr = (const double *)line;
        for (int64_t k = 0; k < n; k++) {
          double v = lr[k] * p->scale;
          if (p->ot == CJ_F32)
            ((float *)R->out)[oo + k * p->ostr[ax]] = (float)v;
          else
            ((double *)R->out)[oo + k * p->ostr[ax]] = v;
        }
        continue;
      }
      /* the Hermitian spectrum: X[n - k] = conj(X[k]) */
      for (int64_t k = m; k < n; k++) {
        line[k].re = line[n - k].re;
        line[k].im = -line[n - k].im;
      }
    } else if (R->read_in) {
      for (int64_t k = 0; k < n; k++) line[k] = load_c(p->it, R->in, io + k * p->istr[ax]);
    } else if (p->work_is_out) {
      for (int64_t k = 0; k < n; k++) line[k] = load_c(p->ot, R->out, oo + k * p->ostr[ax]);
    } else {
      for (int64_t k = 0; k < n; k++) line[k] = w[k * ws];
    }
    /* transform (inverse: conjugate, forward, conjugate) */
    if (!transformed) {
      if (inverse)
        for (int64_t k = 0; k < n; k++) line[k].im = -line[k].im;
      fft_exec(pl, line, scr);
      if (inverse)
        for (int64_t k = 0; k < n; k++) line[k].im = -line[k].im;
    }
    /* scatter */
    if (R->write_out || p->work_is_out) {
      double s = inverse && R->write_out ? p->scale : 1.0;
      if (p->type == T_IRFFT) {
        for (int64_t k = 0; k < n; k++) {
          double v = line[k].re * s;
          if (p->ot == CJ_F32)
            ((float *)R->out)[oo + k * p->ostr[ax]] = (float)v;
          else
            ((double *)R->out)[oo + k * p->ostr[ax]] = v;
        }
      } else {
        for (int64_t k = 0; k < m; k++) {
          cplx c = {line[k].re * s, line[k].im * s};
          store_c(p->ot, R->out, oo + k * p->ostr[ax], c);
        }
      }
    } else {
      for (int64_t k = 0; k < m; k++) w[k * ws] = line[k];
    }
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
  int64_t grain = (int64_t)(16384.0 / ((double)p->len[ax] * 8.0 + 1.0)) + 1;
  if (R->ctx->pool && cj_pool_size(R->ctx->pool) > 1 && work > 65536.0)
    cj_pool_parallel_for(R->ctx->pool, lines, grain, pass_body, R);
  else
    pass_body(R, 0, lines);
}

static CJ_MUST_USE cj_status k_fft(cj_exec_ctx *ctx, const cj_step *st) {
  const fft_params *p = st->params;
  fft_run R = {p, CJ_PTR(ctx, st->in[0]), CJ_PTR(ctx, st->out[0]),
               (cplx *)CJ_PTR(ctx, st->out[1]), 0, false, false, ctx};
  int last = p->nax - 1;
  if (p->type == T_FFT || p->type == T_RFFT) /* the last axis first, then the earlier ones */
    for (int ax = last; ax >= 0; ax--) run_lines(&R, ax, ax == last, ax == 0);
  else /* the axes in order */
    for (int ax = 0; ax <= last; ax++) run_lines(&R, ax, ax == 0, ax == last);
  return NULL;
}

cj_status lower_fft(cj_lw *L, cj_op *op) {
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
    if (!pl) pl = plan_new(L, len[a]);
    if (!pl) return cj_oom();
    p->plan[a] = pl;
    int64_t need = LB * (len[a] + 2) + pl->scratch + 8;
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
  if (real && n >= 4 && n % 2 == 0 && !p->f32prime) {
    const fft_plan *hp = plan_new(L, n / 2);
    cplx *tw = cj_lw_alloc(L, sizeof(cplx) * (size_t)(n / 2 + 1));
    if (!hp || !tw) return cj_oom();
    for (int64_t k = 0; k <= n / 2; k++) tw[k] = cexpi_frac(k, n);
    p->hplan = hp;
    p->htw = tw;
    int64_t need = LB * (n + 2) + hp->scratch + 8;
    if (need > tls) tls = need;
  }
  p->tls = tls;
  cj_lw_set_tls_bytes(L, (int64_t)sizeof(cplx) * tls + 64);
  double lg = 0;
  for (int a = 0; a < nax; a++) lg += log2((double)len[a] + 1.0);
  cj_lw_add_cost(L, 5.0 * (double)p->batch * (double)p->wsize * lg, 0);
  /* between axes the intermediate values live in the result (complex, of the spectral shape),
   * or for IRFFT in a complex f64 work buffer */
  p->work_is_out = type != T_IRFFT;
  int64_t wbytes = nax > 1 && type == T_IRFFT ? (int64_t)sizeof(cplx) * p->batch * p->wsize : 0;
  int32_t work = cj_lw_new_buf(L, wbytes, CJ_BK_ARENA);
  int32_t outs[2] = {r.buf, work};
  if (!cj_lw_emit(L, op, k_fft, p, 1, &x.buf, 2, outs)) return cj_oom();
  return NULL;
}
