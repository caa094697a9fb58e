/* The plan executor and its kernels, end to end through the CPU backend's vtable: fused
 * elementwise chains with broadcasts (small and large, in parallel), buffer reuse, while/if/case,
 * reductions (fast bodies over every layout, variadic bodies, empty dimensions), dot_general
 * (batching and contracting permutations against a naive reference, large f32 through the
 * packed GEMM, integers, bf16), data movement (transpose, reverse, slice, pad with negative and
 * interior padding, concatenate, dynamic_slice clamping, dynamic_update_slice), donation
 * (results written over donated arguments, with and without hazards), concurrent executions,
 * serialization round trips and corruption, program info, and error paths (unsupported ops at
 * compile time, failing checks with their message). */
#include <math.h>
#include <pthread.h>
#include <stdint.h>

#include "../common/check.h"
#include "prog_util.h"
#include "runtime/executable.h"

/* ---- fusion with broadcasts: tanh(a * x + b) * c over a [rows, cols] matrix, a per row,
 * b per column, c a scalar; compared with a C loop; sizes cover one block and many blocks */
static void test_fused_chain(int rows, int cols, cj_threadpool *pool) {
  char text[2048];
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<%dx%dxf32>, %%a: tensor<%dxf32>, %%b: tensor<%dxf32>) -> tensor<%dx%dxf32> {\n"
           "  %%ab = stablehlo.broadcast_in_dim %%a, dims = [0] : (tensor<%dxf32>) -> tensor<%dx%dxf32>\n"
           "  %%bb = stablehlo.broadcast_in_dim %%b, dims = [1] : (tensor<%dxf32>) -> tensor<%dx%dxf32>\n"
           "  %%c = stablehlo.constant dense<1.5> : tensor<%dx%dxf32>\n"
           "  %%0 = stablehlo.multiply %%ab, %%x : tensor<%dx%dxf32>\n"
           "  %%1 = stablehlo.add %%0, %%bb : tensor<%dx%dxf32>\n"
           "  %%2 = stablehlo.tanh %%1 : tensor<%dx%dxf32>\n"
           "  %%3 = stablehlo.multiply %%2, %%c : tensor<%dx%dxf32>\n"
           "  return %%3 : tensor<%dx%dxf32>\n}\n",
           rows, cols, rows, cols, rows, cols, rows, rows, cols, cols, rows, cols, rows, cols, rows,
           cols, rows, cols, rows, cols, rows, cols, rows, cols);
  cj_compiled *p = tu_compile_ok("fused chain", text);
  if (!p) return;
  /* one fused step: no intermediate buffer in the arena */
  CHECK_MSG(tu_info(p)->temp_bytes == 0, "fused chain keeps %lld scratch bytes",
            (long long)tu_info(p)->temp_bytes);
  size_t n = (size_t)rows * (size_t)cols;
  float *x = malloc(n * 4), *a = malloc((size_t)rows * 4), *b = malloc((size_t)cols * 4);
  uint32_t s = 1;
  for (size_t i = 0; i < n; i++) x[i] = tu_frand(&s) * 4;
  for (int i = 0; i < rows; i++) a[i] = tu_frand(&s) * 2;
  for (int i = 0; i < cols; i++) b[i] = tu_frand(&s);
  void *args[3] = {x, a, b};
  void *res[1] = {0};
  tu_run_ok("test_fused_chain", p, args, res, pool);
  const float *r = res[0];
  int bad = 0;
  for (int i = 0; i < rows && r; i++)
    for (int j = 0; j < cols; j++) {
      float e = tanhf(a[i] * x[(size_t)i * cols + j] + b[j]) * 1.5f;
      if (fabsf(r[(size_t)i * cols + j] - e) > 1e-5f) bad++;
    }
  CHECK_MSG(bad == 0, "fused chain %dx%d: %d elements differ", rows, cols, bad);
  free(res[0]);
  free(x);
  free(a);
  free(b);
  tu_free(p);
}

/* ---- buffer reuse: a chain of non-fusible ops (transposes) over a big tensor keeps at most a
 * few buffers alive */
static void test_reuse(void) {
  cj_compiled *p = tu_compile_ok(
      "reuse",
      "func.func @main(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {\n"
      "  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>\n"
      "  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>\n"
      "  %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>\n"
      "  %3 = stablehlo.transpose %2, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>\n"
      "  %4 = stablehlo.transpose %3, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>\n"
      "  return %4 : tensor<64x64xf32>\n}\n");
  if (!p) return;
  /* 4 intermediates of 16 KiB (5 transposes: the result is x^T); two alive at a time */
  CHECK_MSG(tu_info(p)->temp_bytes <= 2 * 64 * 64 * 4, "temp bytes %lld", (long long)tu_info(p)->temp_bytes);
  float *x = malloc(64 * 64 * 4);
  for (int i = 0; i < 64 * 64; i++) x[i] = (float)i;
  void *args[1] = {x};
  void *res[1] = {0};
  tu_run_ok("test_reuse", p, args, res, NULL);
  const float *r = res[0];
  int bad = 0;
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 64; j++)
      if (r[i * 64 + j] != x[j * 64 + i]) bad++;
  CHECK_EQ_INT(bad, 0);
  free(res[0]);
  free(x);
  tu_free(p);
}

