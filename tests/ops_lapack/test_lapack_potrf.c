/* lapack_?potrf_ffi of large matrices (k_lapack.c: from order 200 a factorization runs split
 * over the client's pool, lk_pp_potrf), f32 / f64 / complex64 / complex128, orders that are not
 * multiples of the block (65 and 130 below that order, 210 .. 600 above), batched and not, called as JAX calls it (column-major
 * layouts, lower). Checked in double against the input: the relative residual
 * max |L L^H - A| / max |A|, the upper triangle left as it was (LAPACK's potrf does not touch
 * it), the same factor as on one thread (no pool: LAPACK's own potrf), and a matrix that is not
 * positive definite in the batch reports info = the order of its first failing leading minor. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "../cpu/prog_util.h"

static const char *const ET[4] = {"f32", "f64", "complex<f32>", "complex<f64>"};
static const int ES[4] = {4, 8, 8, 16};
static const double EPS[4] = {1.2e-7, 2.3e-16, 1.2e-7, 2.3e-16};

static double complex get(int t, const void *x, size_t i) {
  switch (t) {
    case 0: return ((const float *)x)[i];
    case 1: return ((const double *)x)[i];
    case 2: return ((const float complex *)x)[i];
    default: return ((const double complex *)x)[i];
  }
}

static void put(int t, void *x, size_t i, double complex v) {
  switch (t) {
    case 0: ((float *)x)[i] = (float)creal(v); break;
    case 1: ((double *)x)[i] = creal(v); break;
    case 2: ((float complex *)x)[i] = (float complex)v; break;
    default: ((double complex *)x)[i] = v; break;
  }
}

/* a Hermitian positive definite n x n matrix (row-major) at element offset `at` of x:
 * M M^H / n + I, M's entries uniform in [-1, 1) */
static void make_hpd(int t, void *x, size_t at, int n, unsigned *seed) {
  double complex *m = malloc(sizeof *m * (size_t)n * (size_t)n);
  if (!m) return;
  for (size_t i = 0; i < (size_t)n * (size_t)n; i++) {
    double re = rand_r(seed) / (RAND_MAX + 1.0) * 2 - 1, im = rand_r(seed) / (RAND_MAX + 1.0) * 2 - 1;
    m[i] = t >= 2 ? re + im * I : re;
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) {
      double complex s = 0;
      for (int k = 0; k < n; k++) s += m[(size_t)i * n + k] * conj(m[(size_t)j * n + k]);
      s = s / n + (i == j);
      if (i == j) s = creal(s);
      put(t, x, at + (size_t)i * n + j, s);
      put(t, x, at + (size_t)j * n + i, conj(s));
    }
  free(m);
}

/* max |L L^H - A| / max |A| over the lower triangle, L the lower triangle of l */
static double residual(int t, const void *a, const void *l, size_t at, int n) {
  double err = 0, amax = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) {
      double complex s = 0;
      for (int k = 0; k <= j; k++) s += get(t, l, at + (size_t)i * n + k) * conj(get(t, l, at + (size_t)j * n + k));
      double complex av = get(t, a, at + (size_t)i * n + j);
      err = fmax(err, cabs(s - av));
      amax = fmax(amax, cabs(av));
    }
  return err / amax;
}

static cj_compiled *compile_potrf(int t, int batch, int n) {
  static const char L[4] = {'s', 'd', 'c', 'z'};
  char ty[64], prog[1024];
  snprintf(ty, sizeof ty, "tensor<%dx%dx%dx%s>", batch, n, n, ET[t]);
  snprintf(prog, sizeof prog,
           "func.func @main(%%a: %s) -> (%s, tensor<%dxi32>) {\n"
           "  %%r:2 = stablehlo.custom_call @lapack_%cpotrf_ffi(%%a) {mhlo.backend_config = {uplo = "
           "76 : ui8}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], result_layouts = "
           "[dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>]} : (%s) -> (%s, "
           "tensor<%dxi32>)\n"
           "  func.return %%r#0, %%r#1 : %s, tensor<%dxi32>\n}\n",
           ty, ty, batch, L[t], ty, ty, batch, ty, batch);
  cj_status err = NULL;
  cj_compiled *p = tu_compile(prog, &err);
  CHECK_MSG(p != NULL, "compile: %s", err ? cj_status_message(err) : "");
  cj_status_free(err);
  return p;
}

