/* f64 dot_general (k_dot.c's f64 GEMM: its packing of each operand layout and its micro-kernel's
 * partial tiles) against a long double reference: every transposition of a matrix product, sizes
 * 1, 7, 8, 9, 17 and tails in every dimension, K past one 256-term block and past the chunked
 * sums of long contractions, batch dimensions in front and in the middle, rows, columns and
 * contractions that are two dimensions each (no affine index table), on one thread and on the
 * pool. Each element must be within (K + 2) u sum|terms| of the exact sum (u = 2^-53).
 *
 * `test_dot64 bench M K N [tl tr [reps]]` times [M,K]x[K,N] (tl: lhs stored [K,M], tr: rhs stored
 * [N,K]) on one thread and prints GFLOP/s instead. */
#include <math.h>
#include <stdint.h>
#include <time.h>

#include "../common/check.h"
#include "prog_util.h"

/* a value in [-1, 1) with all 53 bits of its mantissa in use */
static double drand(uint32_t *s) {
  double hi = (double)tu_rand16(s), mid = (double)tu_rand16(s), lo = (double)tu_rand16(s);
  return (hi + (mid + lo / 65536.0) / 65536.0) / 32768.0 - 1.0;
}

static void type_of(char *buf, size_t n, int rank, const int *dims) {
  int o = snprintf(buf, n, "tensor<");
  for (int i = 0; i < rank; i++) o += snprintf(buf + o, n - (size_t)o, "%dx", dims[i]);
  snprintf(buf + o, n - (size_t)o, "f64>");
}

static void list_of(char *buf, size_t n, int cnt, const int *d) {
  int o = snprintf(buf, n, "[");
  for (int i = 0; i < cnt; i++) o += snprintf(buf + o, n - (size_t)o, i ? ", %d" : "%d", d[i]);
  snprintf(buf + o, n - (size_t)o, "]");
}

typedef struct {
  int lr, rr;             /* ranks */
  int ld[6], rd[6];       /* dims */
  int nb, nc;             /* batch and contracting dim counts */
  int lb[6], rb[6], lc[6], rc[6];
} dot_spec;

static long count(int rank, const int *d) {
  long n = 1;
  for (int i = 0; i < rank; i++) n *= d[i];
  return n;
}

/* the element offset of multi-index idx (over dims d of rank r, row-major) */
static long offset(int r, const int *d, const int *idx) {
  long o = 0;
  for (int i = 0; i < r; i++) o = o * d[i] + idx[i];
  return o;
}

/* runs the spec on pool and checks every element against the long double sum; returns the
 * number of bad elements */