/* ---- control flow */
static void test_while(void) {
  /* sum of 1..n and n! mod 2^32 in one loop; a carried tuple-free state with a swap */
  int64_t e[3] = {5050, 100, 0};
  CHECK(tu_expect_bytes("while",
                        "func.func @main() -> (tensor<i64>) {\n"
                        "  %i0 = stablehlo.constant dense<0> : tensor<i64>\n"
                        "  %s0 = stablehlo.constant dense<0> : tensor<i64>\n"
                        "  %r:2 = stablehlo.while(%i = %i0, %s = %s0) : tensor<i64>, tensor<i64>\n"
                        "   cond {\n"
                        "    %n = stablehlo.constant dense<100> : tensor<i64>\n"
                        "    %c = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
                        "    stablehlo.return %c : tensor<i1>\n"
                        "  } do {\n"
                        "    %one = stablehlo.constant dense<1> : tensor<i64>\n"
                        "    %i1 = stablehlo.add %i, %one : tensor<i64>\n"
                        "    %s1 = stablehlo.add %s, %i1 : tensor<i64>\n"
                        "    stablehlo.return %i1, %s1 : tensor<i64>, tensor<i64>\n"
                        "  }\n"
                        "  return %r#1 : tensor<i64>\n}\n",
                        e, 8));
  /* swapping carried values: (a, b) -> (b, a + b), 10 times: Fibonacci */
  int64_t f[1] = {89};
  CHECK(tu_expect_bytes("while swap",
                        "func.func @main() -> (tensor<i64>) {\n"
                        "  %k0 = stablehlo.constant dense<0> : tensor<i64>\n"
                        "  %a0 = stablehlo.constant dense<1> : tensor<i64>\n"
                        "  %b0 = stablehlo.constant dense<1> : tensor<i64>\n"
                        "  %r:3 = stablehlo.while(%k = %k0, %a = %a0, %b = %b0) : tensor<i64>, tensor<i64>, tensor<i64>\n"
                        "   cond {\n"
                        "    %n = stablehlo.constant dense<9> : tensor<i64>\n"
                        "    %c = stablehlo.compare LT, %k, %n, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
                        "    stablehlo.return %c : tensor<i1>\n"
                        "  } do {\n"
                        "    %one = stablehlo.constant dense<1> : tensor<i64>\n"
                        "    %k1 = stablehlo.add %k, %one : tensor<i64>\n"
                        "    %s = stablehlo.add %a, %b : tensor<i64>\n"
                        "    stablehlo.return %k1, %b, %s : tensor<i64>, tensor<i64>, tensor<i64>\n"
                        "  }\n"
                        "  return %r#2 : tensor<i64>\n}\n",
                        f, 8));
  /* a loop updating a vector in place with dynamic_update_slice */
  float v[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  CHECK(tu_expect_bytes("while dynamic_update_slice",
                        "func.func @main() -> (tensor<8xf32>) {\n"
                        "  %i0 = stablehlo.constant dense<0> : tensor<i32>\n"
                        "  %v0 = stablehlo.constant dense<0.0> : tensor<8xf32>\n"
                        "  %r:2 = stablehlo.while(%i = %i0, %v = %v0) : tensor<i32>, tensor<8xf32>\n"
                        "   cond {\n"
                        "    %n = stablehlo.constant dense<8> : tensor<i32>\n"
                        "    %c = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
                        "    stablehlo.return %c : tensor<i1>\n"
                        "  } do {\n"
                        "    %f = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>\n"
                        "    %u = stablehlo.reshape %f : (tensor<f32>) -> tensor<1xf32>\n"
                        "    %w = stablehlo.dynamic_update_slice %v, %u, %i : (tensor<8xf32>, tensor<1xf32>, tensor<i32>) -> tensor<8xf32>\n"
                        "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
                        "    %i1 = stablehlo.add %i, %one : tensor<i32>\n"
                        "    stablehlo.return %i1, %w : tensor<i32>, tensor<8xf32>\n"
                        "  }\n"
                        "  return %r#1 : tensor<8xf32>\n}\n",
                        v, sizeof v));
}

static void test_if_case(void) {
  int32_t e[2] = {10, 30};
  CHECK(tu_expect_bytes("if",
                        "func.func @main() -> tensor<2xi32> {\n"
                        "  %t = stablehlo.constant dense<true> : tensor<i1>\n"
                        "  %f = stablehlo.constant dense<false> : tensor<i1>\n"
                        "  %a = stablehlo.constant dense<10> : tensor<1xi32>\n"
                        "  %b = stablehlo.constant dense<20> : tensor<1xi32>\n"
                        "  %x = \"stablehlo.if\"(%t) ({\n"
                        "    stablehlo.return %a : tensor<1xi32>\n"
                        "  }, {\n"
                        "    stablehlo.return %b : tensor<1xi32>\n"
                        "  }) : (tensor<i1>) -> tensor<1xi32>\n"
                        "  %y = \"stablehlo.if\"(%f) ({\n"
                        "    stablehlo.return %a : tensor<1xi32>\n"
                        "  }, {\n"
                        "    %s = stablehlo.add %a, %b : tensor<1xi32>\n"
                        "    stablehlo.return %s : tensor<1xi32>\n"
                        "  }) : (tensor<i1>) -> tensor<1xi32>\n"
                        "  %r = stablehlo.concatenate %x, %y, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>\n"
                        "  return %r : tensor<2xi32>\n}\n",
                        e, sizeof e));
  /* case: index 1 picks branch 1, out-of-range indices (-1, 7) pick the last branch */
  int32_t c[3] = {2, 3, 3};
  CHECK(tu_expect_bytes("case",
                        "func.func @main() -> tensor<3xi32> {\n"
                        "  %i = stablehlo.constant dense<[1, -1, 7]> : tensor<3xi32>\n"
                        "  %i0 = stablehlo.slice %i [0:1] : (tensor<3xi32>) -> tensor<1xi32>\n"
                        "  %i1 = stablehlo.slice %i [1:2] : (tensor<3xi32>) -> tensor<1xi32>\n"
                        "  %i2 = stablehlo.slice %i [2:3] : (tensor<3xi32>) -> tensor<1xi32>\n"
                        "  %j0 = stablehlo.reshape %i0 : (tensor<1xi32>) -> tensor<i32>\n"
                        "  %j1 = stablehlo.reshape %i1 : (tensor<1xi32>) -> tensor<i32>\n"
                        "  %j2 = stablehlo.reshape %i2 : (tensor<1xi32>) -> tensor<i32>\n"
                        "  %a = stablehlo.constant dense<1> : tensor<1xi32>\n"
                        "  %b = stablehlo.constant dense<2> : tensor<1xi32>\n"
                        "  %c = stablehlo.constant dense<3> : tensor<1xi32>\n"
                        "  %x = \"stablehlo.case\"(%j0) ({ stablehlo.return %a : tensor<1xi32> }, { stablehlo.return %b : tensor<1xi32> }, { stablehlo.return %c : tensor<1xi32> }) : (tensor<i32>) -> tensor<1xi32>\n"
                        "  %y = \"stablehlo.case\"(%j1) ({ stablehlo.return %a : tensor<1xi32> }, { stablehlo.return %b : tensor<1xi32> }, { stablehlo.return %c : tensor<1xi32> }) : (tensor<i32>) -> tensor<1xi32>\n"
                        "  %z = \"stablehlo.case\"(%j2) ({ stablehlo.return %a : tensor<1xi32> }, { stablehlo.return %b : tensor<1xi32> }, { stablehlo.return %c : tensor<1xi32> }) : (tensor<i32>) -> tensor<1xi32>\n"
                        "  %r = stablehlo.concatenate %x, %y, %z, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>\n"
                        "  return %r : tensor<3xi32>\n}\n",
                        c, sizeof c));
}

/* ---- reductions over every layout, compared with a loop */
static void test_reduce_layouts(void) {
  const char *dims_list[] = {"[0]", "[1]", "[2]", "[0, 1]", "[0, 2]", "[1, 2]", "[0, 1, 2]"};
  int nd[] = {1, 1, 1, 2, 2, 2, 3};
  int red[][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1}, {1, 1, 1}};
  const int D0 = 5, D1 = 6, D2 = 70;
  float *x = malloc(sizeof(float) * D0 * D1 * D2);
  uint32_t s = 7;
  for (int i = 0; i < D0 * D1 * D2; i++) x[i] = (float)(int)(tu_frand(&s) * 16);
  for (int k = 0; k < 7; k++) {
    int od[3], nod = 0;
    int dd[3] = {D0, D1, D2};
    for (int d = 0; d < 3; d++)
      if (!red[k][d]) od[nod++] = dd[d];
    char rt[64] = "tensor<f32>";
    if (nod == 2) snprintf(rt, sizeof rt, "tensor<%dx%dxf32>", od[0], od[1]);
    if (nod == 1) snprintf(rt, sizeof rt, "tensor<%dxf32>", od[0]);
    for (int op = 0; op < 2; op++) {
      char text[1024];
      snprintf(text, sizeof text,
               "func.func @main(%%x: tensor<5x6x70xf32>) -> %s {\n"
               "  %%z = stablehlo.constant dense<%s> : tensor<f32>\n"
               "  %%r = stablehlo.reduce(%%x init: %%z) applies stablehlo.%s across dimensions = %s : (tensor<5x6x70xf32>, tensor<f32>) -> %s\n"
               "  return %%r : %s\n}\n",
               rt, op ? "0xFF800000" : "0.0", op ? "maximum" : "add", dims_list[k], rt, rt);
      cj_compiled *p = tu_compile_ok("reduce", text);
      if (!p) continue;
      void *args[1] = {x};
      void *res[1] = {0};
      tu_run_ok("test_reduce_layouts", p, args, res, tu_pool());
      const float *r = res[0];
      int bad = 0;
      (void)nd;
      /* reference */
      int n0 = red[k][0] ? 1 : D0, n1 = red[k][1] ? 1 : D1, n2 = red[k][2] ? 1 : D2;
      for (int a = 0; a < n0; a++)
        for (int b = 0; b < n1; b++)
          for (int c = 0; c < n2; c++) {
            double acc = op ? -INFINITY : 0;
            for (int i = 0; i < D0; i++)
              for (int j = 0; j < D1; j++)
                for (int l = 0; l < D2; l++) {
                  if ((!red[k][0] && i != a) || (!red[k][1] && j != b) || (!red[k][2] && l != c)) continue;
                  float v = x[(i * D1 + j) * D2 + l];
                  acc = op ? fmax(acc, v) : acc + v;
                }
            if (r[(a * n1 + b) * n2 + c] != (float)acc) bad++;
          }
      CHECK_MSG(bad == 0, "reduce %s over %s: %d wrong", op ? "max" : "add", dims_list[k], bad);
      free(res[0]);
      tu_free(p);
    }
  }
  free(x);
}

