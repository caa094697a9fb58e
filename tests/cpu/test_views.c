/* Static slices read in place by fused elementwise loops (a view: offset and strides of the
 * operand's buffer, no copy): stencils of shifted and strided slices over one and many blocks,
 * slices of slices and of broadcasts, 16-bit storage, slices of constants, a slice used by a
 * non-elementwise op too (then copied), a buffer read by one group at two indexings (a permuted
 * broadcast of it) whose output could be written over it (it must not be), and a while loop
 * whose body reads its carry through slices. Also loop-invariant while carries (read in place,
 * not copied) and constant scalars expanded at compile time. Every case is compared with a C
 * loop. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../common/check.h"
#include "prog_util.h"

/* runs p on one f32 argument and returns its first result (malloc'ed) */
static float *run1(cj_compiled *p, float *x) {
  void *args[1] = {x};
  void *res[4] = {0};
  cj_status st = tu_run(p, args, res, tu_pool());
  CHECK_MSG(st == NULL, "execute: %s", cj_status_message(st));
  cj_status_free(st);
  for (int j = 1; j < 4; j++) free(res[j]);
  return res[0];
}

static int count_bad(const float *r, const float *e, size_t n) {
  int bad = 0;
  for (size_t i = 0; r && i < n; i++)
    if (fabsf(r[i] - e[i]) > 1e-5f * (1 + fabsf(e[i]))) bad++;
  return bad;
}

/* out = x[0:R-2, 1:C-1] + 2 x[2:R, 1:C-1] - x[1:R-1, 0:C-2] * x[1:R-1, 2:C] + x[1:R-1:1, 1:C-1]
 * over R x C (many blocks when large): no slice is copied (no scratch) */
static void test_stencil(int R, int C) {
  int r = R - 2, c = C - 2;
  char text[4096];
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<%dx%dxf32>) -> tensor<%dx%dxf32> {\n"
           "  %%n = stablehlo.slice %%x [0:%d, 1:%d] : (tensor<%dx%dxf32>) -> tensor<%dx%dxf32>\n"
           "  %%s = stablehlo.slice %%x [2:%d, 1:%d] : (tensor<%dx%dxf32>) -> tensor<%dx%dxf32>\n"
           "  %%w = stablehlo.slice %%x [1:%d, 0:%d] : (tensor<%dx%dxf32>) -> tensor<%dx%dxf32>\n"
           "  %%e = stablehlo.slice %%x [1:%d, 2:%d] : (tensor<%dx%dxf32>) -> tensor<%dx%dxf32>\n"
           "  %%m = stablehlo.slice %%x [1:%d, 1:%d] : (tensor<%dx%dxf32>) -> tensor<%dx%dxf32>\n"
           "  %%two = stablehlo.constant dense<2.0> : tensor<%dx%dxf32>\n"
           "  %%0 = stablehlo.multiply %%two, %%s : tensor<%dx%dxf32>\n"
           "  %%1 = stablehlo.add %%n, %%0 : tensor<%dx%dxf32>\n"
           "  %%2 = stablehlo.multiply %%w, %%e : tensor<%dx%dxf32>\n"
           "  %%3 = stablehlo.subtract %%1, %%2 : tensor<%dx%dxf32>\n"
           "  %%4 = stablehlo.add %%3, %%m : tensor<%dx%dxf32>\n"
           "  return %%4 : tensor<%dx%dxf32>\n}\n",
           R, C, r, c, r, C - 1, R, C, r, c, R, C - 1, R, C, r, c, R - 1, c, R, C, r, c, R - 1, C,
           R, C, r, c, R - 1, C - 1, R, C, r, c, r, c, r, c, r, c, r, c, r, c, r, c, r, c);
  cj_compiled *p = tu_compile_ok("stencil", text);
  if (!p) return;
  CHECK_MSG(tu_info(p)->temp_bytes == 0, "stencil %dx%d: %lld scratch bytes (a slice copied)", R,
            C, (long long)tu_info(p)->temp_bytes);
  float *x = malloc(sizeof(float) * (size_t)R * C), *e = malloc(sizeof(float) * (size_t)r * c);
  uint32_t s = 7;
  for (int i = 0; i < R * C; i++) x[i] = tu_frand(&s) * 4;
