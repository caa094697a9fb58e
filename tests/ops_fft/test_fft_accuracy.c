/* FFT accuracy: FFT, IFFT, RFFT and IRFFT in f32 and f64 over 1 to 3 axes and many lengths (all
 * of 1..64, primes, powers of two up to 2^16, composites such as 14*15*16*17), each compared with
 * a long double mixed-radix DFT of the same (rounded) inputs. The error of a case is
 *   max |y - ref| / (eps * max |ref|)
 * (eps of the element type: 2^-24 or 2^-53), so a result rounded once from an exact one scores
 * at most about 0.7. Each case must stay under its bound; every case's score is printed. */
#include <math.h>
#include <stdint.h>

#include "../cpu/prog_util.h"

typedef long double ldbl;
typedef struct lc {
  ldbl re, im;
} lc;

enum { T_FFT, T_IFFT, T_RFFT, T_IRFFT };
static const char *const TNAME[] = {"FFT", "IFFT", "RFFT", "IRFFT"};

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) * 0x1.0p-52 - 1.0;
}

/* ------------------------------------------------------------------ the reference */

/* out[k] = sum_j x[j * xs] w^(j k), w = exp(-2 pi i / n) = root[rs] of a table of N roots (n rs = N),
 * by splitting off the smallest prime factor p: p sub-transforms of n / p, then combined */
static void ref_rec(const lc *x, int64_t xs, int64_t n, lc *out, const lc *root, int64_t N, int64_t rs) {
  if (n == 1) {
    out[0] = x[0];
    return;
  }
  int64_t p = n;
  for (int64_t d = 2; d * d <= n; d++)
    if (n % d == 0) {
      p = d;
      break;
    }
  int64_t m = n / p;
  lc *y = malloc(sizeof(lc) * (size_t)n);
  if (!y) abort();
  if (p == n) {
    for (int64_t j = 0; j < n; j++) y[j] = x[j * xs];
  } else {
    for (int64_t r = 0; r < p; r++) ref_rec(x + r * xs, xs * p, m, y + r * m, root, N, rs * p);
  }
  /* out[k + m q] = sum_r y_r[k] w^(r (k + m q)) (p == n: m == 1, y_r = x[r]) */
  for (int64_t q = 0; q < p; q++)
    for (int64_t k = 0; k < m; k++) {
      int64_t kk = k + m * q;
      ldbl re = 0, im = 0;
      int64_t idx = 0; /* r kk mod n */
      for (int64_t r = 0; r < p; r++, idx = idx + kk >= n ? idx + kk - n : idx + kk) {
        lc w = root[idx * rs];
        lc v = y[r * m + k];
        re += v.re * w.re - v.im * w.im;
        im += v.re * w.im + v.im * w.re;
      }
      out[kk].re = re, out[kk].im = im;
    }
  free(y);
}

/* the DFT (inverse: unscaled, sign +) of every line of axis `ax` of a complex array of dims
 * (rank r) */
static void ref_axis(lc *a, int r, const int64_t *dims, int ax, bool inverse) {
  int64_t n = dims[ax], stride = 1, total = 1;
  for (int d = r - 1; d > ax; d--) stride *= dims[d];
  for (int d = 0; d < r; d++) total *= dims[d];
  if (n <= 1 || total == 0) return;
  lc *root = malloc(sizeof(lc) * (size_t)n), *line = malloc(sizeof(lc) * (size_t)n),
     *out = malloc(sizeof(lc) * (size_t)n);
  if (!root || !line || !out) abort();
  for (int64_t j = 0; j < n; j++) {
    ldbl t = -2.0L * 3.141592653589793238462643383279502884L * (ldbl)j / (ldbl)n;
    root[j].re = cosl(t), root[j].im = sinl(t);
  }
  for (int64_t base = 0; base < total; base++) {
    if ((base / stride) % n) continue; /* visit each line once, at its first element */
    for (int64_t k = 0; k < n; k++) {
      line[k] = a[base + k * stride];
      if (inverse) line[k].im = -line[k].im;
    }
    ref_rec(line, 1, n, out, root, n, 1);
    for (int64_t k = 0; k < n; k++) {
      a[base + k * stride] = out[k];
      if (inverse) a[base + k * stride].im = -out[k].im;
    }
  }
  free(root), free(line), free(out);
}

