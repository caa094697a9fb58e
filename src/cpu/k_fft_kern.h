/* cjrt: the kernels of k_fft.c (butterflies, Stockham passes, Bluestein, four-step, the real
 * pre/post passes, the copies into and out of vector layout, one block of lines) for one element
 * type and lane count. k_fft.c includes this file once per variant, after defining:
 *   FT        the element type (double or float), FL the lanes of a vector (4, 8 or 16: lines
 *             per block), FN(x) x with the variant's suffix, VR/VC the vector and the complex vector
 *             type names, VI an integer vector type of FL lanes as wide as FT (shuffle masks),
 *   FFT_F32   1 for float: the plan's f32 tables, a complex f32 work buffer.
 * Everything it defines from those (and those) is undefined at its end.
 * The file is written once and compiled per variant: no second copy of the code. */

#if FFT_F32
#define CX cplxf
#define WORK_DT CJ_C64
#define PTW(p, s) ((p)->twf[s])
#define PCS(p, s) ((p)->csf[s])
#define PCHIRP(p) ((p)->chirpf)
#define PBFFT(p) ((p)->bfftf)
#define PFTW(p) ((p)->ftwf)
#define PHTW(p) ((p)->htwf)
#else
#define CX cplx
#define WORK_DT CJ_C128
#define PTW(p, s) ((p)->tw[s])
#define PCS(p, s) ((p)->cs[s])
#define PCHIRP(p) ((p)->chirp)
#define PBFFT(p) ((p)->bfft)
#define PFTW(p) ((p)->ftw)
#define PHTW(p) ((p)->htw)
#endif
#if FL == 4
#define EVENS 0, 2, 4, 6
#define ODDS 1, 3, 5, 7
#define INTERLEAVE_LO 0, 4, 1, 5
#define INTERLEAVE_HI 2, 6, 3, 7
#define TSTAGES                                                                                    \
  TSTAGE(1, (0, 4, 2, 6), (1, 5, 3, 7))                                                            \
  TSTAGE(2, (0, 1, 4, 5), (2, 3, 6, 7))
#elif FL == 8
#define EVENS 0, 2, 4, 6, 8, 10, 12, 14
#define ODDS 1, 3, 5, 7, 9, 11, 13, 15
#define INTERLEAVE_LO 0, 8, 1, 9, 2, 10, 3, 11
#define INTERLEAVE_HI 4, 12, 5, 13, 6, 14, 7, 15
#define TSTAGES                                                                                    \
  TSTAGE(1, (0, 8, 2, 10, 4, 12, 6, 14), (1, 9, 3, 11, 5, 13, 7, 15))                             \
  TSTAGE(2, (0, 1, 8, 9, 4, 5, 12, 13), (2, 3, 10, 11, 6, 7, 14, 15))                             \
  TSTAGE(4, (0, 1, 2, 3, 8, 9, 10, 11), (4, 5, 6, 7, 12, 13, 14, 15))
#else
#define EVENS 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30
#define ODDS 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31
#define INTERLEAVE_LO 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23
#define INTERLEAVE_HI 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31
#define TSTAGES                                                                                    \
  TSTAGE(1, (0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30),                          \
         (1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31))                             \
  TSTAGE(2, (0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29),                           \
         (2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31))                            \
  TSTAGE(4, (0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27),                           \
         (4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31))                            \
  TSTAGE(8, (0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23),                             \
         (8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31))
#endif

typedef FT VR __attribute__((vector_size(FL * sizeof(FT))));
typedef struct {
  VR re, im;
} VC;
typedef float FN(vfl) __attribute__((vector_size(FL * sizeof(float))));

#ifdef __clang__
#define SHUF(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define SHUF(a, b, ...) __builtin_shuffle(a, b, (VI){__VA_ARGS__})
#endif

/* FL values of a line: f32 (converted) or f64 memory */
FFT_INLINE void FN(loadv)(VR *a, const char *p, bool f32) {
  if (f32) {
    FN(vfl) f;
    memcpy(&f, p, sizeof f);
    *a = __builtin_convertvector(f, VR);
  } else {
    memcpy(a, p, sizeof *a);
  }
}

FFT_INLINE void FN(storev)(char *p, bool f32, const VR *a) {
  if (f32) {
    FN(vfl) f = __builtin_convertvector(*a, FN(vfl));
    memcpy(p, &f, sizeof f);
  } else {
    memcpy(p, a, sizeof *a);
  }
}

/* r[j] (row j) becomes column j of the FL x FL matrix in place: stage b swaps the off-diagonal
 * b x b blocks of every 2b x 2b block */