/* a full reduction of a long vector runs split across the pool */
static void test_reduce_split(void) {
  const int N = 1 << 20;
  cj_compiled *p = tu_compile_ok("reduce split",
                             "func.func @main(%x: tensor<1048576xf32>) -> (tensor<f32>, tensor<f32>) {\n"
                             "  %z = stablehlo.constant dense<1.0> : tensor<f32>\n"
                             "  %m = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
                             "  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<1048576xf32>, tensor<f32>) -> tensor<f32>\n"
                             "  %t = stablehlo.reduce(%x init: %m) applies stablehlo.maximum across dimensions = [0] : (tensor<1048576xf32>, tensor<f32>) -> tensor<f32>\n"
                             "  return %s, %t : tensor<f32>, tensor<f32>\n}\n");
  if (!p) return;
  float *x = malloc(sizeof(float) * N);
  double sum = 1.0;
  float mx = -INFINITY;
  for (int i = 0; i < N; i++) {
    x[i] = (float)(((int64_t)i * 7919) % 1000) / 1000.0f;
    sum += x[i];
    if (x[i] > mx) mx = x[i];
  }
  void *args[1] = {x};
  void *res[2] = {0};
  tu_run_ok("test_reduce_split", p, args, res, tu_pool());
  CHECK_MSG(fabs(*(float *)res[0] - sum) < 1e-6 * sum, "sum %g vs %g", *(float *)res[0], sum);
  CHECK(*(float *)res[1] == mx);
  free(res[0]);
  free(res[1]);
  free(x);
  tu_free(p);
}