#define X(i, j) x[(size_t)(i) * C + (j)]
  for (int i = 0; i < r; i++)
    for (int j = 0; j < c; j++)
      e[(size_t)i * c + j] = X(i, j + 1) + 2 * X(i + 2, j + 1) - X(i + 1, j) * X(i + 1, j + 2) +
                             X(i + 1, j + 1);
#undef X
  float *got = run1(p, x);
  CHECK_MSG(count_bad(got, e, (size_t)r * c) == 0, "stencil %dx%d: %d elements differ", R, C,
            count_bad(got, e, (size_t)r * c));
  free(got);
  free(x);
  free(e);
  tu_free(p);
}

/* strided slices, a slice of a slice, a slice of a broadcast, f16 storage */
static void test_strided(void) {
  cj_compiled *p = tu_compile_ok(
      "strided",
      "func.func @main(%x: tensor<9x20xf32>) -> tensor<3x4xf32> {\n"
      "  %a = stablehlo.slice %x [1:9:3, 2:20:5] : (tensor<9x20xf32>) -> tensor<3x4xf32>\n"
      "  %b0 = stablehlo.slice %x [2:9, 1:17:2] : (tensor<9x20xf32>) -> tensor<7x8xf32>\n"
      "  %b = stablehlo.slice %b0 [1:7:2, 4:8] : (tensor<7x8xf32>) -> tensor<3x4xf32>\n"
      "  %row = stablehlo.slice %x [4:5, 0:20] : (tensor<9x20xf32>) -> tensor<1x20xf32>\n"
      "  %r = stablehlo.reshape %row : (tensor<1x20xf32>) -> tensor<20xf32>\n"
      "  %bc = stablehlo.broadcast_in_dim %r, dims = [1] : (tensor<20xf32>) -> tensor<6x20xf32>\n"
      "  %c = stablehlo.slice %bc [1:6:2, 3:19:4] : (tensor<6x20xf32>) -> tensor<3x4xf32>\n"
      "  %h = stablehlo.convert %x : (tensor<9x20xf32>) -> tensor<9x20xf16>\n"
      "  %hs = stablehlo.slice %h [0:9:4, 13:17] : (tensor<9x20xf16>) -> tensor<3x4xf16>\n"
      "  %hf = stablehlo.convert %hs : (tensor<3x4xf16>) -> tensor<3x4xf32>\n"
      "  %0 = stablehlo.multiply %a, %b : tensor<3x4xf32>\n"
      "  %1 = stablehlo.add %0, %c : tensor<3x4xf32>\n"
      "  %2 = stablehlo.subtract %1, %hf : tensor<3x4xf32>\n"
      "  return %2 : tensor<3x4xf32>\n}\n");
  if (!p) return;
  float x[9 * 20], e[12];
  uint32_t s = 3;
  for (int i = 0; i < 9 * 20; i++) x[i] = (float)(int)(tu_frand(&s) * 64) / 8; /* exact in f16 */
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++) {
      float a = x[(1 + 3 * i) * 20 + 2 + 5 * j];
      float b = x[(2 + 1 + 2 * i) * 20 + 1 + 2 * (4 + j)];
      float c = x[4 * 20 + 3 + 4 * j];
      float h = x[(4 * i) * 20 + 13 + j];
      e[i * 4 + j] = a * b + c - h;
    }
  float *got = run1(p, x);
  CHECK_MSG(count_bad(got, e, 12) == 0, "strided slices: %d elements differ", count_bad(got, e, 12));
  free(got);
  tu_free(p);
}

/* a slice used by an elementwise op and by a non-elementwise one (a transpose): copied once,
 * both read the right values */
static void test_mixed_users(void) {
  cj_compiled *p = tu_compile_ok(
      "mixed users",
      "func.func @main(%x: tensor<6x6xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {\n"
      "  %a = stablehlo.slice %x [1:5, 2:6] : (tensor<6x6xf32>) -> tensor<4x4xf32>\n"
      "  %t = stablehlo.transpose %a, dims = [1, 0] : (tensor<4x4xf32>) -> tensor<4x4xf32>\n"
      "  %0 = stablehlo.add %a, %t : tensor<4x4xf32>\n"
      "  return %0, %t : tensor<4x4xf32>, tensor<4x4xf32>\n}\n");
  if (!p) return;
  float x[36], e[16], et[16];
  for (int i = 0; i < 36; i++) x[i] = (float)i;
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) {
      et[i * 4 + j] = x[(1 + j) * 6 + 2 + i];
      e[i * 4 + j] = x[(1 + i) * 6 + 2 + j] + et[i * 4 + j];
    }
  void *args[1] = {x};
  void *res[2] = {0};
  tu_run_ok("test_mixed_users", p, args, res, tu_pool());
  CHECK_EQ_INT(count_bad(res[0], e, 16), 0);
  CHECK_EQ_INT(count_bad(res[1], et, 16), 0);
  free(res[0]);
  free(res[1]);
  tu_free(p);
}