#define FFT_UNPAREN(...) __VA_ARGS__
#define TSTAGE(B, LO, HI)                                                                          \
  FFT_UNROLL for (int i = 0; i < FL; i++)                                                          \
    if (!(i & B)) {                                                                                \
      VR a_ = r[i], b_ = r[i + B];                                                                 \
      r[i] = SHUF(a_, b_, FFT_UNPAREN LO);                                                         \
      r[i + B] = SHUF(a_, b_, FFT_UNPAREN HI);                                                     \
    }
FFT_INLINE void FN(transpose)(VR *r) {
  TSTAGES
}
#undef TSTAGE
#undef FFT_UNPAREN

/* ======================================================================== vector butterflies */

FFT_INLINE void FN(cmulw)(VC *a, CX w) {
  VR re = a->re * w.re - a->im * w.im;
  a->im = a->re * w.im + a->im * w.re;
  a->re = re;
}

/* the 4-point DFT of (a, b, c, e) in place */
FFT_INLINE void FN(dft4)(VC *a, VC *b, VC *c, VC *e) {
  VR t0r = a->re + c->re, t0i = a->im + c->im, t1r = a->re - c->re, t1i = a->im - c->im;
  VR t2r = b->re + e->re, t2i = b->im + e->im, t3r = b->re - e->re, t3i = b->im - e->im;
  a->re = t0r + t2r, a->im = t0i + t2i;
  c->re = t0r - t2r, c->im = t0i - t2i;
  b->re = t1r + t3i, b->im = t1i - t3r; /* t1 - i t3 */
  e->re = t1r - t3i, e->im = t1i + t3r;
}

/* radix R stage of a Stockham FFT: butterfly g * ns + k (k < ns) reads src[g * ns + k + r * nr],
 * writes dst[g * ns * R + k + q * ns] */
FFT_INLINE void FN(stage8)(int64_t ns, int64_t nr, const CX *tw, const VC *src, VC *dst) {
  for (int64_t g0 = 0; g0 < nr; g0 += ns) {
    const VC *in = src + g0;
    VC *out = dst + g0 * 8;
    for (int64_t k = 0; k < ns; k++) {
      const FT h = 0.70710678118654752440084436210485; /* sqrt(1/2) */
      VC x[8];
      FFT_UNROLL for (int r = 0; r < 8; r++) x[r] = in[k + r * nr];
      if (ns > 1)
        FFT_UNROLL for (int r = 1; r < 8; r++) FN(cmulw)(&x[r], tw[8 * k + r]);
      VC a[4], b[4];
      FFT_UNROLL for (int r = 0; r < 4; r++) {
        a[r].re = x[r].re + x[r + 4].re, a[r].im = x[r].im + x[r + 4].im;
        b[r].re = x[r].re - x[r + 4].re, b[r].im = x[r].im - x[r + 4].im;
      }
      /* b[r] *= exp(-2 pi i r / 8) */
      VR t = (b[1].re + b[1].im) * h;
      b[1].im = (b[1].im - b[1].re) * h, b[1].re = t;
      t = b[2].im;
      b[2].im = -b[2].re, b[2].re = t;
      t = (b[3].im - b[3].re) * h;
      b[3].im = -(b[3].re + b[3].im) * h, b[3].re = t;
      FN(dft4)(&a[0], &a[1], &a[2], &a[3]);
      FN(dft4)(&b[0], &b[1], &b[2], &b[3]);
      FFT_UNROLL for (int q = 0; q < 4; q++) {
        out[k + 2 * q * ns] = a[q];
        out[k + (2 * q + 1) * ns] = b[q];
      }
    }
  }
}

FFT_INLINE void FN(stage4)(int64_t ns, int64_t nr, const CX *tw, const VC *src, VC *dst) {
  for (int64_t g0 = 0; g0 < nr; g0 += ns) {
    const VC *in = src + g0;
    VC *out = dst + g0 * 4;
    for (int64_t k = 0; k < ns; k++) {
      VC a = in[k], b = in[k + nr], c = in[k + 2 * nr], e = in[k + 3 * nr];
      if (ns > 1) {
        FN(cmulw)(&b, tw[4 * k + 1]);
        FN(cmulw)(&c, tw[4 * k + 2]);
        FN(cmulw)(&e, tw[4 * k + 3]);
      }
      FN(dft4)(&a, &b, &c, &e);
      out[k] = a, out[k + ns] = b, out[k + 2 * ns] = c, out[k + 3 * ns] = e;
    }
  }
}

FFT_INLINE void FN(stage2)(int64_t ns, int64_t nr, const CX *tw, const VC *src, VC *dst) {
  for (int64_t g0 = 0; g0 < nr; g0 += ns) {
    const VC *in = src + g0;
    VC *out = dst + g0 * 2;
    for (int64_t k = 0; k < ns; k++) {
      VC a = in[k], b = in[k + nr];
      if (ns > 1) FN(cmulw)(&b, tw[2 * k + 1]);
      out[k].re = a.re + b.re, out[k].im = a.im + b.im;
      out[k + ns].re = a.re - b.re, out[k + ns].im = a.im - b.im;
    }
  }
}