/* ------------------------------------------------------------------ one case */

static void put(void *buf, bool f32, int64_t i, double v) {
  if (f32)
    ((float *)buf)[i] = (float)v;
  else
    ((double *)buf)[i] = v;
}
static double get(const void *buf, bool f32, int64_t i) {
  return f32 ? (double)((const float *)buf)[i] : ((const double *)buf)[i];
}

static void type_str(char *s, size_t cap, int rank, const int64_t *dims, const char *et) {
  size_t o = (size_t)snprintf(s, cap, "tensor<");
  for (int d = 0; d < rank; d++) o += (size_t)snprintf(s + o, cap - o, "%lldx", (long long)dims[d]);
  snprintf(s + o, cap - o, "%s>", et);
}

/* rank dims of the full (real-side) shape; the last nax are the fft lengths. Returns the score,
 * or -1 on a failure to compile or run. */
static double run_case(int type, bool f32, int rank, const int64_t *dims, int nax) {
  int64_t full = 1, cd[8], spec = 1;
  for (int d = 0; d < rank; d++) full *= dims[d], cd[d] = dims[d];
  bool real = type == T_RFFT || type == T_IRFFT;
  int64_t n = dims[rank - 1];
  if (real) cd[rank - 1] = n / 2 + 1;
  for (int d = 0; d < rank; d++) spec *= cd[d];
  /* the reference works on the full complex array (real side shape) */
  lc *ref = calloc((size_t)full, sizeof(lc));
  int64_t in_n = type == T_IRFFT ? spec : full;
  bool in_cplx = type != T_RFFT;
  void *in = calloc((size_t)in_n * (in_cplx ? 2 : 1), f32 ? 4 : 8);
  if (!ref || !in) abort();
  if (type == T_IRFFT) {
    /* a Hermitian spectrum: the rfftn of a real signal (long double), rounded to the type */
    for (int64_t i = 0; i < full; i++) ref[i].re = urand(), ref[i].im = 0;
    for (int a = rank - nax; a < rank; a++) ref_axis(ref, rank, dims, a, false);
    for (int64_t i = 0; i < spec; i++) {
      int64_t row = i / cd[rank - 1], k = i % cd[rank - 1];
      put(in, f32, 2 * i, (double)ref[row * n + k].re);
      put(in, f32, 2 * i + 1, (double)ref[row * n + k].im);
    }
    /* the reference: the Hermitian extension of the rounded input, inverted */
    for (int64_t i = 0; i < full; i++) {
      int64_t row = i / n, k = i % n;
      bool have = k < cd[rank - 1]; /* the rest is filled in below, per row */
      ref[i].re = have ? get(in, f32, 2 * (row * cd[rank - 1] + k)) : 0;
      ref[i].im = have ? get(in, f32, 2 * (row * cd[rank - 1] + k) + 1) : 0;
    }
    for (int a = rank - nax; a < rank - 1; a++) ref_axis(ref, rank, dims, a, true);
    for (int64_t row = 0; row < full / n; row++) {
      lc *x = ref + row * n;
      x[0].im = 0;
      if (n % 2 == 0) x[n / 2].im = 0;
      for (int64_t k = cd[rank - 1]; k < n; k++) x[k].re = x[n - k].re, x[k].im = -x[n - k].im;
    }
    ref_axis(ref, rank, dims, rank - 1, true);
  } else {
    for (int64_t i = 0; i < in_n; i++) {
      double re = urand(), im = in_cplx ? urand() : 0.0;
      if (in_cplx) {
        put(in, f32, 2 * i, re), put(in, f32, 2 * i + 1, im);
      } else {
        put(in, f32, i, re);
      }
      ref[i].re = get(in, f32, in_cplx ? 2 * i : i);
      ref[i].im = in_cplx ? get(in, f32, 2 * i + 1) : 0;
    }
    for (int a = rank - nax; a < rank; a++) ref_axis(ref, rank, dims, a, type == T_IFFT);
  }
  ldbl scale = 1;
  if (type == T_IFFT || type == T_IRFFT)
    for (int a = rank - nax; a < rank; a++) scale /= (ldbl)dims[a];
  char it[256], ot[256], prog[2048], lens[128];
  const char *ce = f32 ? "complex<f32>" : "complex<f64>", *re = f32 ? "f32" : "f64";
  type_str(it, sizeof it, rank, type == T_IRFFT ? cd : dims, type == T_RFFT ? re : ce);
  type_str(ot, sizeof ot, rank, type == T_RFFT ? cd : dims, type == T_IRFFT ? re : ce);
  size_t o = 0;
  for (int a = rank - nax; a < rank; a++)
    o += (size_t)snprintf(lens + o, sizeof lens - o, "%s%lld", a > rank - nax ? ", " : "", (long long)dims[a]);
  snprintf(prog, sizeof prog,
           "func.func @main(%%x: %s) -> %s {\n"
           "  %%y = stablehlo.fft %%x, type = %s, length = [%s] : (%s) -> %s\n"
           "  func.return %%y : %s\n}\n",
           it, ot, TNAME[type], lens, it, ot, ot);
  cj_status err = NULL;
  cj_compiled *p = tu_compile(prog, &err);
  double score = -1;
  if (!p) {
    fprintf(stderr, "compile failed: %s\n%s", cj_status_message(err), prog);
    cj_status_free(err);
  } else {
    void *args[1] = {in}, *res[1] = {NULL};
    cj_status st = tu_run(p, args, res, tu_pool());
    if (st) {
      fprintf(stderr, "run failed: %s\n", cj_status_message(st));
      cj_status_free(st);
    } else {
      ldbl maxref = 0, maxerr = 0;
      int64_t out_n = type == T_IRFFT ? full : type == T_RFFT ? spec : full;
      for (int64_t i = 0; i < out_n; i++) {
        int64_t fi = type == T_RFFT ? (i / cd[rank - 1]) * n + i % cd[rank - 1] : i;
        ldbl rr = ref[fi].re * scale, ri = type == T_IRFFT ? 0 : ref[fi].im * scale;
        ldbl yr = get(res[0], f32, type == T_IRFFT ? i : 2 * i);
        ldbl yi = type == T_IRFFT ? 0 : get(res[0], f32, 2 * i + 1);
        ldbl mag = sqrtl(rr * rr + ri * ri), e = sqrtl((yr - rr) * (yr - rr) + (yi - ri) * (yi - ri));
        if (mag > maxref) maxref = mag;
        if (e > maxerr || e != e) maxerr = e != e ? INFINITY : e;
      }
      ldbl eps = f32 ? 0x1.0p-24L : 0x1.0p-53L;
      score = maxref > 0 ? (double)(maxerr / (eps * maxref)) : (double)(maxerr > 0) * INFINITY;
    }
    free(res[0]);
    tu_free(p);
  }
  free(ref);
  free(in);
  return score;
}

