/* 16-bit float matrix products (bf16, f16): dot_general and convolution convert their operands
 * to f32 while packing, accumulate in f32 and round the result once. Checked here: the
 * vectorized 16-bit <-> f32 row conversions against the scalar ones on every 16-bit value and
 * on rounding boundaries, NaN and infinities; dot_general of odd shapes, transposed operands,
 * batch dimensions and 16-bit or f32 results against a float64 reference (the result must be
 * the reference rounded once, within the f32 accumulation's error); a bf16 and an f16
 * convolution against a float64 reference. */
#include <math.h>
#include <stdint.h>

#include "../common/check.h"
#include "cpu/k_linalg.h"
#include "prog_util.h"

/* a value in [-1, 1) */
static float frand(uint32_t *s) { return (float)tu_rand16(s) / 32768.0f - 1.0f; }

static const char *tname(cj_dtype t) { return t == CJ_BF16 ? "bf16" : t == CJ_F16 ? "f16" : "f32"; }

/* element i of a host array of dtype t (f32, bf16, f16) */
static double get(cj_dtype t, const void *p, long i) {
  if (t == CJ_F32) return ((const float *)p)[i];
  uint16_t h = ((const uint16_t *)p)[i];
  return t == CJ_BF16 ? cj_bf16_to_f32(h) : cj_f16_to_f32(h);
}

/* n random values in [-1, 1) of dtype t; each element's value (after rounding) in v */
static void *fill(cj_dtype t, long n, uint32_t *s, double *v) {
  void *p = malloc((size_t)n * 4 + 4);
  for (long i = 0; i < n; i++) {
    float f = frand(s);
    if (t == CJ_F32) ((float *)p)[i] = f;
    else ((uint16_t *)p)[i] = t == CJ_BF16 ? cj_f32_to_bf16(f) : cj_f32_to_f16(f);
    v[i] = get(t, p, i);
  }
  return p;
}

/* a case's two operands: host arrays of their dtypes, and their values as doubles */
typedef struct {
  void *host[2];
  double *vals[2];
} operands;

static void free_operands(operands *o) {
  for (int i = 0; i < 2; i++) {
    free(o->host[i]);
    free(o->vals[i]);
  }
}

/* compiles text and runs it on pool with two operands of n[i] elements of dtype t[i] (filled
 * from seed; kept in *o, free_operands frees them); returns the result (malloc'ed), or NULL when
 * text did not compile */
static void *run_two(const char *name, const char *text, const cj_dtype t[2], const long n[2],
                     uint32_t seed, cj_threadpool *pool, operands *o) {
  memset(o, 0, sizeof *o);
  cj_compiled *p = tu_compile_ok(name, text);
  if (!p) return NULL;
  uint32_t s = seed;
  for (int i = 0; i < 2; i++) {
    o->vals[i] = malloc(sizeof(double) * (size_t)n[i]);
    o->host[i] = fill(t[i], n[i], &s, o->vals[i]);
  }
  void *res[1] = {0};
  tu_run_ok(name, p, o->host, res, pool);
  tu_free(p);
  return res[0];
}

/* |got - ref| allowed: half an ulp of the result type (one rounding) plus the f32 sum's error */
static double tol_of(cj_dtype ot, double ref, double sumabs, long k) {
  double half_ulp = ot == CJ_BF16 ? ldexp(1, -8) : ot == CJ_F16 ? ldexp(1, -11) : 0;
  double sub = ot == CJ_F16 ? ldexp(1, -25) : ot == CJ_BF16 ? 1e-38 : 0;
  return half_ulp * fabs(ref) * (1 + 1e-6) + sub + (double)(k + 2) * ldexp(1, -24) * sumabs;
}