static void test_reduce_general(void) {
  /* argmax: a variadic reduce with a compare/select body */
  int32_t e[2] = {2, 0};
  CHECK(tu_expect_bytes("argmax",
                        "func.func @main() -> tensor<2xi32> {\n"
                        "  %x = stablehlo.constant dense<[[1.0, 3.0, 7.0, 2.0], [9.0, 1.0, 9.0, 0.0]]> : tensor<2x4xf32>\n"
                        "  %i = stablehlo.iota dim = 1 : tensor<2x4xi32>\n"
                        "  %m = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
                        "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
                        "  %r:2 = stablehlo.reduce(%x init: %m), (%i init: %z) across dimensions = [1] : (tensor<2x4xf32>, tensor<2x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<2xf32>, tensor<2xi32>)\n"
                        "   reducer(%a: tensor<f32>, %c: tensor<f32>) (%b: tensor<i32>, %d: tensor<i32>) {\n"
                        "    %gt = stablehlo.compare GT, %a, %c, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
                        "    %eq = stablehlo.compare EQ, %a, %c, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
                        "    %lt = stablehlo.compare LT, %b, %d, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
                        "    %tie = stablehlo.and %eq, %lt : tensor<i1>\n"
                        "    %pick = stablehlo.or %gt, %tie : tensor<i1>\n"
                        "    %v = stablehlo.select %pick, %a, %c : tensor<i1>, tensor<f32>\n"
                        "    %k = stablehlo.select %pick, %b, %d : tensor<i1>, tensor<i32>\n"
                        "    stablehlo.return %v, %k : tensor<f32>, tensor<i32>\n"
                        "  }\n"
                        "  return %r#1 : tensor<2xi32>\n}\n",
                        e, sizeof e));
  /* an empty reduced dimension gives the init value */
  float z[3] = {5.0f, 5.0f, 5.0f};
  CHECK(tu_expect_bytes("reduce over an empty dimension",
                        "func.func @main() -> tensor<3xf32> {\n"
                        "  %x = stablehlo.constant dense<> : tensor<3x0xf32>\n"
                        "  %c = stablehlo.constant dense<5.0> : tensor<f32>\n"
                        "  %r = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1] : (tensor<3x0xf32>, tensor<f32>) -> tensor<3xf32>\n"
                        "  return %r : tensor<3xf32>\n}\n",
                        z, sizeof z));
}

/* ---- dot_general against a naive reference */
static void dot_case(const char *name, int B, int M, int K, int N, bool transpose_lhs,
                     bool transpose_rhs, cj_threadpool *pool, double tol) {
  /* lhs: [B, M, K] or [B, K, M]; rhs: [B, K, N] or [B, N, K] */
  char lt[64], rt[64], text[1024];
  snprintf(lt, sizeof lt, "tensor<%dx%dx%dxf32>", B, transpose_lhs ? K : M, transpose_lhs ? M : K);
  snprintf(rt, sizeof rt, "tensor<%dx%dx%dxf32>", B, transpose_rhs ? N : K, transpose_rhs ? K : N);
  snprintf(text, sizeof text,
           "func.func @main(%%a: %s, %%b: %s) -> tensor<%dx%dx%dxf32> {\n"
           "  %%r = stablehlo.dot_general %%a, %%b, batching_dims = [0] x [0], contracting_dims = [%d] x [%d] : (%s, %s) -> tensor<%dx%dx%dxf32>\n"
           "  return %%r : tensor<%dx%dx%dxf32>\n}\n",
           lt, rt, B, M, N, transpose_lhs ? 1 : 2, transpose_rhs ? 2 : 1, lt, rt, B, M, N, B, M, N);
  cj_compiled *p = tu_compile_ok(name, text);
  if (!p) return;
  CHECK(fabs(tu_info(p)->flops - 2.0 * B * M * N * K) < 1);
  float *a = malloc(sizeof(float) * (size_t)B * M * K), *b = malloc(sizeof(float) * (size_t)B * K * N);
  uint32_t s = 3;
  for (long i = 0; i < (long)B * M * K; i++) a[i] = tu_frand(&s);
  for (long i = 0; i < (long)B * K * N; i++) b[i] = tu_frand(&s);
  void *args[2] = {a, b};
  void *res[1] = {0};
  tu_run_ok("dot_case", p, args, res, pool);
  const float *r = res[0];
  int bad = 0;
  for (int bi = 0; bi < B; bi++)
    for (int m = 0; m < M; m++)
      for (int n = 0; n < N; n++) {
        double acc = 0;
        for (int k = 0; k < K; k++) {
          float x = transpose_lhs ? a[((long)bi * K + k) * M + m] : a[((long)bi * M + m) * K + k];
          float y = transpose_rhs ? b[((long)bi * N + n) * K + k] : b[((long)bi * K + k) * N + n];
          acc += (double)x * y;
        }
        if (fabs(r[((long)bi * M + m) * N + n] - acc) > tol) bad++;
      }
  CHECK_MSG(bad == 0, "%s: %d elements differ", name, bad);
  free(res[0]);
  free(a);
  free(b);
  tu_free(p);
}