/* ------------------------------------------------------------------ the cases */

static int failures, cases;
static double worst[2];

static void check(int type, bool f32, int rank, const int64_t *dims, int nax) {
  double s = run_case(type, f32, rank, dims, nax);
  int64_t len = 1;
  for (int a = rank - nax; a < rank; a++) len *= dims[a];
  /* Both types are computed in their own precision (f32 in f32, as XLA:CPU does) and round in
   * every stage, a little more with the number of stages: one bound, in units of the type's eps.
   * (XLA:CPU's f32 results score about the same: 1.1 at n = 8, 2.6 at 1024, 3.1 at 65536, 4.8
   * at 1009, 6.4 for a 128x128 IRFFT.) An f32 RFFT whose last length is an odd prime 7..131
   * runs XLA's f32 scheme on purpose (bit-compatible with XLA:CPU, see k_fft.c): its bound is
   * that scheme's. */
  int64_t n = dims[rank - 1];
  bool xla_f32 = f32 && type == T_RFFT && n >= 7 && n < 135 && n % 2;
  for (int64_t d = 3; xla_f32 && d * d <= n; d += 2) xla_f32 = n % d != 0;
  /* lengths with a prime factor above 61 go through Bluestein's convolution: three transforms
   * of twice the length, about twice the rounding */
  bool blue = false;
  for (int a = rank - nax; a < rank; a++) {
    int64_t m = dims[a], lp = 1; /* its largest prime factor */
    for (int64_t d = 2; d * d <= m; d++)
      while (m % d == 0) m /= d, lp = d;
    blue = blue || (m > lp ? m : lp) > 61;
  }
  double bound = xla_f32 ? 4.0 : (2.0 + 0.5 * log2((double)len + 1.0)) * (blue ? 2 : 1);
  bool ok = s >= 0 && s <= bound;
  cases++;
  if (s > worst[f32]) worst[f32] = s;
  printf("%-5s %s [", TNAME[type], f32 ? "f32" : "f64");
  for (int d = 0; d < rank; d++) printf("%s%lld", d ? "x" : "", (long long)dims[d]);
  printf("] axes %d: %.3f%s\n", nax, s, ok ? "" : "   FAIL");
  if (!ok) failures++;
}