FFT_INLINE void FN(stage3)(int64_t ns, int64_t nr, const CX *tw, const VC *src, VC *dst) {
  const FT s3 = 0.86602540378443864676372317075294;
  for (int64_t g0 = 0; g0 < nr; g0 += ns) {
    const VC *in = src + g0;
    VC *out = dst + g0 * 3;
    for (int64_t k = 0; k < ns; k++) {
      VC a = in[k], b = in[k + nr], c = in[k + 2 * nr];
      if (ns > 1) {
        FN(cmulw)(&b, tw[3 * k + 1]);
        FN(cmulw)(&c, tw[3 * k + 2]);
      }
      VR t1r = b.re + c.re, t1i = b.im + c.im;
      VR t2r = a.re - 0.5 * t1r, t2i = a.im - 0.5 * t1i;
      VR t3r = s3 * (b.im - c.im), t3i = -s3 * (b.re - c.re); /* -i sqrt(3)/2 (b - c) */
      out[k].re = a.re + t1r, out[k].im = a.im + t1i;
      out[k + ns].re = t2r + t3r, out[k + ns].im = t2i + t3i;
      out[k + 2 * ns].re = t2r - t3r, out[k + 2 * ns].im = t2i - t3i;
    }
  }
}

/* an odd radix R: the direct DFT, through the sums and differences of v[r] and v[R - r]:
 *   X[q] = v0 + sum_r s_r cos(2 pi r q / R) - i sum_r d_r sin(2 pi r q / R), X[R - q] likewise
 *   with +i */
FFT_INLINE void FN(stage_odd)(int R, int64_t ns, int64_t nr, const CX *tw, const FT *cs,
                          const VC *src, VC *dst) {
  int h = (R - 1) / 2;
  VC v[MAX_DIRECT_PRIME], sp[MAX_DIRECT_PRIME / 2], dm[MAX_DIRECT_PRIME / 2];
  for (int64_t g0 = 0; g0 < nr; g0 += ns) {
    const VC *in = src + g0;
    VC *out = dst + g0 * R;
    for (int64_t k = 0; k < ns; k++) {
      FFT_UNROLL for (int r = 0; r < R; r++) {
        v[r] = in[k + r * nr];
        if (ns > 1 && r) FN(cmulw)(&v[r], tw[k * R + r]);
      }
      VC x0 = v[0];
      FFT_UNROLL for (int r = 1; r <= h; r++) {
        sp[r - 1].re = v[r].re + v[R - r].re, sp[r - 1].im = v[r].im + v[R - r].im;
        dm[r - 1].re = v[r].re - v[R - r].re, dm[r - 1].im = v[r].im - v[R - r].im;
        x0.re += sp[r - 1].re, x0.im += sp[r - 1].im;
      }
      out[k] = x0;
      FFT_UNROLL for (int q = 1; q <= h; q++) {
        VC a = v[0], b = {{0}, {0}};
        int idx = 0;
        FFT_UNROLL for (int r = 0; r < h; r++) {
          idx += q;
          if (idx >= R) idx -= R;
          FT c = cs[2 * idx], s = cs[2 * idx + 1];
          a.re += sp[r].re * c, a.im += sp[r].im * c;
          b.re += dm[r].re * s, b.im += dm[r].im * s;
        }
        out[k + q * ns].re = a.re + b.im, out[k + q * ns].im = a.im - b.re;
        out[k + (R - q) * ns].re = a.re - b.im, out[k + (R - q) * ns].im = a.im + b.re;
      }
    }
  }
}

/* the Stockham stages of a factored plan on x (n vectors), scr: n vectors; returns the one of
 * the two that holds the result (x after an even number of stages, else scr: no copy back) */
FFT_CLONES static VC *FN(stockham)(const fft_plan *p, VC *x, VC *scr) {
  int64_t n = p->n, ns = 1;
  VC *src = x, *dst = scr;
  for (int s = 0; s < p->nst; s++) {
    int R = p->radix[s];
    switch (R) {
      case 8: FN(stage8)(ns, n / 8, PTW(p, s), src, dst); break;
      case 4: FN(stage4)(ns, n / 4, PTW(p, s), src, dst); break;
      case 2: FN(stage2)(ns, n / 2, PTW(p, s), src, dst); break;
      case 3: FN(stage3)(ns, n / 3, PTW(p, s), src, dst); break;
      /* the common odd radices with R a constant: their loops unroll, v[] stays in registers */
      case 5: FN(stage_odd)(5, ns, n / 5, PTW(p, s), PCS(p, s), src, dst); break;
      case 7: FN(stage_odd)(7, ns, n / 7, PTW(p, s), PCS(p, s), src, dst); break;
      default: FN(stage_odd)(R, ns, n / R, PTW(p, s), PCS(p, s), src, dst);
    }
    VC *t = src;
    src = dst;
    dst = t;
    ns *= R;
  }
  return src;
}