/* y = (t + t^T) t where t is a scratch buffer dying at the group, t^T a broadcast_in_dim with
 * permuted dimensions (a strided view of t), and y a scratch buffer too (transposed after): writing y over t in place would let later blocks
 * read elements of t already overwritten (64 x 64 f32: many blocks) */
static void test_alias(void) {
  cj_compiled *p = tu_compile_ok(
      "alias",
      "func.func @main(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {\n"
      "  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>\n"
      "  %b = stablehlo.broadcast_in_dim %t, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>\n"
      "  %0 = stablehlo.add %t, %b : tensor<64x64xf32>\n"
      "  %1 = stablehlo.multiply %0, %t : tensor<64x64xf32>\n"
      "  %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>\n"
      "  return %2 : tensor<64x64xf32>\n}\n");
  if (!p) return;
  size_t n = 64 * 64;
  float *x = malloc(n * 4), *e = malloc(n * 4);
  uint32_t s = 11;
  for (size_t i = 0; i < n; i++) x[i] = tu_frand(&s);
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 64; j++) /* t[i][j] = x[j][i] */
      e[j * 64 + i] = (x[j * 64 + i] + x[i * 64 + j]) * x[j * 64 + i]; /* transposed */
  float *got = run1(p, x);
  CHECK_MSG(count_bad(got, e, n) == 0, "alias: %d elements differ", count_bad(got, e, n));
  free(got);
  free(x);
  free(e);
  tu_free(p);
}

/* Jacobi sweeps in a while loop: u <- 0.25 (p[:-2,1:-1] + p[2:,1:-1] + p[1:-1,:-2] + p[1:-1,2:]
 * + f) with p = pad(u, 1); the carry is read through slices and rewritten every iteration */
static void test_jacobi_loop(void) {
  enum { N = 48, IT = 7 };
  char text[4096];
  snprintf(text, sizeof text,
           "func.func @main(%%f: tensor<%dx%dxf32>) -> tensor<%dx%dxf32> {\n"
           "  %%i0 = stablehlo.constant dense<0> : tensor<i32>\n"
           "  %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
           "  %%u0 = stablehlo.broadcast_in_dim %%z, dims = [] : (tensor<f32>) -> tensor<%dx%dxf32>\n"
           "  %%r:2 = stablehlo.while(%%i = %%i0, %%u = %%u0) : tensor<i32>, tensor<%dx%dxf32>\n"
           "   cond {\n"
           "    %%n = stablehlo.constant dense<%d> : tensor<i32>\n"
           "    %%c = stablehlo.compare LT, %%i, %%n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
           "    stablehlo.return %%c : tensor<i1>\n"
           "  } do {\n"
           "    %%p = stablehlo.pad %%u, %%z, low = [1, 1], high = [1, 1], interior = [0, 0] : (tensor<%dx%dxf32>, tensor<f32>) -> tensor<%dx%dxf32>\n"
           "    %%a = stablehlo.slice %%p [0:%d, 1:%d] : (tensor<%dx%dxf32>) -> tensor<%dx%dxf32>\n"
           "    %%b = stablehlo.slice %%p [2:%d, 1:%d] : (tensor<%dx%dxf32>) -> tensor<%dx%dxf32>\n"
           "    %%c = stablehlo.slice %%p [1:%d, 0:%d] : (tensor<%dx%dxf32>) -> tensor<%dx%dxf32>\n"
           "    %%d = stablehlo.slice %%p [1:%d, 2:%d] : (tensor<%dx%dxf32>) -> tensor<%dx%dxf32>\n"
           "    %%q = stablehlo.constant dense<0.25> : tensor<%dx%dxf32>\n"
           "    %%0 = stablehlo.add %%a, %%b : tensor<%dx%dxf32>\n"
           "    %%1 = stablehlo.add %%0, %%c : tensor<%dx%dxf32>\n"
           "    %%2 = stablehlo.add %%1, %%d : tensor<%dx%dxf32>\n"
           "    %%3 = stablehlo.add %%2, %%f : tensor<%dx%dxf32>\n"
           "    %%4 = stablehlo.multiply %%q, %%3 : tensor<%dx%dxf32>\n"
           "    %%one = stablehlo.constant dense<1> : tensor<i32>\n"
           "    %%i1 = stablehlo.add %%i, %%one : tensor<i32>\n"
           "    stablehlo.return %%i1, %%4 : tensor<i32>, tensor<%dx%dxf32>\n"
           "  }\n"
           "  return %%r#1 : tensor<%dx%dxf32>\n}\n",
           N, N, N, N, N, N, N, N, IT, N, N, N + 2, N + 2,
           N, N + 1, N + 2, N + 2, N, N,
           N + 2, N + 1, N + 2, N + 2, N, N,
           N + 1, N, N + 2, N + 2, N, N,
           N + 1, N + 2, N + 2, N + 2, N, N,
           N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N);
  cj_compiled *p = tu_compile_ok("jacobi loop", text);
  if (!p) return;
  static float f[N * N], u[N * N], un[N * N];
  uint32_t s = 5;
  for (int i = 0; i < N * N; i++) f[i] = tu_frand(&s);
  memset(u, 0, sizeof u);
  for (int it = 0; it < IT; it++) {
#define U(i, j) ((i) < 0 || (j) < 0 || (i) >= N || (j) >= N ? 0.0f : u[(i) * N + (j)])
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++)
        un[i * N + j] = 0.25f * (U(i - 1, j) + U(i + 1, j) + U(i, j - 1) + U(i, j + 1) + f[i * N + j]);
#undef U
    memcpy(u, un, sizeof u);
  }
  float *got = run1(p, f);
  CHECK_MSG(count_bad(got, u, N * N) == 0, "jacobi loop: %d elements differ",
            count_bad(got, u, N * N));
  free(got);
  tu_free(p);
}