static void test_dot(void) {
  dot_case("dot small", 2, 3, 5, 4, false, false, NULL, 1e-5);
  dot_case("dot lhs transposed", 3, 7, 9, 5, true, false, NULL, 1e-5);
  dot_case("dot rhs transposed", 2, 17, 33, 40, false, true, tu_pool(), 1e-4);
  dot_case("dot large parallel", 1, 300, 513, 700, false, false, tu_pool(), 1e-3);
  dot_case("dot large both transposed", 2, 130, 260, 45, true, true, tu_pool(), 1e-3);
  int32_t e[4] = {19, 22, 43, 50};
  CHECK(tu_expect_bytes("dot i32",
                        "func.func @main() -> tensor<2x2xi32> {\n"
                        "  %a = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>\n"
                        "  %b = stablehlo.constant dense<[[5, 6], [7, 8]]> : tensor<2x2xi32>\n"
                        "  %r = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>\n"
                        "  return %r : tensor<2x2xi32>\n}\n",
                        e, sizeof e));
  uint16_t h[2] = {0x4198, 0x0000}; /* bf16 19.0 = 0x4198; 1*1 + (-1)*1 = 0 */
  CHECK(tu_expect_bytes("dot bf16",
                        "func.func @main() -> tensor<2xbf16> {\n"
                        "  %a = stablehlo.constant dense<[[1.0, 2.0], [1.0, -1.0]]> : tensor<2x2xbf16>\n"
                        "  %b = stablehlo.constant dense<[5.0, 7.0]> : tensor<2xbf16>\n"
                        "  %c = stablehlo.constant dense<[1.0, 1.0]> : tensor<2xbf16>\n"
                        "  %x = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x2xbf16>, tensor<2xbf16>) -> tensor<2xbf16>\n"
                        "  %y = stablehlo.dot_general %a, %c, contracting_dims = [1] x [0] : (tensor<2x2xbf16>, tensor<2xbf16>) -> tensor<2xbf16>\n"
                        "  %x0 = stablehlo.slice %x [0:1] : (tensor<2xbf16>) -> tensor<1xbf16>\n"
                        "  %y1 = stablehlo.slice %y [1:2] : (tensor<2xbf16>) -> tensor<1xbf16>\n"
                        "  %r = stablehlo.concatenate %x0, %y1, dim = 0 : (tensor<1xbf16>, tensor<1xbf16>) -> tensor<2xbf16>\n"
                        "  return %r : tensor<2xbf16>\n}\n",
                        h, sizeof h));
}

/* ---- data movement */
static void test_data(void) {
  int32_t t[6] = {1, 4, 2, 5, 3, 6};
  CHECK(tu_expect_bytes("transpose",
                        "func.func @main() -> tensor<3x2xi32> {\n"
                        "  %a = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>\n"
                        "  %r = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xi32>) -> tensor<3x2xi32>\n"
                        "  return %r : tensor<3x2xi32>\n}\n",
                        t, sizeof t));
  int32_t rv[6] = {6, 5, 4, 3, 2, 1};
  CHECK(tu_expect_bytes("reverse both dims",
                        "func.func @main() -> tensor<2x3xi32> {\n"
                        "  %a = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>\n"
                        "  %r = stablehlo.reverse %a, dims = [0, 1] : tensor<2x3xi32>\n"
                        "  return %r : tensor<2x3xi32>\n}\n",
                        rv, sizeof rv));
  int32_t sl[2] = {2, 6};
  CHECK(tu_expect_bytes("strided slice",
                        "func.func @main() -> tensor<1x2xi32> {\n"
                        "  %a = stablehlo.constant dense<[[1, 2, 3, 4, 5, 6, 7]]> : tensor<1x7xi32>\n"
                        "  %r = stablehlo.slice %a [0:1, 1:6:4] : (tensor<1x7xi32>) -> tensor<1x2xi32>\n"
                        "  return %r : tensor<1x2xi32>\n}\n",
                        sl, sizeof sl));
  /* pad: low -1 crops the first element, interior 1 spreads, high 2 pads */
  int32_t pd[7] = {2, 0, 3, 0, 4, 0, 0};
  CHECK(tu_expect_bytes("pad negative and interior",
                        "func.func @main() -> tensor<7xi32> {\n"
                        "  %a = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>\n"
                        "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
                        "  %r = stablehlo.pad %a, %z, low = [-2], high = [2], interior = [1] : (tensor<4xi32>, tensor<i32>) -> tensor<7xi32>\n"
                        "  return %r : tensor<7xi32>\n}\n",
                        pd, sizeof pd));
  /* dynamic_slice clamps the start so the slice stays inside */
  int32_t ds[4] = {3, 4, 7, 8};
  CHECK(tu_expect_bytes("dynamic_slice clamping",
                        "func.func @main() -> tensor<2x2xi32> {\n"
                        "  %a = stablehlo.constant dense<[[1, 2, 3, 4], [5, 6, 7, 8]]> : tensor<2x4xi32>\n"
                        "  %i = stablehlo.constant dense<-3> : tensor<i64>\n"
                        "  %j = stablehlo.constant dense<9> : tensor<i64>\n"
                        "  %r = stablehlo.dynamic_slice %a, %i, %j, sizes = [2, 2] : (tensor<2x4xi32>, tensor<i64>, tensor<i64>) -> tensor<2x2xi32>\n"
                        "  return %r : tensor<2x2xi32>\n}\n",
                        ds, sizeof ds));
  int32_t du[4] = {1, 9, 9, 4};
  CHECK(tu_expect_bytes("dynamic_update_slice clamping",
                        "func.func @main() -> tensor<4xi32> {\n"
                        "  %a = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>\n"
                        "  %u = stablehlo.constant dense<9> : tensor<2xi32>\n"
                        "  %i = stablehlo.constant dense<1> : tensor<ui32>\n"
                        "  %r = stablehlo.dynamic_update_slice %a, %u, %i : (tensor<4xi32>, tensor<2xi32>, tensor<ui32>) -> tensor<4xi32>\n"
                        "  return %r : tensor<4xi32>\n}\n",
                        du, sizeof du));
  int32_t cc[6] = {1, 2, 5, 3, 4, 6};
  CHECK(tu_expect_bytes("concatenate inner dim",
                        "func.func @main() -> tensor<2x3xi32> {\n"
                        "  %a = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>\n"
                        "  %b = stablehlo.constant dense<[[5], [6]]> : tensor<2x1xi32>\n"
                        "  %r = stablehlo.concatenate %a, %b, dim = 1 : (tensor<2x2xi32>, tensor<2x1xi32>) -> tensor<2x3xi32>\n"
                        "  return %r : tensor<2x3xi32>\n}\n",
                        cc, sizeof cc));
  int16_t io[6] = {0, 1, 2, 0, 1, 2};
  CHECK(tu_expect_bytes("iota",
                        "func.func @main() -> tensor<2x3xi16> {\n"
                        "  %r = stablehlo.iota dim = 1 : tensor<2x3xi16>\n"
                        "  return %r : tensor<2x3xi16>\n}\n",
                        io, sizeof io));
}