/* Forward transform of FL lines (x: n vectors); scratch: p->scratch vectors. Returns where the
 * result is: x, or (a factored plan with an odd number of stages) scr. */
FFT_CLONES static VC *FN(fftv_exec)(const fft_plan *p, VC *x, VC *scr) {
  int64_t n = p->n;
  if (n <= 1) return x;
  if (!p->blue) return FN(stockham)(p, x, scr);
  int64_t m = p->m;
  VC *a = scr;
  for (int64_t k = 0; k < n; k++) {
    a[k] = x[k];
    FN(cmulw)(&a[k], PCHIRP(p)[k]);
  }
  memset(a + n, 0, sizeof(VC) * (size_t)(m - n));
  VC *o = FN(stockham)(p->sub, a, scr + m);
  for (int64_t k = 0; k < m; k++) {
    FN(cmulw)(&o[k], PBFFT(p)[k]);
    o[k].im = -o[k].im; /* conjugate: the inverse transform as a forward one */
  }
  a = FN(stockham)(p->sub, o, o == scr ? scr + m : scr);
  for (int64_t k = 0; k < n; k++) {
    x[k].re = a[k].re;
    x[k].im = -a[k].im;
    FN(cmulw)(&x[k], PCHIRP(p)[k]);
  }
  return x;
}

/* ======================================================================== even real lengths */

/* after a complex transform Z of length h = n / 2 of the pairs (x[2k], x[2k+1]): X[k] and
 * X[h - k] from Z[k] and Z[h - k] (u, v):
 *   X[k] = E + w^k O,  E = (u + conj v) / 2,  O = -i (u - conj v) / 2 */
FFT_INLINE void FN(rpost_one)(VC *out, const VC *u, const VC *v, CX w) {
  const FT half = 0.5;
  VC e = {half * (u->re + v->re), half * (u->im - v->im)};
  VC o = {half * (u->im + v->im), -half * (u->re - v->re)};
  FN(cmulw)(&o, w);
  out->re = e.re + o.re, out->im = e.im + o.im;
}

/* x[0..h-1] holds Z; on return x[0..h] holds X[0..h]; tw[k] = exp(-2 pi i k / n) */
FFT_CLONES static void FN(rfft_post)(const CX *tw, VC *x, int64_t h) {
  VC z0 = x[0];
  VR zero = {0};
  x[0].re = z0.re + z0.im, x[0].im = zero;
  x[h].re = z0.re - z0.im, x[h].im = zero;
  for (int64_t k = 1; 2 * k <= h; k++) {
    VC a = x[k], b = x[h - k];
    FN(rpost_one)(&x[k], &a, &b, tw[k]);
    if (k != h - k) FN(rpost_one)(&x[h - k], &b, &a, tw[h - k]);
  }
}

/* the inverse split, conjugated for conj(FFT(conj .)): Z'[k] = conj(E + i w^-k D),
 * E = u + conj v, D = u - conj v */
FFT_INLINE void FN(ipre_one)(VC *out, const VC *u, const VC *v, CX w) {
  VR er = u->re + v->re, ei = u->im - v->im;
  VC o = {u->re - v->re, u->im + v->im};
  w.im = -w.im;
  FN(cmulw)(&o, w);
  out->re = er - o.im;
  out->im = -(ei + o.re);
}

/* x[0..h] holds X[0..h] (the imaginary parts of X[0] and X[h] are ignored); on return x[0..h-1]
 * holds conj of the half-length spectrum whose forward transform, conjugated, is
 * n * (x[2m] + i x[2m+1]) of the inverse */
FFT_CLONES static void FN(irfft_pre)(const CX *tw, VC *x, int64_t h) {
  VR a0 = x[0].re, ah = x[h].re;
  x[0].re = a0 + ah;
  x[0].im = ah - a0;
  for (int64_t k = 1; 2 * k <= h; k++) {
    VC a = x[k], b = x[h - k];
    FN(ipre_one)(&x[k], &a, &b, tw[k]);
    if (k != h - k) FN(ipre_one)(&x[h - k], &b, &a, tw[h - k]);
  }
}

static inline FT FN(ld)(bool f32, const char *b, int64_t i) {
  return f32 ? (FT)((const float *)b)[i] : (FT)((const double *)b)[i];
}