/* A while whose body returns an argument unchanged reads the initial buffer in place: a
 * 256x256 matrix passed through a loop (x <- m x + x, 3 times) is not copied into the scratch;
 * a second carried value starting from the same matrix and updated (b <- b + m) still gets its
 * own buffer. */
static void test_invariant_carry(void) {
  enum { N = 256, IT = 3 };
  char text[4096];
  snprintf(text, sizeof text,
           "func.func @main(%%m: tensor<%dx%dxf32>, %%v: tensor<%dxf32>) -> (tensor<%dxf32>, tensor<4x4xf32>) {\n"
           "  %%i0 = stablehlo.constant dense<0> : tensor<i32>\n"
           "  %%s = stablehlo.slice %%m [0:4, 0:4] : (tensor<%dx%dxf32>) -> tensor<4x4xf32>\n"
           "  %%r:5 = stablehlo.while(%%i = %%i0, %%a = %%m, %%x = %%v, %%c = %%s, %%b = %%s) : tensor<i32>, tensor<%dx%dxf32>, tensor<%dxf32>, tensor<4x4xf32>, tensor<4x4xf32>\n"
           "   cond {\n"
           "    %%n = stablehlo.constant dense<%d> : tensor<i32>\n"
           "    %%p = stablehlo.compare LT, %%i, %%n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
           "    stablehlo.return %%p : tensor<i1>\n"
           "  } do {\n"
           "    %%y = stablehlo.dot_general %%a, %%x, contracting_dims = [1] x [0] : (tensor<%dx%dxf32>, tensor<%dxf32>) -> tensor<%dxf32>\n"
           "    %%x1 = stablehlo.add %%y, %%x : tensor<%dxf32>\n"
           "    %%b1 = stablehlo.add %%b, %%c : tensor<4x4xf32>\n"
           "    %%one = stablehlo.constant dense<1> : tensor<i32>\n"
           "    %%i1 = stablehlo.add %%i, %%one : tensor<i32>\n"
           "    stablehlo.return %%i1, %%a, %%x1, %%c, %%b1 : tensor<i32>, tensor<%dx%dxf32>, tensor<%dxf32>, tensor<4x4xf32>, tensor<4x4xf32>\n"
           "  }\n"
           "  return %%r#2, %%r#4 : tensor<%dxf32>, tensor<4x4xf32>\n}\n",
           N, N, N, N, N, N, N, N, N, IT, N, N, N, N, N, N, N, N, N);
  cj_compiled *p = tu_compile_ok("invariant carry", text);
  if (!p) return;
  CHECK_MSG(tu_info(p)->temp_bytes < (int64_t)N * N * 4, "invariant carry: %lld scratch bytes",
            (long long)tu_info(p)->temp_bytes);
  float *m = malloc(sizeof(float) * N * N), x[N], y[N];
  uint32_t s = 13;
  for (int i = 0; i < N * N; i++) m[i] = tu_frand(&s) / 16;
  for (int i = 0; i < N; i++) x[i] = tu_frand(&s);
  void *args[2] = {m, x};
  void *res[3] = {0};
  tu_run_ok("test_invariant_carry", p, args, res, tu_pool());
  for (int it = 0; it < IT; it++) {
    for (int i = 0; i < N; i++) {
      double acc = 0;
      for (int k = 0; k < N; k++) acc += (double)m[i * N + k] * x[k];
      y[i] = (float)acc + x[i];
    }
    memcpy(x, y, sizeof x);
  }
  float b[16];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) b[i * 4 + j] = m[i * N + j] * (1 + IT);
  CHECK_MSG(count_bad(res[0], x, N) == 0, "invariant carry: x has %d wrong", count_bad(res[0], x, N));
  CHECK_MSG(count_bad(res[1], b, 16) == 0, "invariant carry: b has %d wrong", count_bad(res[1], b, 16));
  for (int j = 0; j < 2; j++) free(res[j]);
  free(m);
  tu_free(p);
}

