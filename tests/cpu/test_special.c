/* Tests for chlo.zeta, chlo.polygamma (f32/f64) and chlo._asin_acos_kernel (complex), which
 * the corpus does not execute. Expected values: jax.scipy.special.zeta / polygamma (XLA:CPU,
 * float64) and numpy.arcsin, computed once with jax 0.10.2 and pasted here; the edge cases
 * (x = 1, x < 1, poles at integer q <= 0, non-natural n) are the definitions'. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../common/check.h"
#include "prog_util.h"

static void unused_helpers(void) { (void)tu_expect_bytes; }

static bool close_to(double got, double want, double rel) {
  if (isnan(want)) return isnan(got);
  if (isinf(want)) return got == want;
  return fabs(got - want) <= rel * fabs(want) + 1e-300;
}

static void run2(const char *what, const char *op, const char *ty, int n, const void *a,
                 const void *b, void *out) {
  char text[1024];
  snprintf(text, sizeof text,
           "func.func @main(%%a: tensor<%d%s>, %%b: tensor<%d%s>) -> tensor<%d%s> {\n"
           "  %%r = \"%s\"(%%a, %%b) : (tensor<%d%s>, tensor<%d%s>) -> tensor<%d%s>\n"
           "  return %%r : tensor<%d%s>\n}\n",
           n, ty, n, ty, n, ty, op, n, ty, n, ty, n, ty, n, ty);
  cj_compiled *p = tu_compile_ok(what, text);
  if (!p) return;
  void *args[2] = {(void *)a, (void *)b}, *res[1] = {0};
  tu_run_ok(what, p, args, res, tu_pool());
  if (res[0]) memcpy(out, res[0], (size_t)n * (strcmp(ty, "xf32") == 0 ? 4 : 8));
  free(res[0]);
  tu_free(p);
}

int main(void) {
  (void)unused_helpers;
  /* zeta(x, q) */
  {
    const double x[12] = {2, 3, 1.5, 4.5, 2, 7, 1, 0.5, 2, 3, 2, 3};
    const double q[12] = {1, 2.5, 0.25, 10, 100, 0.75, 3, 2, -2, -2, -1.5, -1.5};
    const double want[12] = {1.6449340668482264, 0.11810202582086368, 10.213055360466598,
                             0.00010734107166531004, 0.010050166663333573, 7.512397920965798,
                             INFINITY, NAN, INFINITY, NAN, 9.379246644989122,
                             0.11810202582086413};
    double got[12];
    run2("zeta f64", "chlo.zeta", "xf64", 12, x, q, got);
    for (int i = 0; i < 12; i++)
      CHECK_MSG(close_to(got[i], want[i], 1e-13), "zeta(%g, %g) = %.17g, expected %.17g", x[i], q[i],
                got[i], want[i]);
    float xf[12], qf[12], gf[12];
    for (int i = 0; i < 12; i++) {
      xf[i] = (float)x[i];
      qf[i] = (float)q[i];
    }
    run2("zeta f32", "chlo.zeta", "xf32", 12, xf, qf, gf);
    for (int i = 0; i < 12; i++)
      CHECK_MSG(close_to(gf[i], (float)want[i], 2e-6), "zeta f32(%g, %g) = %.9g, expected %.9g",
                x[i], q[i], (double)gf[i], want[i]);
  }
  /* polygamma(n, x) */
  {
    const double n[9] = {0, 1, 2, 3, 1, 2, 4, 0.5, -1};
    const double x[9] = {0.5, 1, 2.5, 7.25, -0.5, 0.1, 30, 2, 2};
    const double want[9] = {-1.9635100260214255, 1.6449340668482264, -0.2362040516417271,
                            0.00643303759794016, 8.934802200544677, -2001.8614573783416,
                            -7.914941340181027e-06, NAN, NAN};
    double got[9];
    run2("polygamma f64", "chlo.polygamma", "xf64", 9, n, x, got);
    for (int i = 0; i < 9; i++)
      CHECK_MSG(close_to(got[i], want[i], 1e-12), "polygamma(%g, %g) = %.17g, expected %.17g", n[i],
                x[i], got[i], want[i]);
    const float nf[2] = {1, 2}, xf[2] = {3.0f, 0.75f};
    const float wf[2] = {0.3949340283870697f, -5.3026347160339355f};
    float gf[2];
    run2("polygamma f32", "chlo.polygamma", "xf32", 2, nf, xf, gf);
    for (int i = 0; i < 2; i++)
      CHECK_MSG(close_to(gf[i], wf[i], 2e-6), "polygamma f32 = %.9g, expected %.9g", (double)gf[i],
                (double)wf[i]);
  }
  /* _asin_acos_kernel: asin(z) = atan2(re z, re w) + i sign(im z) im w and
   * acos(z) = atan2(re w, re z) - i sign(im z) im w, against numpy.arcsin / arccos */
  {
    const double z[8] = {0.5, 0.25, -2, 3, 0.1, -0.2, 5, -1e-3};
    const double asin_np[8] = {0.5016088532755008,  0.28139605624529274, -0.5706527843210994,
                               1.9833870299165355,  0.09819751113349835, -0.19963938538953313,
                               1.5705922026526768, -2.292431690824109};
    const char *t =
        "func.func @main(%a: tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>> {\n"
        "  %r = \"chlo._asin_acos_kernel\"(%a) : (tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>>\n"
        "  return %r : tensor<4xcomplex<f64>>\n}\n";
    cj_compiled *p = tu_compile_ok("asin_acos_kernel", t);
    if (p) {
      void *args[1] = {(void *)z}, *res[1] = {0};
      tu_run_ok("asin_acos_kernel run", p, args, res, tu_pool());
      const double *w = res[0];
      for (int i = 0; w && i < 4; i++) {
        double re = atan2(z[2 * i], w[2 * i]);
        double im = (z[2 * i + 1] > 0 ? 1 : z[2 * i + 1] < 0 ? -1 : 0) * w[2 * i + 1];
        CHECK_MSG(fabs(re - asin_np[2 * i]) < 1e-13 && fabs(im - asin_np[2 * i + 1]) < 1e-13,
                  "asin from the kernel: (%.17g, %.17g), numpy (%.17g, %.17g)", re, im,
                  asin_np[2 * i], asin_np[2 * i + 1]);
        double are = atan2(w[2 * i], z[2 * i]);
        CHECK_MSG(fabs(are - (M_PI / 2 - asin_np[2 * i])) < 1e-13, "acos real part %.17g", are);
      }
      free(res[0]);
      tu_free(p);
    }
  }
  return check_report("cpu_special");
}