static void test_cvt(void) {
  cj_la_cvi cvi = cj_la_cvi_pick();
  cj_la_cvo cvo = cj_la_cvo_pick();
  enum { NH = 65536 };
  uint16_t *h = malloc(sizeof(uint16_t) * NH), *h2 = malloc(sizeof(uint16_t) * NH);
  float *f = malloc(sizeof(float) * NH);
  for (int bf = 0; bf < 2; bf++) {
    for (long i = 0; i < NH; i++) h[i] = (uint16_t)i;
    /* every value, in rows of 77 (vector bodies and tails) */
    cvi(h, 77, f, 77, NH / 77, 77, bf);
    cvi(h + NH / 77 * 77, 0, f + NH / 77 * 77, 0, 1, NH % 77, bf);
    int bad = 0;
    for (long i = 0; i < NH; i++) {
      float e = bf ? cj_bf16_to_f32(h[i]) : cj_f16_to_f32(h[i]);
      if (isnan(e) ? !isnan(f[i]) : memcmp(&e, &f[i], 4) != 0) bad++;
    }
    CHECK_MSG(bad == 0, "%s -> f32: %d values differ", bf ? "bf16" : "f16", bad);
    /* f32 values: every 16-bit value, the midpoints to the next one (ties), a little above and
     * below them, NaN and infinities */
    uint32_t s = 7;
    for (long i = 0; i < NH; i++) {
      uint32_t u;
      memcpy(&u, &f[i], 4);
      int kind = (int)(i % 4);
      uint32_t step = bf ? 0x8000u : 0x1000u; /* half of the 16-bit ulp in f32 bits (normals) */
      if (kind == 1) u += step;
      if (kind == 2) u += step + 1;
      if (kind == 3) u += step - 1 + (frand(&s) > 0 ? 0 : 2);
      memcpy(&f[i], &u, 4);
    }
    f[0] = NAN;
    f[1] = -INFINITY;
    f[2] = 65520.0f; /* rounds to f16 infinity */
    f[3] = 1e-8f;    /* f16 subnormal range */
    for (long n = 0; n < NH; n += 1001) cvo(f + n, h2 + n, NH - n < 1001 ? NH - n : 1001, bf);
    bad = 0;
    for (long i = 0; i < NH; i++) {
      uint16_t e = bf ? cj_f32_to_bf16(f[i]) : cj_f32_to_f16(f[i]);
      bool enan = bf ? (e & 0x7fff) > 0x7f80 : (e & 0x7fff) > 0x7c00;
      bool gnan = bf ? (h2[i] & 0x7fff) > 0x7f80 : (h2[i] & 0x7fff) > 0x7c00;
      if (enan ? !gnan : e != h2[i]) bad++;
    }
    CHECK_MSG(bad == 0, "f32 -> %s: %d values differ", bf ? "bf16" : "f16", bad);
  }
  free(h);
  free(h2);
  free(f);
}

/* lhs [B, M, K] (or [B, K, M] when tl), rhs [B, K, N] (or [B, N, K] when tr), result [B, M, N] */
static void dot16_case(const char *name, cj_dtype lt, cj_dtype rt, cj_dtype ot, int B, int M,
                       int K, int N, bool tl, bool tr, cj_threadpool *pool) {
  char lty[64], rty[64], oty[64], text[1024];
  snprintf(lty, sizeof lty, "tensor<%dx%dx%dx%s>", B, tl ? K : M, tl ? M : K, tname(lt));
  snprintf(rty, sizeof rty, "tensor<%dx%dx%dx%s>", B, tr ? N : K, tr ? K : N, tname(rt));
  snprintf(oty, sizeof oty, "tensor<%dx%dx%dx%s>", B, M, N, tname(ot));
  snprintf(text, sizeof text,
           "func.func @main(%%a: %s, %%b: %s) -> %s {\n"
           "  %%r = stablehlo.dot_general %%a, %%b, batching_dims = [0] x [0], contracting_dims = [%d] x [%d] : (%s, %s) -> %s\n"
           "  return %%r : %s\n}\n",
           lty, rty, oty, tl ? 1 : 2, tr ? 2 : 1, lty, rty, oty, oty);
  operands o;
  void *r = run_two(name, text, (cj_dtype[]){lt, rt}, (long[]){(long)B * M * K, (long)B * K * N}, 11,
                    pool, &o);
  if (!r) return;
  const double *av = o.vals[0], *bv = o.vals[1];
  int bad = 0;
  for (int bi = 0; bi < B; bi++)
    for (int m = 0; m < M; m++)
      for (int n = 0; n < N; n++) {
        double acc = 0, sumabs = 0;
        for (int k = 0; k < K; k++) {
          double x = tl ? av[((long)bi * K + k) * M + m] : av[((long)bi * M + m) * K + k];
          double y = tr ? bv[((long)bi * N + n) * K + k] : bv[((long)bi * K + k) * N + n];
          acc += x * y;
          sumabs += fabs(x * y);
        }
        double got = get(ot, r, ((long)bi * M + m) * N + n);
        if (!(fabs(got - acc) <= tol_of(ot, acc, sumabs, K))) {
          if (bad++ < 3)
            fprintf(stderr, "%s: [%d,%d,%d] = %.9g, expected %.9g\n", name, bi, m, n, got, acc);
        }
      }
  CHECK_MSG(bad == 0, "%s: %d elements differ", name, bad);
  free(r);
  free_operands(&o);
}

