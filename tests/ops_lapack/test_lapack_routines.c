/* The LAPACK kernels' table of routines (src/cpu/k_lapack.h: cjrt_lapack_*): its names, an
 * installed routine is the one the kernels call (with SciPy's cython_lapack arguments: no hidden
 * character lengths), a compiled program keeps the routines it was compiled with, NULL restores
 * the linked one, and an installed trsm solves a column-major call as the right-side solve on the
 * row-major buffers (k_lapack.c, lk_plan_trsm), with the right answer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "../cpu/prog_util.h"
#include "cpu/k_lapack.h"

typedef void (*potrf_fn)(char *, int *, double *, int *, int *);
typedef void (*trsm_fn)(char *, char *, char *, char *, int *, int *, double *, double *, int *,
                        double *, int *);
static potrf_fn linked_potrf;
static trsm_fn linked_trsm;
static int potrf_calls, trsm_calls;
static char trsm_side;

static void counting_potrf(char *uplo, int *n, double *a, int *lda, int *info) {
  potrf_calls++;
  linked_potrf(uplo, n, a, lda, info);
}

static void counting_trsm(char *side, char *uplo, char *tr, char *diag, int *m, int *n,
                          double *alpha, double *a, int *lda, double *b, int *ldb) {
  trsm_calls++;
  trsm_side = *side;
  linked_trsm(side, uplo, tr, diag, m, n, alpha, a, lda, b, ldb);
}

#define CM3 "dense<[1, 2, 0]> : tensor<3xindex>"
static const char potrf_prog[] =
    "func.func @main(%a: tensor<2x3x3xf64>) -> (tensor<2x3x3xf64>, tensor<2xi32>) {\n"
    "  %r:2 = stablehlo.custom_call @lapack_dpotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : "
    "ui8}, operand_layouts = [" CM3 "], result_layouts = [" CM3 ", dense<0> : tensor<1xindex>]}"
    " : (tensor<2x3x3xf64>) -> (tensor<2x3x3xf64>, tensor<2xi32>)\n"
    "  func.return %r#0, %r#1 : tensor<2x3x3xf64>, tensor<2xi32>\n}\n";
/* a lower-triangular solve from the left, all column-major (as JAX emits it) */
static const char trsm_prog[] =
    "func.func @main(%a: tensor<2x3x3xf64>, %b: tensor<2x3x2xf64>) -> tensor<2x3x2xf64> {\n"
    "  %r = stablehlo.custom_call @lapack_dtrsm_ffi(%a, %b) {mhlo.backend_config = {diag = 78 : "
    "ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, operand_layouts = [" CM3 ", " CM3
    "], result_layouts = [" CM3 "]} : (tensor<2x3x3xf64>, tensor<2x3x2xf64>) -> "
    "tensor<2x3x2xf64>\n"
    "  func.return %r : tensor<2x3x2xf64>\n}\n";

static cj_compiled *compile(const char *text) {
  cj_status err = NULL;
  cj_compiled *p = tu_compile(text, &err);
  CHECK_MSG(p != NULL, "compile: %s", err ? cj_status_message(err) : "");
  cj_status_free(err);
  return p;
}

/* runs potrf on two 3 x 3 matrices (row-major): the factor into l, info into info */
static void run_potrf(cj_compiled *p, double *l, int32_t *info) {
  double a[18] = {4, 2, 0, 2, 5, 1, 0, 1, 3, 9, 3, 0, 3, 5, 2, 0, 2, 6};
  void *args[1] = {a}, *res[2] = {NULL, NULL};
  cj_status st = tu_run(p, args, res, tu_pool());
  CHECK_MSG(st == NULL, "run: %s", st ? cj_status_message(st) : "");
  cj_status_free(st);
  if (res[0]) memcpy(l, res[0], 18 * sizeof(double));
  if (res[1]) memcpy(info, res[1], 2 * sizeof(int32_t));
  free(res[0]);
  free(res[1]);
}

static void check_names(void) {
  int n = 0;
  while (cjrt_lapack_routine_name(n)) n++;
  CHECK_EQ_INT(n, 56); /* 14 routines x 4 types */
  CHECK(strcmp(cjrt_lapack_routine_name(0), "strsm") == 0);
  CHECK(strcmp(cjrt_lapack_routine_name(n - 1), "zgtsv") == 0);
  CHECK(cjrt_lapack_routine_name(-1) == NULL);
  for (int i = 0; i < n; i++) CHECK(cjrt_lapack_routine(cjrt_lapack_routine_name(i)) != NULL);
  /* complex routines by their complex names only */
  CHECK(cjrt_lapack_routine("zheevd") != NULL && cjrt_lapack_routine("zsyevd") == NULL);
  CHECK(cjrt_lapack_routine("cungqr") != NULL && cjrt_lapack_routine("dungqr") == NULL);
  CHECK(cjrt_lapack_routine("dfoo") == NULL && cjrt_lapack_routine(NULL) == NULL);
  CHECK_EQ_INT(cjrt_lapack_set_routine("dfoo", (void *)counting_potrf), -1);
  CHECK_EQ_INT(cjrt_lapack_set_routine(NULL, NULL), -1);
}