static inline void FN(st)(bool f32, char *b, int64_t i, FT v) {
  if (f32)
    ((float *)b)[i] = (float)v;
  else
    ((double *)b)[i] = v;
}

/* the tail (elements k0..n-1) of FL complex lines of element type T, each contiguous in memory
 * (es == 1, the last axis), to or from vector layout, one element at a time */
#define FFT_CPLX_COPY(T, TO_D)                                                                     \
  {                                                                                                \
    T *q = (T *)s->base + 2 * (s->off[0] + k0);                                                    \
    int64_t lo[FL];                                                                                \
    for (int j = 0; j < FL; j++) lo[j] = 2 * (off[j] - s->off[0]);                                 \
    for (int64_t k = k0; k < n; k++, q += 2) {                                                     \
      FT *e = d + k * 2 * FL;                                                                      \
      for (int j = 0; j < jn; j++) {                                                               \
        if (TO_D)                                                                                  \
          e[j] = sre * q[lo[j]], e[FL + j] = sim * q[lo[j] + 1];                                   \
        else                                                                                       \
          q[lo[j]] = (T)(sre * e[j]), q[lo[j] + 1] = (T)(sim * e[FL + j]);                         \
      }                                                                                            \
    }                                                                                              \
  }

/* FL complex lines side by side in memory (line j at base + off0 + j, element k es further on),
 * to or from vector layout d: a vector of FL complex values per element */
FFT_INLINE void FN(copy_side)(FT *d, int64_t n, bool f32, char *base, int64_t off0, int64_t es,
                              FT sre, FT sim, bool to_d) {
  size_t ts = f32 ? sizeof(float) : sizeof(double);
  for (int64_t k = 0; k < n; k++) {
    char *p = base + (size_t)(2 * (off0 + k * es)) * ts;
    VC *e = (VC *)d + k;
    if (to_d) {
      VR a, b;
      FN(loadv)(&a, p, f32), FN(loadv)(&b, p + FL * ts, f32);
      e->re = SHUF(a, b, EVENS) * sre;
      e->im = SHUF(a, b, ODDS) * sim;
    } else {
      VR re = e->re * sre, im = e->im * sim;
      VR a = SHUF(re, im, INTERLEAVE_LO), b = SHUF(re, im, INTERLEAVE_HI);
      FN(storev)(p, f32, &a), FN(storev)(p + FL * ts, f32, &b);
    }
  }
}

/* one part (re or im) of an FL x FL block of complex lines to vector layout: line j's values
 * from p[j] (element type f32 or f64) times sc, transposed into e[c] (im: e[c].im) */
FFT_INLINE void FN(part_in)(VC *e, const char *const *p, bool f32, size_t es, FT sc, bool im) {
  VR r[FL];
  FFT_UNROLL for (int j = 0; j < FL; j++) {
    VR a, b;
    FN(loadv)(&a, p[j], f32), FN(loadv)(&b, p[j] + FL * es, f32);
    r[j] = (im ? SHUF(a, b, ODDS) : SHUF(a, b, EVENS)) * sc;
  }
  FN(transpose)(r);
  FFT_UNROLL for (int c = 0; c < FL; c++) {
    if (im)
      e[c].im = r[c];
    else
      e[c].re = r[c];
  }
}

/* FL complex lines, each contiguous in memory at base + off[j] (element type f32 or f64), to or
 * from vector layout d, FL elements at a time (FL x FL transposes, the real parts and then the
 * imaginary ones, so that each transpose stays in registers), writing lines j < jn only;
 * returns the elements done */
FFT_INLINE int64_t FN(copy_transposed)(FT *d, int64_t n, bool f32, char *base, const int64_t *off,
                                       FT sre, FT sim, bool to_d, int jn) {
  size_t es = f32 ? sizeof(float) : sizeof(double);
  int64_t k = 0;
  for (; k + FL <= n; k += FL) {
    VC *e = (VC *)d + k;
    char *p[FL];
    for (int j = 0; j < FL; j++) p[j] = base + (size_t)(2 * (off[j] + k)) * es;
    if (to_d) {
      FN(part_in)(e, (const char *const *)p, f32, es, sre, false);
      FN(part_in)(e, (const char *const *)p, f32, es, sim, true);
    } else {
      VR re[FL], im[FL];
      FFT_UNROLL for (int c = 0; c < FL; c++) re[c] = e[c].re * sre;
      FN(transpose)(re);
      FFT_UNROLL for (int c = 0; c < FL; c++) im[c] = e[c].im * sim;
      FN(transpose)(im);
      for (int j = 0; j < jn; j++) {
        VR a = SHUF(re[j], im[j], INTERLEAVE_LO), b = SHUF(re[j], im[j], INTERLEAVE_HI);
        FN(storev)(p[j], f32, &a), FN(storev)(p[j] + FL * es, f32, &b);
      }
    }
  }
  return k;
}