/* rows and columns that are two dimensions each, contractions over two dimensions: lhs
 * [a1, k1, a2, k2] x rhs [k1, n1, k2, n2] -> [a1, a2, n1, n2]; none of the index tables is
 * affine, runs of them are */
static void dot16_split_case(const char *name, cj_dtype t, int a1, int a2, int k1, int k2, int n1,
                             int n2) {
  char lty[64], rty[64], oty[64], text[1024];
  snprintf(lty, sizeof lty, "tensor<%dx%dx%dx%dx%s>", a1, k1, a2, k2, tname(t));
  snprintf(rty, sizeof rty, "tensor<%dx%dx%dx%dx%s>", k1, n1, k2, n2, tname(t));
  snprintf(oty, sizeof oty, "tensor<%dx%dx%dx%dx%s>", a1, a2, n1, n2, tname(t));
  snprintf(text, sizeof text,
           "func.func @main(%%a: %s, %%b: %s) -> %s {\n"
           "  %%r = stablehlo.dot_general %%a, %%b, contracting_dims = [1, 3] x [0, 2] : (%s, %s) -> %s\n"
           "  return %%r : %s\n}\n",
           lty, rty, oty, lty, rty, oty, oty);
  operands o;
  void *r = run_two(name, text, (cj_dtype[]){t, t},
                    (long[]){(long)a1 * k1 * a2 * k2, (long)k1 * n1 * k2 * n2}, 13, NULL, &o);
  if (!r) return;
  const double *av = o.vals[0], *bv = o.vals[1];
  int bad = 0;
  long oi = 0;
  for (int i1 = 0; i1 < a1; i1++)
    for (int i2 = 0; i2 < a2; i2++)
      for (int j1 = 0; j1 < n1; j1++)
        for (int j2 = 0; j2 < n2; j2++, oi++) {
          double acc = 0, sumabs = 0;
          for (int c1 = 0; c1 < k1; c1++)
            for (int c2 = 0; c2 < k2; c2++) {
              double pr = av[(((long)i1 * k1 + c1) * a2 + i2) * k2 + c2] * bv[(((long)c1 * n1 + j1) * k2 + c2) * n2 + j2];
              acc += pr;
              sumabs += fabs(pr);
            }
          if (!(fabs(get(t, r, oi) - acc) <= tol_of(t, acc, sumabs, (long)k1 * k2))) bad++;
        }
  CHECK_MSG(bad == 0, "%s: %d elements differ", name, bad);
  free(r);
  free_operands(&o);
}