/* ---- donation: results over donated arguments */

/* compiles a donation case and checks which argument each of its n results is written over
 * (-1: none) */
static cj_compiled *donating(const char *what, const char *text, int n, const int32_t *donors) {
  cj_compiled *p = tu_compile_ok(what, text);
  for (int j = 0; p && j < n; j++) CHECK_EQ_INT(tu_info(p)->result_donor[j], donors[j]);
  return p;
}

static void test_donation(void) {
  /* y = x * 2 + 1 elementwise: safe to write over the donated x while reading it */
  cj_compiled *p = donating(
      "donation",
      "func.func @main(%x: tensor<1000xf32> {jax.buffer_donor = true}) -> tensor<1000xf32> {\n"
      "  %c = stablehlo.constant dense<2.0> : tensor<1000xf32>\n"
      "  %o = stablehlo.constant dense<1.0> : tensor<1000xf32>\n"
      "  %m = stablehlo.multiply %x, %c : tensor<1000xf32>\n"
      "  %r = stablehlo.add %m, %o : tensor<1000xf32>\n"
      "  return %r : tensor<1000xf32>\n}\n", 1, (const int32_t[]){0});
  if (p) {
    float *x = malloc(4000);
    for (int i = 0; i < 1000; i++) x[i] = (float)i;
    void *args[1] = {x};
    void *res[1] = {x}; /* donated: the result is written over the argument */
    tu_run_ok("test_donation", p, args, res, NULL);
    int bad = 0;
    for (int i = 0; i < 1000; i++)
      if (x[i] != 2.0f * i + 1) bad++;
    CHECK_EQ_INT(bad, 0);
    free(x);
    tu_free(p);
  }
  /* hazard: the result (a reversal) reads the donated argument after writing would start */
  p = donating("donation hazard",
               "func.func @main(%x: tensor<8xi32> {tf.aliasing_output = 0 : i32}) -> tensor<8xi32> {\n"
               "  %r = stablehlo.reverse %x, dims = [0] : tensor<8xi32>\n"
               "  return %r : tensor<8xi32>\n}\n", 1, (const int32_t[]){0});
  if (p) {
    int32_t x[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    void *args[1] = {x};
    void *res[1] = {x};
    tu_run_ok("test_donation", p, args, res, NULL);
    int bad = 0;
    for (int i = 0; i < 8; i++)
      if (x[i] != 7 - i) bad++;
    CHECK_EQ_INT(bad, 0);
    tu_free(p);
  }
  /* by byte size (as XLA): result 0 takes %y of its own type first, result 1 (another shape)
   * takes %x of its size; result 0 overwrites %y, which result 1 still reads */
  p = donating("donation by size",
               "func.func @main(%x: tensor<4x2xf32> {jax.buffer_donor = true},\n"
               "                %y: tensor<8xf32> {jax.buffer_donor = true})\n"
               "    -> (tensor<8xf32>, tensor<2x4xf32>) {\n"
               "  %c = stablehlo.constant dense<1.0> : tensor<8xf32>\n"
               "  %x8 = stablehlo.reshape %x : (tensor<4x2xf32>) -> tensor<8xf32>\n"
               "  %r0 = stablehlo.add %x8, %c : tensor<8xf32>\n"
               "  %y2 = stablehlo.add %y, %y : tensor<8xf32>\n"
               "  %r1 = stablehlo.reshape %y2 : (tensor<8xf32>) -> tensor<2x4xf32>\n"
               "  return %r0, %r1 : tensor<8xf32>, tensor<2x4xf32>\n}\n", 2, (const int32_t[]){1, 0});
  if (p) {
    float x[8], y[8];
    for (int i = 0; i < 8; i++) x[i] = (float)i, y[i] = (float)(10 * i);
    void *args[2] = {x, y};
    void *res[2] = {y, x};
    tu_run_ok("test_donation", p, args, res, NULL);
    int bad = 0;
    for (int i = 0; i < 8; i++) bad += y[i] != (float)i + 1 || x[i] != (float)(20 * i);
    CHECK_EQ_INT(bad, 0);
    tu_free(p);
  }
  /* arguments returned in swapped places, both donated: the copy into %a's storage would come
   * before the copy that reads %a, so result 0 gets fresh storage */
  p = donating("donation swap",
               "func.func @main(%a: tensor<8xi32> {tf.aliasing_output = 0 : i32},\n"
               "                %b: tensor<2x4xi32> {jax.buffer_donor = true})\n"
               "    -> (tensor<8xi32>, tensor<2x4xi32>) {\n"
               "  %b8 = stablehlo.reshape %b : (tensor<2x4xi32>) -> tensor<8xi32>\n"
               "  %a2 = stablehlo.reshape %a : (tensor<8xi32>) -> tensor<2x4xi32>\n"
               "  return %b8, %a2 : tensor<8xi32>, tensor<2x4xi32>\n}\n", 2, (const int32_t[]){-1, 1});
  if (p) {
    int32_t a[8], b[8], r0[8];
    for (int i = 0; i < 8; i++) a[i] = i, b[i] = 100 + i;
    void *args[2] = {a, b};
    void *res[2] = {r0, b};
    tu_run_ok("test_donation", p, args, res, NULL);
    int bad = 0;
    for (int i = 0; i < 8; i++) bad += r0[i] != 100 + i || b[i] != i;
    CHECK_EQ_INT(bad, 0);
    tu_free(p);
  }
  /* no donor attribute: no donation */
  p = donating("no donation",
               "func.func @main(%x: tensor<8xi32>) -> tensor<8xi32> {\n"
               "  %r = stablehlo.add %x, %x : tensor<8xi32>\n"
               "  return %r : tensor<8xi32>\n}\n", 1, (const int32_t[]){-1});
  if (p) tu_free(p);
}

/* ---- concurrent executions of one program */
typedef struct conc {
  cj_compiled *p;
  int ok;
} conc;

static void *conc_main(void *v) {
  conc *c = v;
  c->ok = 1;
  float *x = malloc(4 * 4096);
  for (int r = 0; r < 50; r++) {
    for (int i = 0; i < 4096; i++) x[i] = (float)(i + r);
    void *args[1] = {x};
    void *res[1] = {0};
    cj_status st = tu_run(c->p, args, res, tu_pool());
    if (st) c->ok = 0;
    cj_status_free(st);
    const float *o = res[0];
    for (int i = 0; i < 4096 && o; i++)
      if (o[i] != (float)(4095 - i + r) * 3.0f) {
        c->ok = 0;
        break;
      }
    free(res[0]);
  }
  free(x);
  return NULL;
}

static void test_concurrency(void) {
  cj_compiled *p = tu_compile_ok("concurrency",
                                 "func.func @main(%x: tensor<4096xf32>) -> tensor<4096xf32> {\n"
                                 "  %r = stablehlo.reverse %x, dims = [0] : tensor<4096xf32>\n"
                                 "  %c = stablehlo.constant dense<3.0> : tensor<4096xf32>\n"
                                 "  %t = stablehlo.transpose %r, dims = [0] : (tensor<4096xf32>) -> tensor<4096xf32>\n"
                                 "  %m = stablehlo.multiply %t, %c : tensor<4096xf32>\n"
                                 "  return %m : tensor<4096xf32>\n}\n");
  if (!p) return;
  pthread_t th[4];
  conc cs[4];
  for (int i = 0; i < 4; i++) {
    cs[i].p = p;
    pthread_create(&th[i], NULL, conc_main, &cs[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    CHECK(cs[i].ok);
  }
  tu_free(p);
}

/* ---- serialization, info, errors */
static void test_serialize(void) {
  const char *text =
      "module @ser {\n"
      "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %c = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>\n"
      "  %r = stablehlo.multiply %x, %c : tensor<4xf32>\n"
      "  return %r : tensor<4xf32>\n}\n}\n";
  cj_compiled *p = tu_compile_ok("serialize", text);
  if (!p) return;
  cj_backend *b = cj_backend_cpu();
  const cj_program_info *in = tu_info(p);
  CHECK_EQ_STR(in->name, "ser");
  CHECK_EQ_INT(in->num_args, 1);
  CHECK_EQ_INT(in->num_results, 1);
  CHECK_EQ_INT(in->results[0].dtype, CJ_F32);
  CHECK_EQ_INT(in->results[0].rank, 1);
  CHECK_EQ_INT(in->results[0].dims[0], 4);
  CHECK_EQ_INT(in->results[0].nbytes, 16);
  CHECK(in->optimized_text && strstr(in->optimized_text, "stablehlo.multiply"));
  CHECK(in->flops == 4);
  /* serialization is the runtime's (an envelope around the optimized text, runtime/compile.h),
   * the same for every backend */
  cj_executable *e = NULL;
  cj_status st = cj_executable_compile(b, NULL, text, strlen(text), NULL, 0, &e);
  CHECK_MSG(st == NULL, "%s", cj_status_message(st));
  cj_status_free(st);
  if (!e) {
    tu_free(p);
    return;
  }
  CHECK(e->info->fingerprint[0] == in->fingerprint[0] && e->info->fingerprint[1] == in->fingerprint[1]);
  void *data = NULL;
  size_t len = 0;
  CHECK(cj_executable_serialize(e, &data, &len) == NULL);
  cj_executable *q = NULL;
  st = cj_executable_deserialize(b, data, len, NULL, 0, &q);
  CHECK_MSG(st == NULL, "%s", cj_status_message(st));
  cj_status_free(st);
  if (q) {
    const cj_program_info *qi = q->info;
    CHECK(qi->fingerprint[0] == in->fingerprint[0] && qi->fingerprint[1] == in->fingerprint[1]);
    CHECK_EQ_STR(qi->name, "ser");
    float x[4] = {1, 1, 2, 2};
    void *args[1] = {x};
    void *res[1] = {0};
    st = tu_run(q->compiled, args, res, NULL);
    CHECK(st == NULL);
    cj_status_free(st);
    const float *r = res[0];
    CHECK(r && r[0] == 1 && r[1] == 2 && r[2] == 6 && r[3] == 8);
    free(res[0]);
    cj_executable_release(q);
  }
  /* every single-byte corruption and every truncation is rejected cleanly */
  unsigned char *c = malloc(len);
  int accepted = 0;
  for (size_t i = 0; i < len; i += (len > 400 ? 7 : 1)) {
    memcpy(c, data, len);
    c[i] ^= 0x5a;
    cj_executable *z = NULL;
    st = cj_executable_deserialize(b, c, len, NULL, 0, &z);
    if (!st) {
      accepted++;
      cj_executable_release(z);
    } else {
      CHECK(cj_status_code(st) == CJ_INVALID_ARGUMENT);
    }
    cj_status_free(st);
  }
  CHECK_EQ_INT(accepted, 0);
  for (size_t n = 0; n < len; n += 13) {
    cj_executable *z = NULL;
    st = cj_executable_deserialize(b, data, n, NULL, 0, &z);
    CHECK(st != NULL && z == NULL);
    cj_status_free(st);
  }
  free(c);
  free(data);
  cj_executable_release(e);
  tu_free(p);
}

static void test_errors(void) {
  cj_status err = NULL;
  cj_compiled *p = tu_compile("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
                             "  %r = \"stablehlo.fft\"(%x) {fft_type = #stablehlo<fft_type FFT>, fft_length = array<i64: 4>} : (tensor<4xf32>) -> tensor<4xf32>\n"
                             "  return %r : tensor<4xf32>\n}\n",
                             &err);
  if (p) tu_free(p);
  if (err) {
    /* the verifier may reject this real-typed FFT first; either way the op is named */
    CHECK_CONTAINS(cj_status_message(err), "stablehlo.fft");
    CHECK_CONTAINS(cj_status_message(err), "test.mlir:2:");
  } else {
    CHECK(!"an unsupported op compiled");
  }
  cj_status_free(err);
  /* a failing check names itself, its location, the element and both values */
  p = tu_compile("func.func @main() {\n"
                 "  %a = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>\n"
                 "  %b = stablehlo.constant dense<[1, 2, 4]> : tensor<3xi32>\n"
                 "  stablehlo.custom_call @check.expect_eq(%a, %b) {has_side_effect = true} : (tensor<3xi32>, tensor<3xi32>) -> ()\n"
                 "  return\n}\n",
                 &err);
  CHECK(p != NULL);
  cj_status_free(err);
  if (p) {
    void *res[1] = {0};
    cj_status st = tu_run(p, NULL, res, NULL);
    CHECK(cj_status_code(st) == CJ_INVALID_ARGUMENT);
    const char *m = cj_status_message(st);
    CHECK_CONTAINS(m, "check.expect_eq");
    CHECK_CONTAINS(m, "test.mlir:4:3");
    CHECK_CONTAINS(m, "[2]");
    CHECK_CONTAINS(m, "actual 3");
    CHECK_CONTAINS(m, "expected 4");
    cj_status_free(st);
    tu_free(p);
  }
  /* expect_close measures ULPs */
  p = tu_compile("func.func @main() {\n"
                 "  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
                 "  %b = stablehlo.constant dense<[1.0, 2.00000048]> : tensor<2xf32>\n"
                 "  check.expect_close %a, %b, max_ulp_difference = 3 : tensor<2xf32>, tensor<2xf32>\n"
                 "  check.expect_close %a, %b, max_ulp_difference = 1 : tensor<2xf32>, tensor<2xf32>\n"
                 "  return\n}\n",
                 &err);
  CHECK_MSG(p != NULL, "%s", cj_status_message(err));
  cj_status_free(err);
  if (p) {
    void *res[1] = {0};
    cj_status st = tu_run(p, NULL, res, NULL);
    CHECK(st != NULL);
    CHECK_CONTAINS(cj_status_message(st), "test.mlir:5:");
    CHECK_CONTAINS(cj_status_message(st), "ULP difference 2");
    cj_status_free(st);
    tu_free(p);
  }
}

int main(void) {
  test_fused_chain(3, 5, NULL);
  test_fused_chain(3, 5, tu_pool());
  test_fused_chain(513, 257, tu_pool()); /* many blocks, parallel */
  test_fused_chain(1, 100000, tu_pool());
  test_reuse();
  test_while();
  test_if_case();
  test_reduce_layouts();
  test_reduce_general();
  test_reduce_split();
  test_dot();
  test_data();
  test_donation();
  test_concurrency();
  test_serialize();
  test_errors();
  cj_pool_destroy(tu_pool());
  return check_report("cpu_exec");
}
