/* The fast reduce path (k_reduce.c): sums of 131,072 f32 values near 2 over every shape of
 * reduction the kernel distinguishes (kept innermost dim, one reduced run per output, several
 * runs per output, the whole array, a single chunk of outputs split over the pool) stay within
 * 16 unit roundoffs of a double sum (a running f32 sum drifts ~80 past it), and give the same
 * bits with and without a thread pool (the tree depends only on the shape). bf16 sums
 * accumulate in f32: one rounding of the result type. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "prog_util.h"

static void unused_helpers(void) { (void)tu_expect_bytes; }

enum { D0 = 64, D1 = 32, D2 = 64, N = D0 * D1 * D2 };

static uint16_t to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static float from_bf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static void run_case(const char *ty, const char *dims, const char *out_shape, int nout,
                     const bool red[3], const void *x, bool bf16) {
  char text[1400];
  snprintf(text, sizeof text,
           "func.func public @main(%%arg0: tensor<%dx%dx%dx%s>) -> tensor<%s%s> {\n"
           "  %%zero = stablehlo.constant dense<0.0> : tensor<%s>\n"
           "  %%r = stablehlo.reduce(%%arg0 init: %%zero) applies stablehlo.add across "
           "dimensions = [%s] : (tensor<%dx%dx%dx%s>, tensor<%s>) -> tensor<%s%s>\n"
           "  return %%r : tensor<%s%s>\n}\n",
           D0, D1, D2, ty, out_shape, ty, ty, dims, D0, D1, D2, ty, ty, out_shape, ty, out_shape,
           ty);
  cj_status err = NULL;
  cj_compiled *p = tu_compile(text, &err);
  CHECK_MSG(p, "reduce over [%s] %s: %s", dims, ty, cj_status_message(err));
  cj_status_free(err);
  if (!p) return;
  /* the double reference, outputs in row-major order of the kept dims */
  static double ref[N];
  memset(ref, 0, sizeof ref);
  for (int i = 0; i < D0; i++)
    for (int j = 0; j < D1; j++)
      for (int k = 0; k < D2; k++) {
        int o = 0;
        if (!red[0]) o = o * D0 + i;
        if (!red[1]) o = o * D1 + j;
        if (!red[2]) o = o * D2 + k;
        int e = (i * D1 + j) * D2 + k;
        ref[o] += bf16 ? from_bf16(((const uint16_t *)x)[e]) : ((const float *)x)[e];
      }
  void *res[2][1] = {{0}, {0}};
  for (int pass = 0; pass < 2; pass++) {
    void *args[1] = {(void *)x};
    tu_run_ok("run", p, args, res[pass], pass ? tu_pool() : NULL);
  }
  double bound = bf16 ? ldexp(1, -8) : 16 * ldexp(1, -24), worst = 0;
  for (int o = 0; res[0][0] && o < nout; o++) {
    double got = bf16 ? from_bf16(((uint16_t *)res[0][0])[o]) : ((float *)res[0][0])[o];
    double e = fabs(got - ref[o]) / fabs(ref[o]);
    if (e > worst) worst = e;
  }
  CHECK_MSG(worst <= bound, "reduce over [%s] %s: relative error %.3g, bound %.3g", dims, ty,
            worst, bound);
  size_t bytes = (size_t)nout * (bf16 ? 2 : 4);
  CHECK_MSG(res[0][0] && res[1][0] && memcmp(res[0][0], res[1][0], bytes) == 0,
            "reduce over [%s] %s: results differ with and without a pool", dims, ty);
  free(res[0][0]);
  free(res[1][0]);
  tu_free(p);
}

/* reductions over a short innermost dim (the xyz of particles) fold each output in index
 * order: the bits of a C loop, for output counts around the groups of outputs */
static void short_runs(int n, int k, const char *op, const char *init) {
  char text[1400];
  snprintf(text, sizeof text,
           "func.func public @main(%%arg0: tensor<%dx%dxf32>) -> tensor<%dxf32> {\n"
           "  %%i = stablehlo.constant dense<%s> : tensor<f32>\n"
           "  %%r = stablehlo.reduce(%%arg0 init: %%i) applies stablehlo.%s across "
           "dimensions = [1] : (tensor<%dx%dxf32>, tensor<f32>) -> tensor<%dxf32>\n"
           "  return %%r : tensor<%dxf32>\n}\n",
           n, k, n, init, op, n, k, n, n);
  cj_compiled *p = tu_compile_ok("short runs", text);
  if (!p) return;
  float *x = malloc(sizeof(float) * (size_t)(n * k)), *e = malloc(sizeof(float) * (size_t)n);
  uint32_t seed = (uint32_t)(n * 31 + k);
  for (int i = 0; i < n * k; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = (float)(seed >> 8) * (1.0f / 16777216.0f) - 0.3f;
  }
  bool mul = op[0] == 'm' && op[1] == 'u', mx = op[1] == 'a';
  for (int o = 0; o < n; o++) {
    float a = mul ? 1.0f : mx ? -INFINITY : 0.0f;
    float r = x[o * k];
    for (int j = 1; j < k; j++) {
      float b = x[o * k + j];
      r = mul ? r * b : mx ? (r > b ? r : b) : r + b;
    }
    e[o] = mul ? a * r : mx ? (a > r ? a : r) : a + r;
  }
  void *args[1] = {x}, *res[1] = {0};
  tu_run_ok("run", p, args, res, NULL);
  CHECK_MSG(res[0] && memcmp(res[0], e, sizeof(float) * (size_t)n) == 0,
            "short runs %dx%d %s: not the index-order fold", n, k, op);
  free(res[0]);
  free(x);
  free(e);
  tu_free(p);
}

int main(void) {
  (void)unused_helpers;
  static const int ks[] = {2, 3, 7, 15};
  for (int n = 1; n <= 200; n += 63)
    for (int c = 0; c < 4; c++) {
      short_runs(n, ks[c], "add", "0.0");
      short_runs(n, ks[c], "multiply", "1.0");
      short_runs(n, ks[c], "maximum", "0xFF800000");
    }
  static float x[N];
  static uint16_t xb[N];
  uint32_t seed = 777;
  for (int i = 0; i < N; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = 2.0f + (float)(seed >> 8) * (0.5f / 16777216.0f);
    xb[i] = to_bf16(x[i]);
  }
  struct {
    const char *dims, *shape;
    int nout;
    bool red[3];
  } cases[] = {
      {"0, 1", "64x", D2, {true, true, false}},         /* kept innermost, one chunk: split */
      {"0", "32x64x", D1 * D2, {true, false, false}},   /* kept innermost, many chunks */
      {"2", "64x32x", D0 * D1, {false, false, true}},   /* one reduced run per output */
      {"0, 2", "32x", D1, {true, false, true}},         /* several runs per output */
      {"1, 2", "64x", D0, {false, true, true}},         /* one long run per output */
      {"0, 1, 2", "", 1, {true, true, true}},           /* everything: split */
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    run_case("f32", cases[c].dims, cases[c].shape, cases[c].nout, cases[c].red, x, false);
    run_case("bf16", cases[c].dims, cases[c].shape, cases[c].nout, cases[c].red, xb, true);
  }
  return check_report("cpu_reduce_fast");
}