static int run_spec(const char *name, const dot_spec *s, cj_threadpool *pool, uint32_t seed) {
  char lty[96], rty[96], oty[96], lbs[64], rbs[64], lcs[64], rcs[64], text[2048];
  bool lused[6] = {0}, rused[6] = {0};
  for (int i = 0; i < s->nb; i++) lused[s->lb[i]] = rused[s->rb[i]] = true;
  for (int i = 0; i < s->nc; i++) lused[s->lc[i]] = rused[s->rc[i]] = true;
  int od[12], orank = 0, lfree[6], nlf = 0, rfree[6], nrf = 0;
  for (int i = 0; i < s->nb; i++) od[orank++] = s->ld[s->lb[i]];
  for (int d = 0; d < s->lr; d++)
    if (!lused[d]) {
      lfree[nlf++] = d;
      od[orank++] = s->ld[d];
    }
  for (int d = 0; d < s->rr; d++)
    if (!rused[d]) {
      rfree[nrf++] = d;
      od[orank++] = s->rd[d];
    }
  type_of(lty, sizeof lty, s->lr, s->ld);
  type_of(rty, sizeof rty, s->rr, s->rd);
  type_of(oty, sizeof oty, orank, od);
  list_of(lbs, sizeof lbs, s->nb, s->lb);
  list_of(rbs, sizeof rbs, s->nb, s->rb);
  list_of(lcs, sizeof lcs, s->nc, s->lc);
  list_of(rcs, sizeof rcs, s->nc, s->rc);
  char bat[160] = "";
  if (s->nb) snprintf(bat, sizeof bat, "batching_dims = %s x %s, ", lbs, rbs);
  snprintf(text, sizeof text,
           "func.func @main(%%a: %s, %%b: %s) -> %s {\n"
           "  %%r = stablehlo.dot_general %%a, %%b, %scontracting_dims = %s x %s : (%s, %s) -> %s\n"
           "  return %%r : %s\n}\n",
           lty, rty, oty, bat, lcs, rcs, lty, rty, oty, oty);
  cj_compiled *p = tu_compile_ok(name, text);
  if (!p) return 1;
  long na = count(s->lr, s->ld), nbv = count(s->rr, s->rd), no = count(orank, od);
  double *a = malloc(sizeof(double) * (size_t)na), *b = malloc(sizeof(double) * (size_t)nbv);
  uint32_t r = seed;
  for (long i = 0; i < na; i++) a[i] = drand(&r);
  for (long i = 0; i < nbv; i++) b[i] = drand(&r);
  void *args[2] = {a, b}, *res[1] = {0};
  int bad = 0;
  if (!tu_run_ok(name, p, args, res, pool)) bad = 1;
  const double *got = res[0];
  int kd[6];
  long K = 1;
  for (int i = 0; i < s->nc; i++) K *= (kd[i] = s->ld[s->lc[i]]);
  for (long oi = 0; oi < no && !bad; oi++) {
    int oidx[12], li[6] = {0}, ri[6] = {0};
    long t = oi;
    for (int d = orank - 1; d >= 0; d--) {
      oidx[d] = (int)(t % od[d]);
      t /= od[d];
    }
    for (int i = 0; i < s->nb; i++) li[s->lb[i]] = ri[s->rb[i]] = oidx[i];
    for (int i = 0; i < nlf; i++) li[lfree[i]] = oidx[s->nb + i];
    for (int i = 0; i < nrf; i++) ri[rfree[i]] = oidx[s->nb + nlf + i];
    long double acc = 0, mag = 0;
    for (long k = 0; k < K; k++) {
      long u = k;
      for (int i = s->nc - 1; i >= 0; i--) {
        li[s->lc[i]] = ri[s->rc[i]] = (int)(u % kd[i]);
        u /= kd[i];
      }
      long double pr = (long double)a[offset(s->lr, s->ld, li)] * b[offset(s->rr, s->rd, ri)];
      acc += pr;
      mag += fabsl(pr);
    }
    double tol = (double)((K + 2) * ldexpl(1, -53) * mag) + 1e-300;
    if (!(fabs(got[oi] - (double)acc) <= tol)) {
      if (bad < 3)
        fprintf(stderr, "%s: element %ld = %.17g, expected %.17Lg\n", name, oi, got[oi], acc);
      bad++;
    }
  }
  CHECK_MSG(bad == 0, "%s: %d elements differ", name, bad);
  free(res[0]);
  free(a);
  free(b);
  tu_free(p);
  return bad;
}