/* the common case of gather and scatter: FL complex lines in vector layout, either side by side
 * or each contiguous (then also fewer than FL lines: the lanes past cnt read line 0 again and are
 * not written back); false if the block is not such a case */
FFT_CLONES static bool FN(copy_fast)(FT *d, lay y, int cnt, int64_t n, const lend *s, FT sre,
                                 FT sim, bool to_d) {
  if (y.lanes != FL || (s->dt != CJ_C64 && s->dt != CJ_C128)) return false;
  bool side = cnt == FL;
  for (int j = 1; j < FL; j++) side = side && s->off[j] == s->off[0] + j;
  if (!side && s->es != 1) return false;
  if (side) {
    FN(copy_side)(d, n, s->dt == CJ_C64, s->base, s->off[0], s->es, sre, sim, to_d);
    return true;
  }
  int64_t off[FL];
  for (int j = 0; j < FL; j++) off[j] = j < cnt ? s->off[j] : s->off[0];
  int jn = to_d ? FL : cnt;
  int64_t k0 = FN(copy_transposed)(d, n, s->dt == CJ_C64, s->base, off, sre, sim, to_d, jn);
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

/* one complex line (lanes == 1: the four-step's scalar layout) to or from d, element type T */
#define FFT_LINE_COPY(T)                                                                           \
  {                                                                                                \
    T *q = (T *)s->base + 2 * s->off[0];                                                           \
    for (int64_t k = 0; k < n; k++)                                                                \
      if (to_d)                                                                                    \
        d[2 * k] = sre * (FT)q[k * es], d[2 * k + 1] = sim * (FT)q[k * es + 1];                    \
      else                                                                                         \
        q[k * es] = (T)(sre * d[2 * k]), q[k * es + 1] = (T)(sim * d[2 * k + 1]);                  \
  }
FFT_INLINE void FN(copy_line)(FT *d, int64_t n, const lend *s, FT sre, FT sim, bool to_d) {
  int64_t es = 2 * s->es;
  if (s->dt == CJ_C64)
    FFT_LINE_COPY(float)
  else
    FFT_LINE_COPY(double)
}
#undef FFT_LINE_COPY

/* reals in pairs along contiguous lines at even offsets are complex lines of the complex type of
 * the same width: c describes them so; false if s is not such a line end */
FFT_INLINE bool FN(pairs_as_cplx)(int mode, const lend *s, int cnt, lend *c) {
  if (mode != M_PAIRS || s->es != 1 || (s->dt != CJ_F32 && s->dt != CJ_F64)) return false;
  *c = *s;
  c->dt = s->dt == CJ_F32 ? CJ_C64 : CJ_C128;
  for (int j = 0; j < cnt; j++) {
    if (s->off[j] % 2) return false;
    c->off[j] = s->off[j] / 2;
  }
  return true;
}

/* n elements of cnt lines into d (lanes past cnt zeroed), imaginary parts times sim */
static void FN(gather)(FT *d, lay y, int cnt, int64_t n, const lend *s, int mode, FT sim) {
  if (mode == M_CPLX && FN(copy_fast)(d, y, cnt, n, s, 1.0, sim, true)) return;
  if (mode == M_CPLX && y.lanes == 1) {
    FN(copy_line)(d, n, s, 1, sim, true);
    return;
  }
  lend c;
  if (FN(pairs_as_cplx)(mode, s, cnt, &c) && FN(copy_fast)(d, y, cnt, n, &c, 1.0, sim, true)) return;
  bool f32 = s->dt == CJ_F32 || s->dt == CJ_C64;
  int64_t mul = mode == M_CPLX ? 2 : 1, eso = mode == M_PAIRS ? 2 * s->es : s->es;
  int64_t di = mode == M_CPLX ? 1 : s->es;
  if (cnt < y.lanes)
    for (int64_t k = 0; k < n; k++)
      for (int j = cnt; j < y.lanes; j++) d[k * y.es + j] = d[k * y.es + y.ims + j] = 0;
  for (int64_t k = 0; k < n; k++) {
    FT *e = d + k * y.es;
    for (int j = 0; j < cnt; j++) {
      int64_t ri = mul * (s->off[j] + k * eso);
      e[j] = FN(ld)(f32, s->base, ri);
      e[y.ims + j] = mode == M_REAL ? 0.0 : sim * FN(ld)(f32, s->base, ri + di);
    }
  }
}

/* n elements of cnt lines from d, real parts times sre and imaginary ones times sim */
static void FN(scatter)(const FT *d, lay y, int cnt, int64_t n, const lend *s, int mode,
                    FT sre, FT sim) {
  if (mode == M_CPLX && FN(copy_fast)((FT *)d, y, cnt, n, s, sre, sim, false)) return;
  if (mode == M_CPLX && y.lanes == 1) {
    FN(copy_line)((FT *)d, n, s, sre, sim, false);
    return;
  }
  lend c;
  if (FN(pairs_as_cplx)(mode, s, cnt, &c) && FN(copy_fast)((FT *)d, y, cnt, n, &c, sre, sim, false))
    return;
  bool f32 = s->dt == CJ_F32 || s->dt == CJ_C64;
  int64_t mul = mode == M_CPLX ? 2 : 1, eso = mode == M_PAIRS ? 2 * s->es : s->es;
  int64_t di = mode == M_CPLX ? 1 : s->es;
  for (int64_t k = 0; k < n; k++) {
    const FT *e = d + k * y.es;
    for (int j = 0; j < cnt; j++) {
      int64_t ri = mul * (s->off[j] + k * eso);
      FN(st)(f32, s->base, ri, sre * e[j]);
      if (mode != M_REAL) FN(st)(f32, s->base, ri + di, sim * e[y.ims + j]);
    }
  }
}

/* Forward transform of one line x (n values, scalar layout) by the four-step split: the n2
 * columns of length n1 (x[i n2 + j]) FL at a time, times exp(-2 pi i k1 j / n), into tmp; then
 * the n1 rows of length n2, FL at a time, to x[k1 + n1 k2]. The copies are those of the passes
 * (gather / scatter of lines in a complex buffer of this type). */
FFT_CLONES static void FN(four_step)(const fft_plan *p, CX *x, VC *scr) {
  int64_t n = p->n, n1 = p->n1, n2 = p->n2;
  CX *tmp = (CX *)scr;
  VC *vb = scr + (n * (int64_t)sizeof(CX) + (int64_t)sizeof(VC) - 1) / (int64_t)sizeof(VC);
  VC *sub = vb + (n1 > n2 ? n1 : n2);
  FT *d = (FT *)vb;
  lay y = {2 * FL, FL, FL};
  lend col = {WORK_DT, (char *)x, {0}, n2}, tcol = {WORK_DT, (char *)tmp, {0}, n2};
  for (int64_t j0 = 0; j0 < n2; j0 += FL) {
    int cnt = n2 - j0 < FL ? (int)(n2 - j0) : FL;
    for (int l = 0; l < FL; l++) col.off[l] = tcol.off[l] = j0 + l;
    FN(gather)(d, y, cnt, n1, &col, M_CPLX, 1);
    VC *o = FN(fftv_exec)(p->p1, vb, sub);
    const VC *w = (const VC *)PFTW(p) + j0 / FL * n1;
    for (int64_t k1 = 0; k1 < n1; k1++) {
      VR re = o[k1].re * w[k1].re - o[k1].im * w[k1].im;
      o[k1].im = o[k1].re * w[k1].im + o[k1].im * w[k1].re;
      o[k1].re = re;
    }
    FN(scatter)((FT *)o, y, cnt, n1, &tcol, M_CPLX, 1, 1);
  }
  lend row = {WORK_DT, (char *)tmp, {0}, 1}, out = {WORK_DT, (char *)x, {0}, n1};
  for (int64_t r0 = 0; r0 < n1; r0 += FL) {
    int cnt = n1 - r0 < FL ? (int)(n1 - r0) : FL;
    for (int l = 0; l < FL; l++) row.off[l] = (r0 + l) * n2, out.off[l] = r0 + l;
    FN(gather)(d, y, cnt, n2, &row, M_CPLX, 1);
    FN(scatter)((FT *)FN(fftv_exec)(p->p2, vb, sub), y, cnt, n2, &out, M_CPLX, 1, 1);
  }
}

/* returns where the result is (buf or scr) */
static VC *FN(transform)(const fft_plan *pl, VC *buf, VC *scr) {
  if (!pl->big) return FN(fftv_exec)(pl, buf, scr);
  FN(four_step)(pl, (CX *)buf, scr);
  return buf;
}

/* one block of cnt lines: read from s, transform, write to t */
static void FN(do_block)(const fft_run *R, int kind, lay y, VC *buf, VC *scr, int cnt, const lend *s,
                     const lend *t) {
  const fft_params *p = R->p;
  int ax = R->ax;
  const fft_plan *pl = p->plan[ax];
  int64_t n = p->len[ax], m = p->sdim[ax], h = n / 2;
  bool inverse = p->type == T_IFFT || p->type == T_IRFFT;
  FT sc = inverse && R->write_out ? p->scale : 1.0, sg = inverse ? -1.0 : 1.0;
  FT *d = (FT *)buf;
  switch (kind) {
    case K_CPLX:
      FN(gather)(d, y, cnt, n, s, M_CPLX, sg);
      FN(scatter)((FT *)FN(transform)(pl, buf, scr), y, cnt, n, t, M_CPLX, sc, sg * sc);
      break;
    case K_RFULL:
      FN(gather)(d, y, cnt, n, s, M_REAL, 1.0);
      FN(scatter)((FT *)FN(transform)(pl, buf, scr), y, cnt, m, t, M_CPLX, 1.0, 1.0);
      break;
    case K_RHALF: { /* rfft_post writes h + 1 values: the scratch has room for them */
      FN(gather)(d, y, cnt, h, s, M_PAIRS, 1.0);
      VC *o = FN(fftv_exec)(p->hplan, buf, scr);
      FN(rfft_post)(PHTW(p), o, h);
      FN(scatter)((FT *)o, y, cnt, h + 1, t, M_CPLX, 1.0, 1.0);
      break;
    }
    case K_RPRIME:
      for (int j = 0; j < cnt; j++) {
        float xf[136];
        cplx o[136];
        for (int64_t k = 0; k < n; k++) xf[k] = ((const float *)s->base)[s->off[j] + k * s->es];
        rdft_prime_f32(xf, (int)n, p->cs, o);
        for (int64_t k = 0; k < m; k++) d[k * y.es + j] = o[k].re, d[k * y.es + y.ims + j] = o[k].im;
      }
      FN(scatter)(d, y, cnt, m, t, M_CPLX, 1.0, 1.0);
      break;
    case K_IFULL:
      /* conj X[k], k < m; past m the Hermitian half: conj X[n - k] conjugated */
      FN(gather)(d, y, cnt, m, s, M_CPLX, -1.0);
      for (int64_t k = m; k < n; k++)
        for (int j = 0; j < y.lanes; j++) {
          d[k * y.es + j] = d[(n - k) * y.es + j];
          d[k * y.es + y.ims + j] = -d[(n - k) * y.es + y.ims + j];
        }
      FN(scatter)((FT *)FN(transform)(pl, buf, scr), y, cnt, n, t, M_REAL, sc, 0.0);
      break;
    default: /* K_IHALF */
      FN(gather)(d, y, cnt, h + 1, s, M_CPLX, 1.0);
      FN(irfft_pre)(PHTW(p), buf, h);
      FN(scatter)((FT *)FN(fftv_exec)(p->hplan, buf, scr), y, cnt, h, t, M_PAIRS, sc, -sc);
  }
}

static void FN(pass_body)(void *vctx, int64_t b, int64_t e) {
  fft_run *R = vctx;
  const fft_params *p = R->p;
  int ax = R->ax;
  cj_tls_area *area = cj_tls_claim(R->ctx);
  if (!area) return;
  int kind = pass_kind(p, ax);
  bool scalar = (kind == K_CPLX || kind == K_RFULL || kind == K_IFULL) && p->plan[ax]->big;
  lay y = scalar ? (lay){2, 1, 1} : (lay){2 * FL, FL, FL};
  int64_t n = p->len[ax];
  VC *buf = (VC *)area->mem;
  /* the scalar layout holds n + 2 values of CX */
  int64_t nbuf = scalar ? ((n + 2) * (int64_t)sizeof(CX) + (int64_t)sizeof(VC) - 1) / (int64_t)sizeof(VC) : n + 2;
  VC *scr = buf + nbuf;
  lend s = {R->read_in ? p->it : p->wdt, R->read_in ? (char *)R->in : R->work, {0},
            R->read_in ? p->istr[ax] : p->wstr[ax]};
  lend t = {R->write_out ? p->ot : p->wdt, R->write_out ? R->out : R->work, {0},
            R->write_out ? p->ostr[ax] : p->wstr[ax]};
  line_cursor cur;
  cursor_at(p, ax, b, &cur);
  for (int64_t l = b; l < e;) {
    int cnt = e - l < y.lanes ? (int)(e - l) : y.lanes;
    for (int j = 0; j < cnt; j++) {
      s.off[j] = R->read_in ? cur.io : cur.wo;
      t.off[j] = R->write_out ? cur.oo : cur.wo;
      cursor_next(p, ax, &cur);
    }
    FN(do_block)(R, kind, y, buf, scr, cnt, &s, &t);
    l += cnt;
  }
  cj_tls_release(R->ctx, area);
}
#undef FFT_CPLX_COPY
#undef SHUF
#undef CX
#undef WORK_DT
#undef PTW
#undef PCS
#undef PCHIRP
#undef PBFFT
#undef PFTW
#undef PHTW
#undef EVENS
#undef ODDS
#undef INTERLEAVE_LO
#undef INTERLEAVE_HI
#undef TSTAGES
#undef FT
#undef FL
#undef FN
#undef VR
#undef VC
#undef VI
#undef FFT_F32