/* slices of a constant (i32), one strided, feeding an integer group */
static void test_const_slice(void) {
  int32_t e[4] = {5 + 0, 7 + 1, 9 + 4, 11 + 5};
  CHECK(tu_expect_bytes("constant slices",
                        "func.func @main() -> tensor<2x2xi32> {\n"
                        "  %c = stablehlo.constant dense<[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]> : tensor<3x4xi32>\n"
                        "  %a = stablehlo.slice %c [1:3, 1:4:2] : (tensor<3x4xi32>) -> tensor<2x2xi32>\n"
                        "  %b = stablehlo.slice %c [0:2, 0:2] : (tensor<3x4xi32>) -> tensor<2x2xi32>\n"
                        "  %0 = stablehlo.add %a, %b : tensor<2x2xi32>\n"
                        "  return %0 : tensor<2x2xi32>\n}\n",
                        e, sizeof e));
  /* one element of a constant (a scalar read at an offset, expanded at compile time) and
   * splat constants in a small group with an argument */
  cj_compiled *p = tu_compile_ok(
      "constant element",
      "func.func @main(%x: tensor<1x2xi32>) -> tensor<1x2xi32> {\n"
      "  %c = stablehlo.constant dense<[[0, 1, 5], [2, 3, 6]]> : tensor<2x3xi32>\n"
      "  %a = stablehlo.slice %c [1:2, 1:2] : (tensor<2x3xi32>) -> tensor<1x1xi32>\n"
      "  %b = stablehlo.broadcast_in_dim %a, dims = [0, 1] : (tensor<1x1xi32>) -> tensor<1x2xi32>\n"
      "  %s = stablehlo.constant dense<7> : tensor<1x2xi32>\n"
      "  %0 = stablehlo.multiply %x, %s : tensor<1x2xi32>\n"
      "  %1 = stablehlo.add %0, %b : tensor<1x2xi32>\n"
      "  return %1 : tensor<1x2xi32>\n}\n");
  if (!p) return;
  int32_t x[2] = {4, -5}, e2[2] = {4 * 7 + 3, -5 * 7 + 3};
  int32_t *got = (int32_t *)run1(p, (float *)x);
  CHECK_MSG(got && got[0] == e2[0] && got[1] == e2[1], "constant element: %d %d", got ? got[0] : 0,
            got ? got[1] : 0);
  free(got);
  tu_free(p);
}

/* a value broadcast along a short innermost dim ([n] -> [n, 3], the xyz of particles) read by
 * a fused group: each value repeated 3 times, for row counts around the vector widths */