static void run(cj_compiled *p, void *a, void **res, cj_threadpool *pool) {
  void *args[1] = {a};
  cj_status st = tu_run(p, args, res, pool);
  CHECK_MSG(st == NULL, "run: %s", st ? cj_status_message(st) : "");
  cj_status_free(st);
}

/* batch element 0 positive definite; element 1 (when batch > 1) with A[q][q] = -n, which makes
 * the leading minor of order q + 1 the first one that is not positive definite */
static void check_one(int t, int batch, int n, int q) {
  size_t nn = (size_t)n * n, bytes = (size_t)batch * nn * ES[t];
  unsigned seed = (unsigned)(n * 4 + t);
  void *a = malloc(bytes);
  if (!a) return;
  for (int b = 0; b < batch; b++) make_hpd(t, a, b * nn, n, &seed);
  if (batch > 1) put(t, a, nn + (size_t)q * n + q, -n);
  cj_compiled *p = compile_potrf(t, batch, n);
  void *par[2] = {NULL, NULL}, *one[2] = {NULL, NULL};
  if (p) {
    run(p, a, par, tu_pool());
    run(p, a, one, NULL);
    tu_free(p);
  }
  if (par[0] && one[0]) {
    const int32_t *info = par[1], *info1 = one[1];
    double tol = 4 * n * EPS[t];
    double r = residual(t, a, par[0], 0, n), r1 = residual(t, a, one[0], 0, n);
    CHECK_MSG(r <= tol, "%s n = %d: residual %g (one thread: %g), tolerance %g", ET[t], n, r, r1, tol);
    CHECK_MSG(r1 <= tol, "%s n = %d: residual on one thread %g", ET[t], n, r1);
    double diff = 0, lmax = 0;
    bool upper = true;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        size_t k = (size_t)i * n + j;
        if (j > i) {
          upper = upper && get(t, par[0], k) == get(t, a, k);
          continue;
        }
        diff = fmax(diff, cabs(get(t, par[0], k) - get(t, one[0], k)));
        lmax = fmax(lmax, cabs(get(t, one[0], k)));
      }
    CHECK_MSG(upper, "%s n = %d: the upper triangle changed", ET[t], n);
    CHECK_MSG(diff <= tol * lmax, "%s n = %d: %g from the factor on one thread", ET[t], n, diff / lmax);
    CHECK_EQ_INT(info[0], 0);
    CHECK_EQ_INT(info1[0], 0);
    if (batch > 1) {
      CHECK_MSG(info[1] == q + 1 && info1[1] == q + 1, "%s n = %d: info %d (one thread %d), expected %d",
                ET[t], n, info[1], info1[1], q + 1);
      /* the factored part before the failing column is the leading block's factor */
      double d = 0;
      for (int i = 0; i < q; i++)
        for (int j = 0; j <= i; j++)
          d = fmax(d, cabs(get(t, par[0], nn + (size_t)i * n + j) - get(t, one[0], nn + (size_t)i * n + j)));
      CHECK_MSG(d <= tol * lmax, "%s n = %d: failing element's leading factor %g off", ET[t], n, d);
    }
  }
  for (int j = 0; j < 2; j++) {
    free(par[j]);
    free(one[j]);
  }
  free(a);
}

int main(void) {
  (void)tu_expect_bytes; /* (prog_util.h's, unused here) */
  printf("ops_lapack_potrf: the pool has %d threads%s\n", cj_pool_size(tu_pool()),
         cj_pool_size(tu_pool()) > 1 ? "" : " (so only LAPACK's own potrf runs)");
  for (int t = 0; t < 4; t++) {
    check_one(t, 1, 65, 0);
    check_one(t, 2, 130, 100);
    check_one(t, 2, 210, 100);
    check_one(t, 1, 257, 0);
    check_one(t, 2, 301, 7);
  }
  check_one(0, 1, 600, 0);
  check_one(1, 2, 600, 533);
  return check_report("ops_lapack_potrf");
}