static void test_dot16(void) {
  cj_dtype H = CJ_F16, BF = CJ_BF16, F = CJ_F32;
  dot16_case("f16 odd", H, H, H, 2, 37, 300, 45, false, false, NULL);
  dot16_case("bf16 odd", BF, BF, BF, 3, 19, 77, 70, false, false, NULL);
  dot16_case("f16 lhs transposed", H, H, H, 2, 24, 65, 33, true, false, NULL);
  dot16_case("bf16 lhs transposed odd M", BF, BF, BF, 1, 21, 40, 17, true, false, NULL);
  dot16_case("f16 rhs transposed", H, H, H, 2, 9, 130, 50, false, true, NULL);
  dot16_case("bf16 both transposed", BF, BF, BF, 3, 16, 45, 31, true, true, NULL);
  dot16_case("bf16 to f32", BF, BF, F, 2, 13, 260, 40, false, false, NULL);
  dot16_case("f16 x f32", H, F, F, 1, 11, 50, 35, false, true, NULL);
  dot16_case("f16 small M", H, H, H, 4, 3, 40, 70, false, false, NULL);
  dot16_case("bf16 long K", BF, BF, BF, 1, 8, 1100, 32, false, false, NULL);
  dot16_case("f16 large parallel", H, H, H, 1, 200, 520, 600, false, false, tu_pool());
  dot16_case("bf16 large parallel transposed", BF, BF, BF, 2, 130, 260, 97, true, true, tu_pool());
  dot16_split_case("bf16 split dims", BF, 3, 16, 5, 9, 2, 40);
  dot16_split_case("f16 split dims odd", H, 2, 11, 7, 3, 3, 33);
  dot16_split_case("f32 split dims", F, 3, 24, 4, 8, 2, 64);
}

/* NHWC x HWIO convolution, 3x3, stride `stride`, SAME-like padding 1, in dtype t */
static void conv16_case(const char *name, cj_dtype t, int Nb, int H, int W, int C, int O,
                        int stride) {
  int OH = (H + 2 - 3) / stride + 1, OW = (W + 2 - 3) / stride + 1;
  char xt[64], wt[64], rt[64], text[1024];
  snprintf(xt, sizeof xt, "tensor<%dx%dx%dx%dx%s>", Nb, H, W, C, tname(t));
  snprintf(wt, sizeof wt, "tensor<3x3x%dx%dx%s>", C, O, tname(t));
  snprintf(rt, sizeof rt, "tensor<%dx%dx%dx%dx%s>", Nb, OH, OW, O, tname(t));
  snprintf(text, sizeof text,
           "func.func @main(%%x: %s, %%w: %s) -> %s {\n"
           "  %%r = stablehlo.convolution(%%x, %%w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
           "window = {stride = [%d, %d], pad = [[1, 1], [1, 1]]} "
           "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (%s, %s) -> %s\n"
           "  return %%r : %s\n}\n",
           xt, wt, rt, stride, stride, xt, wt, rt, rt);
  operands o;
  void *r = run_two(name, text, (cj_dtype[]){t, t}, (long[]){(long)Nb * H * W * C, 9L * C * O}, 5,
                    tu_pool(), &o);
  if (!r) return;
  const double *xv = o.vals[0], *wv = o.vals[1];
  int bad = 0;
  for (int b = 0; b < Nb; b++)
    for (int oh = 0; oh < OH; oh++)
      for (int ow = 0; ow < OW; ow++)
        for (int o = 0; o < O; o++) {
          double acc = 0, sumabs = 0;
          for (int kh = 0; kh < 3; kh++)
            for (int kw = 0; kw < 3; kw++) {
              int ih = oh * stride + kh - 1, iw = ow * stride + kw - 1;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              for (int c = 0; c < C; c++) {
                double pr = xv[(((long)b * H + ih) * W + iw) * C + c] * wv[((kh * 3L + kw) * C + c) * O + o];
                acc += pr;
                sumabs += fabs(pr);
              }
            }
          double got = get(t, r, (((long)b * OH + oh) * OW + ow) * O + o);
          if (!(fabs(got - acc) <= tol_of(t, acc, sumabs, 9L * C))) {
            if (bad++ < 3) fprintf(stderr, "%s: [%d,%d,%d,%d] = %.9g, expected %.9g\n", name, b, oh, ow, o, got, acc);
          }
        }
  CHECK_MSG(bad == 0, "%s: %d elements differ", name, bad);
  free(r);
  free_operands(&o);
}

int main(void) {
  (void)tu_expect_bytes;
  test_cvt();
  test_dot16();
  conv16_case("bf16 conv 3x3", CJ_BF16, 2, 9, 11, 5, 40, 1);
  conv16_case("f16 conv 3x3 stride 2", CJ_F16, 2, 10, 7, 16, 33, 2);
  cj_pool_destroy(tu_pool());
  return check_report("cpu_dot16");
}