/* [B?, M, K] x [B?, K, N] with the lhs stored [K, M] when tl, the rhs [N, K] when tr */
static void mat_case(int B, int M, int K, int N, bool tl, bool tr, cj_threadpool *pool) {
  dot_spec s = {0};
  int o = B ? 1 : 0;
  s.lr = s.rr = 2 + o;
  if (B) {
    s.ld[0] = s.rd[0] = B;
    s.nb = 1;
  }
  s.ld[o] = tl ? K : M;
  s.ld[o + 1] = tl ? M : K;
  s.rd[o] = tr ? N : K;
  s.rd[o + 1] = tr ? K : N;
  s.nc = 1;
  s.lc[0] = tl ? o : o + 1;
  s.rc[0] = tr ? o + 1 : o;
  char name[96];
  snprintf(name, sizeof name, "f64 %s%dx%dx%d %c%c%s", B ? "batch " : "", M, K, N, tl ? 't' : 'n',
           tr ? 't' : 'n', pool ? " pool" : "");
  run_spec(name, &s, pool, (uint32_t)(M * 131 + K * 17 + N + tl * 7 + tr * 3));
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int bench(int argc, char **argv) {
  int M = atoi(argv[2]), K = atoi(argv[3]), N = atoi(argv[4]);
  bool tl = argc > 5 && atoi(argv[5]), tr = argc > 6 && atoi(argv[6]);
  int reps = argc > 7 ? atoi(argv[7]) : 200;
  int la[2] = {tl ? K : M, tl ? M : K}, ra[2] = {tr ? N : K, tr ? K : N}, oa[2] = {M, N};
  char lty[96], rty[96], oty[96], text[2048];
  type_of(lty, sizeof lty, 2, la);
  type_of(rty, sizeof rty, 2, ra);
  type_of(oty, sizeof oty, 2, oa);
  snprintf(text, sizeof text,
           "func.func @main(%%a: %s, %%b: %s) -> %s {\n"
           "  %%r = stablehlo.dot_general %%a, %%b, contracting_dims = [%d] x [%d] : (%s, %s) -> %s\n"
           "  return %%r : %s\n}\n",
           lty, rty, oty, tl ? 0 : 1, tr ? 1 : 0, lty, rty, oty, oty);
  cj_compiled *p = tu_compile_ok("bench", text);
  if (!p) return 1;
  double *a = calloc((size_t)M * K, sizeof(double)), *b = calloc((size_t)K * N, sizeof(double));
  uint32_t r = 1;
  for (long i = 0; i < (long)M * K; i++) a[i] = drand(&r);
  for (long i = 0; i < (long)K * N; i++) b[i] = drand(&r);
  void *args[2] = {a, b}, *res[1] = {0};
  tu_run_ok("bench", p, args, res, NULL);
  double best = 1e30;
  for (int rep = 0; rep < 5; rep++) {
    double t0 = now();
    for (int i = 0; i < reps; i++) tu_run_ok("bench", p, args, res, NULL);
    double t = (now() - t0) / reps;
    if (t < best) best = t;
  }
  printf("%dx%dx%d %c%c: %.1f us, %.1f GFLOP/s\n", M, K, N, tl ? 't' : 'n', tr ? 't' : 'n', best * 1e6,
         2.0 * M * K * N / best * 1e-9);
  free(res[0]);
  free(a);
  free(b);
  tu_free(p);
  return 0;
}

int main(int argc, char **argv) {
  (void)tu_expect_bytes;
  if (argc >= 5 && strcmp(argv[1], "bench") == 0) return bench(argc, argv);
  static const int sz[] = {1, 7, 8, 9, 17};
  for (int tl = 0; tl < 2; tl++)
    for (int tr = 0; tr < 2; tr++) {
      for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++)
          for (int l = 0; l < 5; l++) mat_case(0, sz[i], sz[j], sz[l], tl, tr, NULL);
      /* past the 16-column panel and the 8-row panel with tails, K past one 256-term block,
       * M past one 128-row block, N past 512 columns; on the pool (split over rows or columns) */
      mat_case(0, 33, 33, 33, tl, tr, NULL);
      mat_case(0, 100, 300, 70, tl, tr, NULL);
      mat_case(0, 100, 300, 70, tl, tr, tu_pool());
      mat_case(0, 1000, 64, 64, tl, tr, tu_pool());
      mat_case(0, 20, 40, 600, tl, tr, tu_pool());
      mat_case(0, 3, 1, 300, tl, tr, NULL);
      mat_case(0, 300, 19, 1, tl, tr, NULL);
      mat_case(8, 50, 50, 50, tl, tr, NULL);
      mat_case(8, 50, 50, 50, tl, tr, tu_pool());
      mat_case(3, 9, 17, 25, tl, tr, NULL);
    }
  /* a long contraction: chunk sums (K > 4096) */
  mat_case(0, 9, 5000, 17, false, false, NULL);
  mat_case(0, 9, 5000, 17, true, true, tu_pool());
  /* einsum forms: 'mbk,bkn->bmn' (batch in the middle of the lhs), 'bhqd,bkhd->bhqk' (two
   * batch dims, the keys' rows strided), 'ijk,jkl->il' (two contracting dims), rows and
   * columns that are two dims each with a contraction over two dims in reverse order */
  dot_spec e1 = {3, 3, {19, 5, 21}, {5, 21, 23}, 1, 1, {1}, {0}, {2}, {1}};
  run_spec("f64 mbk,bkn->bmn", &e1, NULL, 3);
  run_spec("f64 mbk,bkn->bmn pool", &e1, tu_pool(), 4);
  dot_spec e2 = {4, 4, {2, 3, 10, 9}, {2, 11, 3, 9}, 2, 1, {0, 1}, {0, 2}, {3}, {3}};
  run_spec("f64 bhqd,bkhd->bhqk", &e2, NULL, 5);
  dot_spec e3 = {3, 3, {13, 6, 5}, {6, 5, 11}, 0, 2, {0}, {0}, {1, 2}, {0, 1}};
  run_spec("f64 ijk,jkl->il", &e3, NULL, 6);
  dot_spec e4 = {4, 4, {3, 7, 5, 9}, {9, 4, 7, 6}, 0, 2, {0}, {0}, {3, 1}, {0, 2}};
  run_spec("f64 split rows/cols, k reversed", &e4, NULL, 7);
  dot_spec e5 = {3, 3, {5, 9, 6}, {4, 9, 5}, 0, 1, {0}, {0}, {1}, {1}};
  run_spec("f64 row and column gaps", &e5, NULL, 8);
  cj_pool_destroy(tu_pool());
  return check_report("cpu_dot64");
}