static void check1(int type, bool f32, int64_t batch, int64_t n) {
  int64_t d[2] = {batch, n};
  check(type, f32, 2, d, 1);
}

int main(void) {
  (void)tu_expect_bytes; /* a helper of prog_util.h this test does not use */
  static const int64_t primes[] = {67, 97, 127, 131, 257, 1009, 4099};
  static const int64_t comps[] = {100, 300, 360, 1000, 3000, 6000, 15015, 57120};
  for (int f = 0; f < 2; f++) {
    bool f32 = f == 0;
    for (int t = T_FFT; t <= T_IRFFT; t++) {
      for (int64_t n = 1; n <= 64; n++) check1(t, f32, n < 17 ? 11 : 3, n);
      for (size_t i = 0; i < sizeof primes / sizeof *primes; i++) check1(t, f32, primes[i] < 2000 ? 2 : 1, primes[i]);
      for (int e = 7; e <= 16; e++) check1(t, f32, e < 12 ? 9 : 1, (int64_t)1 << e);
      for (size_t i = 0; i < sizeof comps / sizeof *comps; i++) check1(t, f32, comps[i] < 5000 ? 3 : 1, comps[i]);
      int64_t d2[3] = {16, 128, 128}, d2b[3] = {3, 6, 10}, d2c[2] = {45, 64}, d3[4] = {14, 15, 16, 17};
      int64_t d3b[4] = {2, 8, 9, 10};
      check(t, f32, 3, d2, 2);
      check(t, f32, 3, d2b, 2);
      check(t, f32, 2, d2c, 2);
      check(t, f32, 4, d3, 3);
      check(t, f32, 4, d3b, 3);
    }
  }
  /* more lines than the widest kernels' lanes (16), not a multiple of them: whole blocks and a
   * partial one; and so at a four-step length (twiddles in lane blocks). After the cases above,
   * so that their inputs stay what they were. */
  for (int f = 0; f < 2; f++)
    for (int t = T_FFT; t <= T_IRFFT; t++) {
      check1(t, f == 0, 19, 96);
      check1(t, f == 0, 17, 20000);
    }
  printf("fft accuracy: %d cases, %d failed; worst f32 %.3f, f64 %.3f (eps * max|ref|)\n", cases,
         failures, worst[1], worst[0]);
  return failures ? 1 : 0;
}