static void check_potrf(void) {
  void *linked = cjrt_lapack_routine("dpotrf");
  memcpy(&linked_potrf, &linked, sizeof linked);
  cj_compiled *before = compile(potrf_prog);
  double l0[18] = {0}, l1[18] = {0}, l2[18] = {0};
  int32_t info0[2] = {-9, -9}, info1[2] = {-9, -9}, info2[2] = {-9, -9};
  if (before) run_potrf(before, l0, info0);
  CHECK(info0[0] == 0 && info0[1] == 0 && l0[0] == 2 && l0[3] == 1);
  void *mine = NULL;
  potrf_fn f = counting_potrf;
  memcpy(&mine, &f, sizeof mine);
  CHECK_EQ_INT(cjrt_lapack_set_routine("dpotrf", mine), 0);
  CHECK(cjrt_lapack_routine("dpotrf") == mine);
  cj_compiled *after = compile(potrf_prog);
  if (before) run_potrf(before, l1, info1); /* keeps the routine it was compiled with */
  CHECK_EQ_INT(potrf_calls, 0);
  if (after) run_potrf(after, l2, info2); /* one call per batch element */
  CHECK_EQ_INT(potrf_calls, 2);
  CHECK(memcmp(l0, l1, sizeof l0) == 0 && memcmp(l0, l2, sizeof l0) == 0);
  CHECK(info2[0] == 0 && info2[1] == 0);
  CHECK_EQ_INT(cjrt_lapack_set_routine("dpotrf", NULL), 0);
  CHECK(cjrt_lapack_routine("dpotrf") == linked);
  if (before) tu_free(before);
  if (after) tu_free(after);
}

static void check_trsm(void) {
  void *linked = cjrt_lapack_routine("dtrsm"), *mine = NULL;
  memcpy(&linked_trsm, &linked, sizeof linked);
  trsm_fn f = counting_trsm;
  memcpy(&mine, &f, sizeof mine);
  CHECK_EQ_INT(cjrt_lapack_set_routine("dtrsm", mine), 0);
  cj_compiled *p = compile(trsm_prog);
  /* L = [[2, 0, 0], [1, 1, 0], [0, 1, 4]] (row-major), x = [[1, 2], [3, 4], [5, 6]] */
  double a[18] = {2, 0, 0, 1, 1, 0, 0, 1, 4, 2, 0, 0, 1, 1, 0, 0, 1, 4};
  double x[6] = {1, 2, 3, 4, 5, 6}, b[12];
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 2; j++) {
        double s = 0;
        for (int q = 0; q < 3; q++) s += a[k * 9 + i * 3 + q] * x[q * 2 + j];
        b[k * 6 + i * 2 + j] = s;
      }
  void *args[2] = {a, b}, *res[1] = {NULL};
  if (p) {
    cj_status st = tu_run(p, args, res, tu_pool());
    CHECK_MSG(st == NULL, "run: %s", st ? cj_status_message(st) : "");
    cj_status_free(st);
    tu_free(p);
  }
  CHECK_EQ_INT(trsm_calls, 2);
  CHECK(trsm_side == 'R'); /* the transposed problem in place, not jaxlib's copies */
  for (int i = 0; res[0] && i < 12; i++) CHECK(((double *)res[0])[i] == x[i % 6]);
  free(res[0]);
  CHECK_EQ_INT(cjrt_lapack_set_routine("dtrsm", NULL), 0);
}

/* Above order 64 a potrf runs the linked serial OpenBLAS's even where another is installed
 * (k_lapack.c, lk_plan_threads: faster there than SciPy's, and no threads of its own); with the
 * reference LAPACK linked (calls that may run at once) the installed one runs. */
enum { BIG = 65 };
static void check_big_potrf(void) {
  bool serial = !cj_lapack_concurrent(); /* (nothing installed now) */
  char prog[1024];
  snprintf(prog, sizeof prog,
           "func.func @main(%%a: tensor<%dx%dxf64>) -> tensor<%dx%dxf64> {\n"
           "  %%r:2 = stablehlo.custom_call @lapack_dpotrf_ffi(%%a) {mhlo.backend_config = {uplo = "
           "76 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = "
           "[dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<%dx%dxf64>) -> "
           "(tensor<%dx%dxf64>, tensor<i32>)\n"
           "  func.return %%r#0 : tensor<%dx%dxf64>\n}\n",
           BIG, BIG, BIG, BIG, BIG, BIG, BIG, BIG, BIG, BIG);
  double *a = malloc(sizeof(double) * BIG * BIG), *want = NULL;
  if (!a) return;
  for (int i = 0; i < BIG; i++)
    for (int j = 0; j < BIG; j++) a[i * BIG + j] = i == j ? BIG : 1.0 / (1 + abs(i - j));
  void *linked = cjrt_lapack_routine("dpotrf"), *mine = NULL;
  memcpy(&linked_potrf, &linked, sizeof linked);
  potrf_fn f = counting_potrf;
  memcpy(&mine, &f, sizeof mine);
  for (int k = 0; k < 2; k++) { /* the linked potrf, then counting_potrf installed */
    if (k == 1) CHECK_EQ_INT(cjrt_lapack_set_routine("dpotrf", mine), 0);
    int calls = potrf_calls;
    cj_compiled *p = compile(prog);
    void *args[1] = {a}, *res[1] = {NULL};
    if (p) {
      cj_status st = tu_run(p, args, res, tu_pool());
      CHECK_MSG(st == NULL, "run: %s", st ? cj_status_message(st) : "");
      cj_status_free(st);
      tu_free(p);
    }
    CHECK_EQ_INT(potrf_calls - calls, k == 1 && !serial);
    CHECK(res[0] != NULL && ((double *)res[0])[0] == sqrt((double)BIG));
    if (k == 0) want = res[0];
    else if (want && res[0]) CHECK(memcmp(want, res[0], sizeof(double) * BIG * BIG) == 0);
    if (k == 1) free(res[0]);
  }
  CHECK_EQ_INT(cjrt_lapack_set_routine("dpotrf", NULL), 0);
  free(want);
  free(a);
}

int main(void) {
  (void)tu_expect_bytes; /* (prog_util.h's, unused here) */
  check_names();
  check_potrf();
  check_trsm();
  check_big_potrf();
  return check_report("ops_lapack_routines");
}