static void test_rep3(int n) {
  char text[2048];
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<%dx3xf32>) -> tensor<%dx3xf32> {\n"
           "  %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
           "  %%s = stablehlo.reduce(%%x init: %%z) applies stablehlo.add across dimensions = [1]"
           " : (tensor<%dx3xf32>, tensor<f32>) -> tensor<%dxf32>\n"
           "  %%b = stablehlo.broadcast_in_dim %%s, dims = [0] : (tensor<%dxf32>) -> tensor<%dx3xf32>\n"
           "  %%0 = stablehlo.multiply %%x, %%b : tensor<%dx3xf32>\n"
           "  return %%0 : tensor<%dx3xf32>\n}\n",
           n, n, n, n, n, n, n, n);
  cj_compiled *p = tu_compile_ok("rep3", text);
  if (!p) return;
  float *x = malloc(sizeof(float) * 3 * (size_t)n), *e = malloc(sizeof(float) * 3 * (size_t)n);
  uint32_t s = 11;
  for (int i = 0; i < 3 * n; i++) x[i] = tu_frand(&s) * 4;
  for (int i = 0; i < n; i++) {
    float sum = (x[3 * i] + x[3 * i + 1]) + x[3 * i + 2];
    for (int k = 0; k < 3; k++) e[3 * i + k] = x[3 * i + k] * sum;
  }
  float *got = run1(p, x);
  CHECK_MSG(got && memcmp(got, e, sizeof(float) * 3 * (size_t)n) == 0,
            "rep3 %d: %d elements differ", n, count_bad(got, e, 3 * (size_t)n));
  free(got);
  free(x);
  free(e);
  tu_free(p);
}

/* out[i, k] = x[i] + y[i, k] on integers of es bytes, x broadcast along a short last dim of K
 * (each element repeated K times: a multiply per output word where es * K is 2, 4 or 8) */
static void test_rep_int(int es, int K) {
  enum { N = 301 };
  const char *t = es == 1 ? "i8" : es == 2 ? "i16" : "i32";
  char text[1024];
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<%dx%s>, %%y: tensor<%dx%dx%s>) -> tensor<%dx%dx%s> {\n"
           "  %%b = stablehlo.broadcast_in_dim %%x, dims = [0] : (tensor<%dx%s>) -> tensor<%dx%dx%s>\n"
           "  %%0 = stablehlo.add %%b, %%y : tensor<%dx%dx%s>\n"
           "  return %%0 : tensor<%dx%dx%s>\n}\n",
           N, t, N, K, t, N, K, t, N, t, N, K, t, N, K, t, N, K, t);
  cj_compiled *p = tu_compile_ok("rep_int", text);
  if (!p) return;
  unsigned char x[N * 4], y[N * 8 * 4], e[N * 8 * 4];
  uint32_t s = 5;
  for (int i = 0; i < N * es; i++) x[i] = (unsigned char)tu_rand16(&s);
  for (int i = 0; i < N * K * es; i++) y[i] = (unsigned char)tu_rand16(&s);
  for (int i = 0; i < N; i++)
    for (int k = 0; k < K; k++) {
      uint32_t a = 0, b = 0, r;
      memcpy(&a, x + i * es, (size_t)es);
      memcpy(&b, y + (i * K + k) * es, (size_t)es);
      r = a + b;
      memcpy(e + (i * K + k) * es, &r, (size_t)es);
    }
  void *args[2] = {x, y};
  void *res[1] = {0};
  cj_status st = tu_run(p, args, res, tu_pool());
  CHECK_MSG(st == NULL, "execute: %s", cj_status_message(st));
  cj_status_free(st);
  CHECK_MSG(res[0] && memcmp(res[0], e, (size_t)(N * K * es)) == 0,
            "broadcast of %d-byte integers %d times differs", es, K);
  free(res[0]);
  tu_free(p);
}

int main(void) {
  for (int es = 1; es <= 4; es *= 2)
    for (int K = 2; K <= 8; K++) test_rep_int(es, K);
  test_stencil(6, 7);
  test_stencil(130, 200); /* many blocks */
  test_stencil(40, 20);   /* rows of 72 bytes: the last 64-byte move overlaps */
  test_stencil(9, 1100);  /* rows longer than a block */
  test_stencil(5, 66);    /* rows of 64 floats (the benchmark's stencil) */
  for (int n = 1; n <= 700; n += 233) test_rep3(n);
  test_rep3(16);
  test_strided();
  test_const_slice();
  test_mixed_users();
  test_alias();
  test_jacobi_loop();
  test_invariant_carry();
  cj_pool_destroy(tu_pool());
  return check_report("cpu_views");
}
