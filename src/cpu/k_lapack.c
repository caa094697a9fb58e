/* cjrt: jaxlib's LAPACK custom calls, run with LAPACK (k_lapack.h).
 *
 * Lowering reads the call (operand and result types, the attributes in `mhlo.backend_config`,
 * the layouts), checks it against the routine's conventions (those of jaxlib's kernels in
 * jaxlib/cpu/lapack_kernels.cc: which operand a result overwrites, info outputs, leading
 * dimensions) and asks LAPACK for its workspace sizes. At run time each batch element is copied
 * into a per-thread area in the layout the call names (a matrix in column-major layout is
 * transposed from our row-major buffers, in vector tiles: k_linalg.h), LAPACK runs on it there,
 * and the results are copied back. trsm needs no copies: a column-major solve is the row-major
 * solve on the other side, which BLAS runs on our buffers in place (lk_body_direct). A result
 * that overwrites an operand (jaxlib's aliases) may take over its buffer. LAPACK itself is single-threaded, linked statically and hidden in the plugin (no thread
 * pool of its own, no symbols shared with other copies of LAPACK in the process): Debian's serial
 * OpenBLAS where the build found it (CJRT_LAPACK_SERIAL: its static build is not safe to call from
 * two threads at once, so every call holds one lock and batch elements run one after another),
 * else the reference LAPACK and BLAS, whose batch elements run in parallel on the client's pool.
 * One large potrf is split over the pool itself (lk_pp_potrf).
 *
 * Built without LAPACK (CJRT_HAVE_LAPACK undefined), every lapack_* target fails at compile
 * time, naming the target.
 */
#include "cpu/k_lapack.h"
#include "cpu/k_linalg.h"

#include <complex.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum {
  LK_TRSM,
  LK_GETRF,
  LK_GEQRF,
  LK_GEQP3,
  LK_ORGQR,
  LK_POTRF,
  LK_GESDD,
  LK_GESVD,
  LK_SYEVD,
  LK_GEHRD,
  LK_SYTRD,
  LK_GTSV,
  LK_GEEV,   /* real: eigenvalues as real and imaginary parts, complex eigenvectors */
  LK_GEEV_C, /* complex */
  LK_GEES,
  LK_GEES_C,
  LK_COUNT
};

#define LK_MAXARGS 10

/* One operand or result as a batch of `core`-rank slices. */
typedef struct lk_arg {
  int core;         /* 0, 1 or 2 trailing dims per batch element */
  int64_t rows, cols; /* the slice's logical dims (1 where absent) */
  bool transpose;   /* a matrix the call sees column-major */
  bool cm;          /* the call's layout is column-major (transpose, or a vector: no move) */
  int64_t es;       /* element bytes */
  int64_t slice;    /* bytes per batch element */
  int64_t off;      /* its place in the per-thread area */
  int alias;        /* results: the operand whose buffer it is (-1: its own) */
  bool in_place;    /* an operand LAPACK reads where it is (not copied; never written) */
} lk_arg;

typedef struct lk_params {
  int kind, t; /* t: 0 s, 1 d, 2 c, 3 z */
  int nin, nout;
  lk_arg arg[LK_MAXARGS]; /* operands, then results */
  int64_t batch, grain;
  int m, n, k, lda, ldu, ldvt, ilo, ihi;
  char uplo, side, diag, job0, job1;
  int lwork, liwork, lrwork;
  int64_t lxwork; /* extra elements after the LAPACK workspace (geev's packed eigenvectors) */
  int64_t ws_off, area_bytes;
  bool direct; /* trsm: run on the result buffer itself (lk_body_direct) */
  bool locked;   /* every call holds lk_lock (an entry point of the serial OpenBLAS) */
  bool parallel; /* batch elements may run at once on the client's pool */
  int pp_nb;     /* potrf: the block order when a factorization runs on the pool (lk_pp_potrf) */
  const void *fns; /* the entry points at compile time (this type's lk_fns, a copy) */
  bool (*transpose)(void *, const void *, int64_t, int64_t, int); /* k_linalg.h's, for this CPU */
} lk_params;

/* Per routine: the names (real, complex), operands and results: element type codes (T the
 * call's type, R its real type, C its complex type, I int32), trailing (per batch element) rank,
 * and for results the operand they overwrite (jaxlib's output_operand_aliases). */
typedef struct lk_spec {
  const char *rname, *cname;
  int nin, nout;
  const char *types; /* nin + nout codes */
  const char *cores; /* nin + nout digits */
  const char *alias; /* nout: operand digit or '-' */
} lk_spec;

static const lk_spec lk_specs[LK_COUNT] = {
    [LK_TRSM] = {"trsm", "trsm", 2, 1, "TTT", "222", "1"},
    [LK_GETRF] = {"getrf", "getrf", 1, 3, "TTII", "2210", "0--"},
    [LK_GEQRF] = {"geqrf", "geqrf", 1, 2, "TTT", "221", "0-"},
    [LK_GEQP3] = {"geqp3", "geqp3", 2, 3, "TITIT", "21211", "01-"},
    [LK_ORGQR] = {"orgqr", "ungqr", 2, 1, "TTT", "212", "0"},
    [LK_POTRF] = {"potrf", "potrf", 1, 2, "TTI", "220", "0-"},
    [LK_GESDD] = {"gesdd", "gesdd", 1, 5, "TTRTTI", "221220", "0----"},
    [LK_GESVD] = {"gesvd", "gesvd", 1, 5, "TTRTTI", "221220", "0----"},
    [LK_SYEVD] = {"syevd", "heevd", 1, 3, "TTRI", "2210", "0--"},
    [LK_GEHRD] = {"gehrd", "gehrd", 1, 3, "TTTI", "2210", "0--"},
    [LK_SYTRD] = {"sytrd", "hetrd", 1, 5, "TTRRTI", "221110", "0----"},
    [LK_GTSV] = {"gtsv", "gtsv", 4, 5, "TTTTTTTTI", "111211120", "0123-"},
    [LK_GEEV] = {"geev", NULL, 1, 5, "TTTCCI", "211220", "-----"},
    [LK_GEEV_C] = {NULL, "geev", 1, 4, "TTTTI", "21220", "----"},
    [LK_GEES] = {"gees", NULL, 1, 6, "TTTTTII", "2221100", "0-----"},
    [LK_GEES_C] = {NULL, "gees", 1, 5, "TTTTII", "222100", "0----"},
};

bool cj_lapack_is_target(const char *target, size_t len) {
  return len > 7 && memcmp(target, "lapack_", 7) == 0;
}

static int lk_parse(const char *target, size_t len, int *t) {
  /* lapack_<t><routine>_ffi */
  if (len < 7 + 1 + 4 || memcmp(target + len - 4, "_ffi", 4) != 0) return -1;
  const char *tc = "sdcz", *p = strchr(tc, target[7]);
  if (!p || !target[7]) return -1;
  *t = (int)(p - tc);
  const char *name = target + 8;
  size_t nl = len - 8 - 4;
  for (int k = 0; k < LK_COUNT; k++) {
    const char *want = *t >= 2 ? lk_specs[k].cname : lk_specs[k].rname;
    if (want && strlen(want) == nl && memcmp(name, want, nl) == 0) return k;
  }
  return -1;
}

/* The LAPACK and BLAS routines the kernels call: (member of lk_fns, real name, complex name);
 * the names without their type letter, as in SciPy's cython_lapack / cython_blas. */
#define LK_FN_LIST(X)                                                                        \
  X(trsm, "trsm", "trsm") X(getrf, "getrf", "getrf") X(geqrf, "geqrf", "geqrf")              \
  X(geqp3, "geqp3", "geqp3") X(orgqr, "orgqr", "ungqr") X(potrf, "potrf", "potrf")           \
  X(gesdd, "gesdd", "gesdd") X(gesvd, "gesvd", "gesvd") X(syevd, "syevd", "heevd")           \
  X(gehrd, "gehrd", "gehrd") X(sytrd, "sytrd", "hetrd") X(geev, "geev", "geev")              \
  X(gees, "gees", "gees") X(gtsv, "gtsv", "gtsv")
#define LK_COUNT_FN(member, rname, cname) +1
enum { LK_NFN = 0 LK_FN_LIST(LK_COUNT_FN) };
#undef LK_COUNT_FN

#ifdef CJRT_HAVE_LAPACK

#define LT float
#define LR float
#define LCPLX 0
#define LP s
#include "cpu/k_lapack_t.h"

#define LT double
#define LR double
#define LCPLX 0
#define LP d
#include "cpu/k_lapack_t.h"

#define LT float _Complex
#define LR float
#define LCPLX 1
#define LP c
#include "cpu/k_lapack_t.h"

#define LT double _Complex
#define LR double
#define LCPLX 1
#define LP z
#include "cpu/k_lapack_t.h"

/* LAPACK's error handler for an illegal argument: the reference one prints and STOPs, ending the
 * process we live in. The lowering checks every argument, so this is not reached; if it ever is,
 * the routine returns with info = -i (which JAX turns into NaNs) instead. */
void xerbla_(const char *srname, const int *info, size_t len);
void xerbla_(const char *srname, const int *info, size_t len) {
  (void)srname;
  (void)info;
  (void)len;
}

/* ======================================================================== the entry points */

/* The entry points in use, per type: the linked LAPACK's (lk_builtin_*) until
 * cjrt_lapack_set_routine replaces some. A compile copies its type's table (lk_params.fns), so a
 * program runs with the routines whose workspaces it asked for. */
typedef struct lk_table {
  lk_fns_s s;
  lk_fns_d d;
  lk_fns_c c;
  lk_fns_z z;
} lk_table;
static lk_table lk_tab;
static pthread_once_t lk_tab_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lk_tab_lock = PTHREAD_MUTEX_INITIALIZER; /* set and copy */
static void *const lk_tab_part[4] = {&lk_tab.s, &lk_tab.d, &lk_tab.c, &lk_tab.z};
static const void *const lk_builtin[4] = {&lk_builtin_s, &lk_builtin_d, &lk_builtin_c,
                                          &lk_builtin_z};
static const size_t lk_fns_size[4] = {sizeof(lk_fns_s), sizeof(lk_fns_d), sizeof(lk_fns_c),
                                      sizeof(lk_fns_z)};
static const size_t *const lk_offsets[4] = {lk_offsets_s, lk_offsets_d, lk_offsets_c,
                                            lk_offsets_z};
typedef void (*lk_fnptr)(void);
_Static_assert(sizeof(lk_fnptr) == sizeof(void *) && sizeof(lk_fnptr) == sizeof lk_tab.s.trsm,
               "an entry point is stored as the bytes of a data pointer");

static void lk_tab_init(void) {
  lk_tab.s = lk_builtin_s;
  lk_tab.d = lk_builtin_d;
  lk_tab.c = lk_builtin_c;
  lk_tab.z = lk_builtin_z;
}

static const lk_table *lk_current(void) {
  if (pthread_once(&lk_tab_once, lk_tab_init) != 0) return NULL;
  return &lk_tab;
}

/* Whether entry point i of `fns`, a table of type t's, is the linked routine. */
static bool lk_is_builtin(int t, const void *fns, int i) {
  return memcmp((const char *)fns + lk_offsets[t][i], (const char *)lk_builtin[t] + lk_offsets[t][i],
                sizeof(lk_fnptr)) == 0;
}

/* A copy of type t's entry points (in the lowering's arena). */
static void *lk_copy_fns(cj_lw *L, int t) {
  void *f = cj_lw_alloc(L, lk_fns_size[t]);
  if (!f || !lk_current()) return NULL;
  pthread_mutex_lock(&lk_tab_lock);
  memcpy(f, lk_tab_part[t], lk_fns_size[t]);
  pthread_mutex_unlock(&lk_tab_lock);
  return f;
}

/* every routine's name, type by type (sgetrf ... zgtsv) */
#define LK_NAME_S(member, rname, cname) "s" rname,
#define LK_NAME_D(member, rname, cname) "d" rname,
#define LK_NAME_C(member, rname, cname) "c" cname,
#define LK_NAME_Z(member, rname, cname) "z" cname,
static const char *const lk_names[4 * LK_NFN] = {LK_FN_LIST(LK_NAME_S) LK_FN_LIST(LK_NAME_D)
                                                     LK_FN_LIST(LK_NAME_C) LK_FN_LIST(LK_NAME_Z)};
#undef LK_NAME_S
#undef LK_NAME_D
#undef LK_NAME_C
#undef LK_NAME_Z

/* "dpotrf" -> t = 1 and potrf's place i; false for a routine not in the table */
static bool lk_find_routine(const char *name, int *t, int *i) {
  for (int k = 0; name && k < 4 * LK_NFN; k++)
    if (strcmp(name, lk_names[k]) == 0) {
      *t = k / LK_NFN;
      *i = k % LK_NFN;
      return true;
    }
  return false;
}

const char *cjrt_lapack_routine_name(int i) {
  return i >= 0 && i < 4 * LK_NFN ? lk_names[i] : NULL;
}

int cjrt_lapack_set_routine(const char *name, void *fn) {
  int t = 0, i = 0;
  if (!lk_find_routine(name, &t, &i) || !lk_current()) return -1;
  char *slot = (char *)lk_tab_part[t] + lk_offsets[t][i];
  pthread_mutex_lock(&lk_tab_lock);
  if (fn)
    memcpy(slot, &fn, sizeof fn);
  else
    memcpy(slot, (const char *)lk_builtin[t] + lk_offsets[t][i], sizeof(lk_fnptr));
  pthread_mutex_unlock(&lk_tab_lock);
  return 0;
}

void *cjrt_lapack_routine(const char *name) {
  int t = 0, i = 0;
  if (!lk_find_routine(name, &t, &i) || !lk_current()) return NULL;
  void *fn = NULL;
  pthread_mutex_lock(&lk_tab_lock);
  memcpy(&fn, (const char *)lk_tab_part[t] + lk_offsets[t][i], sizeof fn);
  pthread_mutex_unlock(&lk_tab_lock);
  return fn;
}

static bool (*const lk_query[4])(lk_params *) = {lk_query_s, lk_query_d, lk_query_c, lk_query_z};
static void (*const lk_run[4])(const lk_params *, char *const *, char *) = {
    lk_run_s, lk_run_d, lk_run_c, lk_run_z};
static void (*const lk_trsm_direct[4])(const lk_params *, bool, const char *, char *) = {
    lk_trsm_direct_s, lk_trsm_direct_d, lk_trsm_direct_c, lk_trsm_direct_z};

/* ======================================================================== the kernel */

/* A batch element's slice between our row-major buffer and the call's layout. */
/* dst (C x R) = transpose of src (R x C), elements of es bytes: 16 x 16 blocks with the
 * element size fixed per loop (a memcpy call per element was half of a small batched solve) */
#define LK_TRANSPOSE_AS(T)                                                            \
  do {                                                                                \
    T *d = (T *)dst;                                                                  \
    const T *s = (const T *)src;                                                      \
    for (int64_t r0 = 0; r0 < R; r0 += 16)                                            \
      for (int64_t c0 = 0; c0 < C; c0 += 16)                                          \
        for (int64_t r = r0; r < r0 + 16 && r < R; r++)                               \
          for (int64_t c = c0; c < c0 + 16 && c < C; c++) d[c * R + r] = s[r * C + c]; \
  } while (0)
typedef struct lk_c16 {
  double re, im;
} lk_c16;
static void lk_transpose(const lk_params *p, char *dst, const char *src, int64_t R, int64_t C,
                         int64_t es) {
  if (p->transpose(dst, src, R, C, (int)es)) return; /* vector tiles for 4- and 8-byte elements */
  switch (es) {
    case 4: LK_TRANSPOSE_AS(float); return;
    case 8: LK_TRANSPOSE_AS(double); return;
    case 16: LK_TRANSPOSE_AS(lk_c16); return;
    default:
      for (int64_t r = 0; r < R; r++)
        for (int64_t c = 0; c < C; c++) memcpy(dst + (c * R + r) * es, src + (r * C + c) * es, (size_t)es);
  }
}
#undef LK_TRANSPOSE_AS

/* an operand into LAPACK's column-major order, and a result back */
static void lk_copy_in(const lk_params *p, const lk_arg *g, char *dst, const char *src) {
  if (g->transpose) lk_transpose(p, dst, src, g->rows, g->cols, g->es);
  else memcpy(dst, src, (size_t)g->slice);
}

static void lk_copy_out(const lk_params *p, const lk_arg *g, char *dst, const char *src) {
  if (g->transpose) lk_transpose(p, dst, src, g->cols, g->rows, g->es);
  else memcpy(dst, src, (size_t)g->slice);
}

typedef struct lk_exec {
  const lk_params *p;
  cj_exec_ctx *ctx;
  const char *in[LK_MAXARGS];
  char *out[LK_MAXARGS];
} lk_exec;

/* Every call of the serial OpenBLAS in the process (all clients, devices and executions) holds
 * this lock (lk_params.locked). */
static pthread_mutex_t lk_lock = PTHREAD_MUTEX_INITIALIZER;
#ifdef CJRT_LAPACK_SERIAL
static const bool lk_serial = true;
#else
static const bool lk_serial = false;
#endif

/* ---- potrf of one large matrix on the client's pool: right-looking blocked Cholesky of the
 * lower triangle of the column-major matrix A (lda = n), blocks of pp_nb columns. LAPACK's potrf
 * factors a diagonal block L11 and its trsm the panel below it, L21 = A21 L11^-H (the linked
 * routines, one thread at a time under the lock where they need it), and the trailing lower
 * triangle A22 -= L21 L21^H runs split over the pool with the linear algebra kernels
 * (k_linalg.h; the serial OpenBLAS may not run on two threads at once). Each step is one
 * parallel loop: its task 0 updates the next block column first and then factors it (its
 * diagonal block and panel: a look-ahead), while the other tasks update the rest, row blocks of
 * LK_PP_RB, so that the serial part overlaps the update. The update works on the row-major view
 * V of the column-major buffer, V(i, j) = A(j, i): with W = L21^T (kb x r, row stride n), the
 * upper triangle of V22 gets conj(W)^T W subtracted (right of a row block's diagonal block with
 * one GEMM, the diagonal block through a temporary, so that A's upper triangle stays as LAPACK
 * leaves it). Only from order LK_PP_ORDER (below it the look-ahead leaves the other threads
 * little to do) and where the pool has more than one thread; else LAPACK's potrf factors the
 * whole matrix. */
enum { LK_PP_ORDER = 200, LK_PP_RB = 32 };
/* bytes a task needs in its per-thread area: the kernels' packing area, then the temporary */
#define LK_PP_TLS_BYTES (LA_TLS_BYTES + (int64_t)LK_PP_RB * LK_PP_RB * 16 + 64)

static void (*const lk_potrf_blk[4])(const void *, int, void *, int, int *) = {
    lk_potrf_blk_s, lk_potrf_blk_d, lk_potrf_blk_c, lk_potrf_blk_z};
static void (*const lk_panel_blk[4])(const void *, int, int, const void *, void *, int) = {
    lk_panel_blk_s, lk_panel_blk_d, lk_panel_blk_c, lk_panel_blk_z};

typedef struct lk_pp {
  const lk_params *p;
  const la_table *la;
  cj_exec_ctx *ctx;
  int64_t es, ld;
  char *w;       /* W = V[k0:k1, k1:n] */
  char *v22;     /* V[k1:, k1:] */
  int64_t kb, r; /* this step's block order and trailing order */
  int64_t kb2;   /* the next block's order (task 0's rows) */
  int info;      /* task 0's potrf info */
} lk_pp;

/* potrf of the kb x kb diagonal block at a11 (lda ld), then trsm of the `below` rows under it;
 * returns potrf's info */
static int lk_pp_factor(const lk_params *p, char *a11, int kb, int below, int ld, int64_t es) {
  int info = 0;
  if (p->locked) pthread_mutex_lock(&lk_lock);
  lk_potrf_blk[p->t](p->fns, kb, a11, ld, &info);
  if (info == 0 && below > 0) /* the linked trsm: an installed one may start threads of its own */
    lk_panel_blk[p->t](lk_builtin[p->t], below, kb, a11, a11 + kb * es, ld);
  if (p->locked) pthread_mutex_unlock(&lk_lock);
  return info;
}

/* dst[0..n) -= src[0..n), n elements of type t */
static void lk_sub_row(int t, char *dst, const char *src, int64_t n) {
  if (t == 0 || t == 2) {
    float *d = (float *)dst;
    const float *s = (const float *)src;
    for (int64_t i = 0; i < n * (t == 2 ? 2 : 1); i++) d[i] -= s[i];
  } else {
    double *d = (double *)dst;
    const double *s = (const double *)src;
    for (int64_t i = 0; i < n * (t == 3 ? 2 : 1); i++) d[i] -= s[i];
  }
}

/* rows [i0, i1) of V22's upper triangle -= conj(W)^T W */
static void lk_pp_rows(const lk_pp *P, int64_t i0, int64_t i1, char *work) {
  int64_t es = P->es;
  int t = P->p->t;
  la_gemm g;
  memset(&g, 0, sizeof g);
  g.k = P->kb;
  g.a = P->w + i0 * es, g.sai = 1, g.sap = P->ld, g.conja = true;
  g.sbp = P->ld, g.sbj = 1;
  if (i1 < P->r) { /* right of the diagonal block */
    g.m = i1 - i0, g.n = P->r - i1;
    g.b = P->w + i1 * es;
    g.c = P->v22 + (i0 * P->ld + i1) * es, g.ldc = P->ld;
    g.mode = LA_SUB;
    P->la->gemm[t](&g, work);
  }
  char *tmp = (char *)(((uintptr_t)work + LA_TLS_BYTES + 63) & ~(uintptr_t)63);
  g.m = g.n = i1 - i0;
  g.b = P->w + i0 * es;
  g.c = tmp, g.ldc = LK_PP_RB;
  g.mode = LA_SET;
  P->la->gemm[t](&g, work);
  for (int64_t i = 0; i < i1 - i0; i++)
    lk_sub_row(t, P->v22 + ((i0 + i) * P->ld + i0 + i) * es, tmp + (i * LK_PP_RB + i) * es,
               i1 - i0 - i);
}

/* task 0: the next block column (V22's first kb2 rows) updated and factored; task t > 0: the
 * t-th row block after it */
static void lk_pp_task(void *vp, int64_t t, char *work) {
  lk_pp *P = vp;
  if (t > 0) {
    int64_t i0 = P->kb2 + (t - 1) * LK_PP_RB;
    lk_pp_rows(P, i0, i0 + LK_PP_RB < P->r ? i0 + LK_PP_RB : P->r, work);
    return;
  }
  for (int64_t i0 = 0; i0 < P->kb2; i0 += LK_PP_RB)
    lk_pp_rows(P, i0, i0 + LK_PP_RB < P->kb2 ? i0 + LK_PP_RB : P->kb2, work);
  P->info = lk_pp_factor(P->p, P->v22, (int)P->kb2, (int)(P->r - P->kb2), (int)P->ld, P->es);
}

static void lk_pp_body(void *vp, int64_t b, int64_t e) {
  cj_tls_tasks(((const lk_pp *)vp)->ctx, b, e, lk_pp_task, vp);
}

/* Factors the n x n column-major matrix a in place; *info as LAPACK's potrf. */
static void lk_pp_potrf(const lk_exec *X, char *a, int32_t *info) {
  const lk_params *p = X->p;
  int n = p->n, nb = p->pp_nb, kb = nb < n ? nb : n;
  lk_pp P = {p, cj_la_pick(), X->ctx, p->arg[0].es, n, NULL, NULL, 0, 0, 0, 0};
  *info = lk_pp_factor(p, a, kb, n - kb, n, P.es);
  for (int k0 = 0, k1 = kb; *info == 0 && k1 < n; k0 = k1, k1 += kb) {
    P.kb = kb, P.r = n - k1, P.kb2 = nb < P.r ? nb : P.r, P.info = 0;
    P.w = a + ((int64_t)k0 * n + k1) * P.es;
    P.v22 = a + ((int64_t)k1 * n + k1) * P.es;
    cj_pool_parallel_for(X->ctx->pool, 1 + (P.r - P.kb2 + LK_PP_RB - 1) / LK_PP_RB, 1, lk_pp_body, &P);
    if (P.info != 0) *info = P.info > 0 ? k1 + P.info : P.info;
    kb = (int)P.kb2;
  }
}

/* LAPACK on one batch element: a[i] its operands and results, ws the workspace */
static void lk_call(const lk_exec *X, char *const *a, char *ws) {
  const lk_params *p = X->p;
  if (p->pp_nb > 0 && X->ctx->pool && cj_pool_size(X->ctx->pool) > 1) {
    lk_pp_potrf(X, a[0], (int32_t *)a[2]);
    return;
  }
  if (p->locked) pthread_mutex_lock(&lk_lock);
  lk_run[p->t](p, a, ws);
  if (p->locked) pthread_mutex_unlock(&lk_lock);
}

static void lk_body(void *vx, int64_t b, int64_t e) {
  const lk_exec *X = vx;
  const lk_params *p = X->p;
  cj_tls_area *area = cj_tls_claim(X->ctx);
  if (!area) return; /* cannot happen: the lowering asked for an area */
  char *base = (char *)(((uintptr_t)area->mem + 63) & ~(uintptr_t)63);
  char *a[LK_MAXARGS];
  int nall = p->nin + p->nout;
  for (int i = 0; i < nall; i++) a[i] = base + p->arg[i].off;
  for (int64_t i = b; i < e; i++) {
    for (int j = 0; j < p->nin; j++) {
      const char *in = X->in[j] + i * p->arg[j].slice;
      if (p->arg[j].in_place)
        a[j] = (char *)in;
      else
        lk_copy_in(p, &p->arg[j], a[j], in);
    }
    /* results LAPACK only partly writes (u / vt of a reduced SVD, ...) start as zeros */
    for (int j = 0; j < p->nout; j++)
      if (p->arg[p->nin + j].alias < 0) memset(a[p->nin + j], 0, (size_t)p->arg[p->nin + j].slice);
    lk_call(X, a, base + p->ws_off);
    for (int j = 0; j < p->nout; j++) {
      const lk_arg *g = &p->arg[p->nin + j];
      lk_copy_out(p, g, X->out[j] + i * g->slice, a[p->nin + j]);
    }
  }
  cj_tls_release(X->ctx, area);
}

/* trsm (p->direct): the right-hand sides are copied to the result (unless the planner gave
 * both one buffer) and solved there, with no copy into the per-thread area and no transposes
 * (lk_trsm_direct). */
static void lk_body_direct(void *vx, int64_t b, int64_t e) {
  const lk_exec *X = vx;
  const lk_params *p = X->p;
  const lk_arg *g = &p->arg[1];
  for (int64_t i = b; i < e; i++) {
    char *x = X->out[0] + i * g->slice;
    const char *in = X->in[1] + i * g->slice;
    if (x != in) memcpy(x, in, (size_t)g->slice);
    if (p->locked) pthread_mutex_lock(&lk_lock);
    lk_trsm_direct[p->t](p, g->cm, X->in[0] + i * p->arg[0].slice, x);
    if (p->locked) pthread_mutex_unlock(&lk_lock);
  }
}

static CJ_MUST_USE cj_status k_lapack(cj_exec_ctx *ctx, const cj_step *st) {
  const lk_params *p = st->params;
  lk_exec X = {.p = p, .ctx = ctx};
  for (int j = 0; j < p->nin; j++) X.in[j] = CJ_PTR(ctx, st->in[j]);
  for (int j = 0; j < p->nout; j++) X.out[j] = CJ_PTR(ctx, st->out[j]);
  void (*body)(void *, int64_t, int64_t) = p->direct ? lk_body_direct : lk_body;
  if (p->parallel && p->batch > 1 && ctx->pool && cj_pool_size(ctx->pool) > 1)
    cj_pool_parallel_for(ctx->pool, p->batch, p->grain, body, &X);
  else
    body(&X, 0, p->batch);
  return NULL;
}

/* ======================================================================== trsm for k_linalg.c */

static void lk_trsm_rm_any(const lk_table *tab, int t, bool left, bool lower, char trans,
                           bool unit, int m, const void *M, void *X, int rows, int cols) {
  switch (t) {
    case 0: lk_trsm_rm_s(&tab->s, left, lower, trans, unit, m, M, X, rows, cols); return;
    case 1: lk_trsm_rm_d(&tab->d, left, lower, trans, unit, m, M, X, rows, cols); return;
    case 2: lk_trsm_rm_c(&tab->c, left, lower, trans, unit, m, M, X, rows, cols); return;
    default: lk_trsm_rm_z(&tab->z, left, lower, trans, unit, m, M, X, rows, cols); return;
  }
}

/* whether type t's trsm in use is the linked one */
static bool lk_trsm_builtin(int t) { return lk_is_builtin(t, lk_tab_part[t], 0); }

bool cj_lapack_has_trsm(int64_t m, int64_t rows, int64_t cols) {
  return m <= INT32_MAX && rows <= INT32_MAX && cols <= INT32_MAX;
}

/* the linked reference BLAS is safe to call at once from several threads (the serial OpenBLAS is
 * not); an installed one is called as jaxlib calls it, one batch element after another */
bool cj_lapack_concurrent(void) {
  const lk_table *tab = lk_current();
  bool all = tab != NULL;
  for (int t = 0; all && t < 4; t++) all = lk_trsm_builtin(t);
  return all && !lk_serial;
}

void cj_lapack_trsm(int t, bool left, bool lower, char trans, bool unit, int64_t m, const void *M,
                    void *X, int64_t rows, int64_t cols) {
  const lk_table *tab = lk_current();
  if (!tab) return; /* cannot happen: cj_lapack_has_trsm said yes */
  bool locked = lk_serial && lk_trsm_builtin(t);
  if (locked) pthread_mutex_lock(&lk_lock);
  lk_trsm_rm_any(tab, t, left, lower, trans, unit, (int)m, M, X, (int)rows, (int)cols);
  if (locked) pthread_mutex_unlock(&lk_lock);
}

/* ======================================================================== lowering */

/* The value of `name` in the call's attribute dictionary (mhlo.backend_config, or a dictionary
 * backend_config), or NULL. */
static const cj_attr *lk_config(const cj_op *op, const char *name) {
  const cj_attr *d = cj_op_attr(op, "mhlo.backend_config");
  if (!d || d->kind != CJ_ATTR_DICT) d = cj_op_attr(op, "backend_config");
  if (!d || d->kind != CJ_ATTR_DICT) return NULL;
  for (int32_t i = 0; i < d->dict.n; i++)
    if (strcmp(d->dict.items[i].name, name) == 0) return d->dict.items[i].value;
  return NULL;
}

/* A character attribute (jaxlib's enums are ui8 character codes) among `allowed`. */
static CJ_MUST_USE cj_status lk_char(const cj_op *op, const char *T, const char *name, const char *allowed,
                         char *out) {
  int64_t v;
  const cj_attr *a = lk_config(op, name);
  if (!a || !cj_attr_get_i64(a, &v))
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @%s needs the integer attribute %s in mhlo.backend_config", T,
                       name);
  if (v <= 0 || v > 127 || !strchr(allowed, (int)v))
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @%s: attribute %s = %lld is not one of '%s' (character codes)",
                       T, name, (long long)v, allowed);
  *out = (char)v;
  return NULL;
}

static CJ_MUST_USE cj_status lk_int(const cj_op *op, const char *T, const char *name, int *out) {
  int64_t v;
  const cj_attr *a = lk_config(op, name);
  if (!a || !cj_attr_get_i64(a, &v) || v < INT32_MIN || v > INT32_MAX)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @%s needs the int32 attribute %s in mhlo.backend_config", T,
                       name);
  *out = (int)v;
  return NULL;
}

/* Whether the layout (minor_to_major) `mtm` of a rank-r value with `core` trailing dims keeps the
 * batch dims major (in order); *col_major: the two trailing dims are column-major. */
static bool lk_layout(const int64_t *mtm, int64_t nl, int32_t r, int core, bool *col_major) {
  *col_major = false;
  if (nl != r) return false;
  for (int32_t k = core; k < r; k++)
    if (mtm[k] != r - 1 - k) return false;
  if (core == 2) {
    if (mtm[0] == r - 2 && mtm[1] == r - 1)
      *col_major = true;
    else if (!(mtm[0] == r - 1 && mtm[1] == r - 2))
      return false;
  } else if (core == 1 && mtm[0] != r - 1) {
    return false;
  }
  return true;
}

static int imax(int a, int b) { return a > b ? a : b; }

/* The checks and parameters particular to one LAPACK routine (p->m, n, lda are operand 0's);
 * sets *out_flops to the routine's cost per batch element. */
static CJ_MUST_USE cj_status lk_check_kind(cj_op *op, const char *T, const lk_spec *sp, int kind,
                               lk_params *p, double *out_flops) {
  const lk_arg *x = &p->arg[0];
  const lk_arg *res = &p->arg[sp->nin];
  int mn = p->m < p->n ? p->m : p->n;
  double flops = 0, M = p->m, N = p->n, K;
#define NEED(cond, ...) \
  if (!(cond)) return cj_op_error(op, CJ_INVALID_ARGUMENT, __VA_ARGS__)
  switch (kind) {
    case LK_TRSM: {
      const lk_arg *y = &p->arg[1];
      CJ_RETURN_IF_ERROR(lk_char(op, T, "side", "LR", &p->side));
      CJ_RETURN_IF_ERROR(lk_char(op, T, "uplo", "LU", &p->uplo));
      CJ_RETURN_IF_ERROR(lk_char(op, T, "trans_x", "NTC", &p->job0));
      CJ_RETURN_IF_ERROR(lk_char(op, T, "diag", "NU", &p->diag));
      p->m = (int)y->rows;
      p->n = (int)y->cols;
      p->lda = imax(1, p->m);
      int64_t na = p->side == 'L' ? y->rows : y->cols;
      NEED(x->rows == na && x->cols == na,
           "custom_call @%s: operand 0 must be %lld x %lld (side %c), got %lld x %lld", T,
           (long long)na, (long long)na, p->side, (long long)x->rows, (long long)x->cols);
      p->ldu = imax(1, (int)na);
      flops = (double)y->rows * (double)y->cols * (double)na;
      break;
    }
    case LK_GETRF:
      NEED(res[1].rows == mn, "custom_call @%s: result 1 (pivots) must have min(m, n) = %d elements", T, mn);
      flops = M * N * mn;
      break;
    case LK_GEQRF:
      NEED(res[1].rows == mn, "custom_call @%s: result 1 (taus) must have min(m, n) = %d elements", T, mn);
      flops = 2 * M * N * mn;
      break;
    case LK_GEQP3:
      NEED(p->arg[1].rows == p->n, "custom_call @%s: operand 1 (jpvt) must have n = %d elements", T, p->n);
      NEED(res[2].rows == mn, "custom_call @%s: result 2 (taus) must have min(m, n) = %d elements", T, mn);
      flops = 4 * M * N * mn;
      break;
    case LK_ORGQR:
      p->k = (int)p->arg[1].rows;
      NEED(p->m >= p->n && p->n >= p->k,
           "custom_call @%s: needs m >= n >= k, got m = %d, n = %d, k = %d", T, p->m, p->n, p->k);
      K = p->k;
      flops = 4 * M * N * K;
      break;
    case LK_POTRF:
      NEED(p->m == p->n, "custom_call @%s: operand 0 must be square", T);
      CJ_RETURN_IF_ERROR(lk_char(op, T, "uplo", "LU", &p->uplo));
      flops = N * N * N / 3;
      break;
    case LK_GESDD:
    case LK_GESVD: {
      CJ_RETURN_IF_ERROR(lk_char(op, T, "mode", kind == LK_GESDD ? "ASN" : "ASN", &p->job0));
      NEED(res[1].rows == mn, "custom_call @%s: result 1 (singular values) must have min(m, n) = %d elements", T, mn);
      int64_t ur = p->job0 == 'N' ? res[2].rows : p->m, uc = p->job0 == 'A' ? p->m : mn;
      int64_t vr = p->job0 == 'A' ? p->n : mn, vc = p->n;
      if (p->job0 != 'N') {
        NEED(res[2].rows == ur && res[2].cols == uc,
             "custom_call @%s: result 2 (u) must be %lld x %lld for mode %c", T, (long long)ur,
             (long long)uc, p->job0);
        NEED(res[3].rows == vr && res[3].cols == vc,
             "custom_call @%s: result 3 (vt) must be %lld x %lld for mode %c", T, (long long)vr,
             (long long)vc, p->job0);
      }
      p->ldu = imax(1, p->m);
      p->ldvt = imax(1, (int)res[3].rows);
      flops = 10 * M * N * mn;
      break;
    }
    case LK_SYEVD:
      NEED(p->m == p->n, "custom_call @%s: operand 0 must be square", T);
      NEED(res[1].rows == p->n, "custom_call @%s: result 1 (eigenvalues) must have n = %d elements", T, p->n);
      CJ_RETURN_IF_ERROR(lk_char(op, T, "uplo", "LU", &p->uplo));
      CJ_RETURN_IF_ERROR(lk_char(op, T, "mode", "NV", &p->job0));
      flops = 9 * N * N * N;
      break;
    case LK_GEHRD:
      NEED(p->m == p->n, "custom_call @%s: operand 0 must be square", T);
      CJ_RETURN_IF_ERROR(lk_int(op, T, "low", &p->ilo));
      CJ_RETURN_IF_ERROR(lk_int(op, T, "high", &p->ihi));
      NEED(p->n == 0 || (1 <= p->ilo && p->ilo <= p->ihi && p->ihi <= p->n) ||
               (p->ilo == 1 && p->ihi == 0),
           "custom_call @%s: needs 1 <= low <= high <= n, got low %d, high %d, n %d", T, p->ilo,
           p->ihi, p->n);
      NEED(res[1].rows == imax(p->n - 1, 0), "custom_call @%s: result 1 (taus) must have n - 1 elements", T);
      flops = 10 * N * N * N / 3;
      break;
    case LK_SYTRD:
      NEED(p->m == p->n, "custom_call @%s: operand 0 must be square", T);
      CJ_RETURN_IF_ERROR(lk_char(op, T, "uplo", "LU", &p->uplo));
      NEED(res[1].rows == p->n && res[2].rows == imax(p->n - 1, 0) && res[3].rows == imax(p->n - 1, 0),
           "custom_call @%s: results 1-3 must have n, n - 1 and n - 1 elements", T);
      flops = 4 * N * N * N / 3;
      break;
    case LK_GEEV:
    case LK_GEEV_C:
      NEED(p->m == p->n, "custom_call @%s: operand 0 must be square", T);
      CJ_RETURN_IF_ERROR(lk_char(op, T, "compute_left", "NV", &p->job0));
      CJ_RETURN_IF_ERROR(lk_char(op, T, "compute_right", "NV", &p->job1));
      for (int j = 0; j < sp->nout - 1; j++)
        NEED(res[j].rows == p->n && (res[j].core < 2 || res[j].cols == p->n),
             "custom_call @%s: result %d must have n = %d rows (and columns)", T, j, p->n);
      flops = 10 * N * N * N;
      break;
    case LK_GEES:
    case LK_GEES_C:
      NEED(p->m == p->n, "custom_call @%s: operand 0 must be square", T);
      CJ_RETURN_IF_ERROR(lk_char(op, T, "mode", "NV", &p->job0));
      CJ_RETURN_IF_ERROR(lk_char(op, T, "sort", "NS", &p->job1));
      if (p->job1 != 'N')
        return cj_op_error(op, CJ_UNIMPLEMENTED,
                           "custom_call @%s: sorting the eigenvalues (sort = 'S') is not "
                           "implemented (nor is it by jaxlib)", T);
      for (int j = 1; j < sp->nout - 2; j++)
        NEED(res[j].rows == p->n && (res[j].core < 2 || res[j].cols == p->n),
             "custom_call @%s: result %d must have n = %d rows (and columns)", T, j, p->n);
      flops = 10 * N * N * N;
      break;
    case LK_GTSV: {
      const lk_arg *b = &p->arg[3];
      p->n = (int)b->rows;
      p->k = (int)b->cols;
      p->lda = imax(1, p->n);
      for (int i = 0; i < 3; i++)
        NEED(p->arg[i].rows == b->rows,
             "custom_call @%s: operand %d must have as many elements as operand 3 has rows", T, i);
      flops = 8 * (double)b->rows * (double)b->cols;
      break;
    }
    default:
      break;
  }
#undef NEED
  *out_flops = flops;
  return NULL;
}

/* How trsm runs (lk_params.direct, the triangular matrix's in_place). In the result buffer when
 * the call sees all its matrices in one layout (potrf could factor the other triangle in place
 * likewise, but OpenBLAS's upper potrf is 1.7x slower than its lower one at n = 64..128, more
 * than the two transposes cost). A column-major call is then the solve on the other side: the
 * same BLAS trsm on the transposed problem, as accurate, but rounded in another order than
 * jaxlib's solve on column-major copies (so not XLA:CPU's bits), and 1.5x faster than those
 * copies at 128 x 128 (measured with both Debian's and SciPy's OpenBLAS): speed wins, the
 * factorizations stay bit for bit XLA's. Not direct, the triangular matrix is read where
 * it is, and when the call sees it column-major our row-major buffer holds its transpose, solved
 * with the other triangle and the transposed op (with OpenBLAS bit for bit the solve on the
 * matrix itself: the triangle is packed alike). A conjugate transpose of a complex matrix cannot
 * be turned so: that one is copied. */
static void lk_plan_trsm(lk_params *p, int t) {
  lk_arg *a = &p->arg[0];
  p->direct = a->cm == p->arg[1].cm && p->arg[2].cm == p->arg[1].cm;
  if (p->direct || (a->transpose && p->job0 == 'C' && t >= 2)) return;
  a->in_place = true;
  if (a->transpose) {
    a->transpose = false;
    p->uplo = p->uplo == 'L' ? 'U' : 'L';
    p->job0 = p->job0 == 'N' ? 'T' : 'N';
  }
}

/* The routine (its place in LK_FN_LIST) each kind calls. */
static const int lk_kind_fn[LK_COUNT] = {
    [LK_TRSM] = 0,  [LK_GETRF] = 1, [LK_GEQRF] = 2, [LK_GEQP3] = 3,  [LK_ORGQR] = 4,
    [LK_POTRF] = 5, [LK_GESDD] = 6, [LK_GESVD] = 7, [LK_SYEVD] = 8,  [LK_GEHRD] = 9,
    [LK_SYTRD] = 10, [LK_GEEV] = 11, [LK_GEEV_C] = 11, [LK_GEES] = 12, [LK_GEES_C] = 12,
    [LK_GTSV] = 13,
};

/* How the batch runs (lk_params.locked, parallel, grain), from the routine this call uses (its
 * entry in `fns`, type t's): the serial OpenBLAS's holds the one lock, so its batch elements run
 * one after another; the reference LAPACK's run in parallel on the client's pool; an installed
 * routine's (SciPy's OpenBLAS) run one after another without the lock, as jaxlib runs them
 * (splitting batches of small matrices over our pool was measured: with both cores, the linalg
 * rows of bench/models.py got slower, cholesky 1.03-1.05 -> 1.11-1.31 of XLA:CPU's time, our
 * workers competing with the threads SciPy's OpenBLAS keeps for the larger matrices). A chunk
 * holds about 200k flops, counting each call's fixed cost as 20k. One exception: a potrf of
 * order above LK_PAR_ORDER runs the linked serial OpenBLAS's even where another is installed:
 * SciPy's takes 150 us at order 256 against 120 us on one core (and with two cores its threads
 * of its own made the cholesky row 1.45x XLA:CPU's time), while at order 16 both take 3 us and
 * SciPy's gives XLA:CPU's bits. */
enum { LK_PAR_ORDER = 64 };
static void lk_plan_threads(lk_params *p, void *fns, int t, int kind, double flops) {
  int fi = lk_kind_fn[kind];
  bool builtin = lk_is_builtin(t, fns, fi);
  int order = imax(imax(p->m, p->n), imax((int)p->arg[0].rows, (int)p->arg[0].cols));
  if (kind == LK_POTRF && !builtin && lk_serial && order > LK_PAR_ORDER) {
    memcpy((char *)fns + lk_offsets[t][fi], (const char *)lk_builtin[t] + lk_offsets[t][fi],
           sizeof(lk_fnptr));
    builtin = true;
  }
  p->locked = lk_serial && builtin;
  p->parallel = builtin && !lk_serial;
  p->grain = (int64_t)(200000.0 / (flops + 20000.0)) + 1;
}

cj_status cj_lower_cc_lapack(cj_lw *L, cj_op *op, const char *target, size_t len) {
  int t = 0, kind = lk_parse(target, len, &t);
  if (kind < 0)
    return cj_op_error(op, CJ_UNIMPLEMENTED,
                       "custom_call @%.*s is not supported by the CPU backend", (int)len, target);
  char T[64]; /* the target's name, for messages */
  snprintf(T, sizeof T, "%.*s", (int)(len < 60 ? len : 60), target);
  const lk_spec *sp = &lk_specs[kind];
  if ((int)op->nopnds != sp->nin || (int)op->nresults != sp->nout)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @%s takes %d operands and returns %d results, got %u and %u", T,
                       sp->nin, sp->nout, op->nopnds, op->nresults);
  static const cj_dtype tdt[4] = {CJ_F32, CJ_F64, CJ_C64, CJ_C128};
  static const cj_dtype rdt[4] = {CJ_F32, CJ_F64, CJ_F32, CJ_F64};
  lk_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  memset(p, 0, sizeof *p); /* (the lowering's arena does not clear) */
  p->kind = kind;
  p->t = t;
  p->transpose = cj_la_pick()->transpose;
  p->nin = sp->nin;
  p->nout = sp->nout;
  int nall = sp->nin + sp->nout;
  cj_lw_tensor ts[LK_MAXARGS];
  const cj_attr *ol = cj_op_attr(op, "operand_layouts"), *rl = cj_op_attr(op, "result_layouts");
  int32_t brank = -1;
  const int64_t *bdims = NULL;
  for (int i = 0; i < nall; i++) {
    bool is_in = i < sp->nin;
    int idx = is_in ? i : i - sp->nin;
    cj_lw_tensor *x = &ts[i];
    CJ_RETURN_IF_ERROR(is_in ? cj_lw_operand(L, op, (uint32_t)idx, x)
                             : cj_lw_result(L, op, (uint32_t)idx, x));
    const char *what = is_in ? "operand" : "result";
    char code = sp->types[i];
    static const cj_dtype cdt[4] = {CJ_C64, CJ_C128, CJ_C64, CJ_C128};
    cj_dtype want = code == 'T' ? tdt[t] : code == 'R' ? rdt[t] : code == 'C' ? cdt[t] : CJ_S32;
    if (x->dtype != want)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "custom_call @%s: %s %d must have element type %s, got %s",
                         T, what, idx, cj_dtype_get(want)->id, cj_dtype_get(x->dtype)->id);
    lk_arg *g = &p->arg[i];
    g->core = sp->cores[i] - '0';
    if (x->rank < g->core)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "custom_call @%s: %s %d must have rank >= %d", T,
                         what, idx, g->core);
    int32_t br = x->rank - g->core;
    if (brank < 0) {
      brank = br;
      bdims = x->dims;
    } else {
      bool same = br == brank;
      for (int32_t k = 0; same && k < br; k++) same = x->dims[k] == bdims[k];
      if (!same)
        return cj_op_error(op, CJ_INVALID_ARGUMENT,
                           "custom_call @%s: %s %d does not have operand 0's batch dimensions", T,
                           what, idx);
    }
    g->rows = g->core >= 1 ? x->dims[br] : 1;
    g->cols = g->core == 2 ? x->dims[br + 1] : 1;
    g->es = cj_dtype_bytes(x->dtype);
    g->slice = g->rows * g->cols * g->es;
    g->alias = -1;
    if (!is_in && sp->alias[idx] != '-') g->alias = sp->alias[idx] - '0';
    const cj_attr *lays = is_in ? ol : rl;
    if (lays && lays->kind == CJ_ATTR_ARRAY && idx < lays->arr.n) {
      int64_t mtm[CJ_MAX_RANK], nl = 0;
      bool cm = false;
      if (!cj_attr_get_i64s(lays->arr.items[idx], mtm, CJ_MAX_RANK, &nl) ||
          !lk_layout(mtm, nl, x->rank, g->core, &cm))
        return cj_op_error(op, CJ_UNIMPLEMENTED,
                           "custom_call @%s: the layout of %s %d is not supported (batch "
                           "dimensions must be major, in order)", T, what, idx);
      g->cm = cm;
      g->transpose = cm && g->rows > 1 && g->cols > 1;
    }
  }
  p->batch = 1;
  for (int32_t k = 0; k < brank; k++) p->batch *= bdims[k];
  /* aliased results must have their operand's shape */
  for (int j = 0; j < sp->nout; j++) {
    lk_arg *g = &p->arg[sp->nin + j];
    if (g->alias < 0) continue;
    const lk_arg *o = &p->arg[g->alias];
    if (g->rows != o->rows || g->cols != o->cols)
      return cj_op_error(op, CJ_INVALID_ARGUMENT,
                         "custom_call @%s: result %d must have operand %d's shape", T, j, g->alias);
  }
  for (int i = 0; i < nall; i++)
    if (p->arg[i].rows > INT32_MAX / 2 || p->arg[i].cols > INT32_MAX / 2)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "custom_call @%s: dimensions beyond LAPACK's int", T);
  const lk_arg *x = &p->arg[0];
  p->m = (int)x->rows;
  p->n = (int)x->cols;
  p->lda = imax(1, p->m);
  double flops = 0;
  CJ_RETURN_IF_ERROR(lk_check_kind(op, T, sp, kind, p, &flops));
  if (p->batch == 0) return NULL;
  void *fns = lk_copy_fns(L, t);
  if (!fns) return cj_oom();
  lk_plan_threads(p, fns, t, kind, flops);
  p->fns = fns;
  if (kind == LK_TRSM) lk_plan_trsm(p, t);
  if (!lk_query[t](p))
    return cj_op_error(op, CJ_INTERNAL, "custom_call @%s: LAPACK's workspace query failed", T);
  /* lk_pp_potrf's block (not where the batch elements already share the pool) */
  if (kind == LK_POTRF && p->uplo == 'L' && p->n >= LK_PP_ORDER && !(p->parallel && p->batch > 1)) {
    p->pp_nb = t >= 2 ? 48 : 64;
    cj_lw_set_tls_bytes(L, LK_PP_TLS_BYTES);
  }
  /* the per-thread area: every slice (aliased results share their operand's), then the
   * workspace */
  int64_t off = 0;
  for (int i = 0; i < nall; i++) {
    lk_arg *g = &p->arg[i];
    if (i >= sp->nin && g->alias >= 0) {
      g->off = p->arg[g->alias].off;
      continue;
    }
    if (g->in_place) continue;
    g->off = off;
    off += (g->slice + 63) / 64 * 64;
  }
  p->ws_off = off;
  int64_t rs = t == 0 || t == 2 ? 4 : 8;
  off += ((int64_t)p->lwork + p->lxwork) * p->arg[0].es + (int64_t)p->lrwork * rs +
         (int64_t)p->liwork * 4;
  p->area_bytes = off + 64;
  if (!p->direct) cj_lw_set_tls_bytes(L, p->area_bytes);
  double cf = t >= 2 ? 4 : 1;
  cj_lw_add_cost(L, flops * cf * (double)p->batch, 0);
  int32_t ins[LK_MAXARGS], outs[LK_MAXARGS];
  for (int i = 0; i < sp->nin; i++) ins[i] = ts[i].buf;
  for (int j = 0; j < sp->nout; j++) outs[j] = ts[sp->nin + j].buf;
  /* a result may take over the operand it overwrites (as jaxlib's aliases) when no other
   * operand is that buffer: each batch element's operands are read before its results are
   * written */
  for (int j = 0; j < sp->nout; j++) {
    int al = p->arg[sp->nin + j].alias;
    bool alone = al >= 0;
    for (int i = 0; alone && i < sp->nin; i++) alone = i == al || ins[i] != ins[al];
    if (alone) cj_lw_hint_inplace(L, outs[j], ins[al]);
  }
  if (!cj_lw_emit(L, op, k_lapack, p, (uint32_t)sp->nin, ins, (uint32_t)sp->nout, outs))
    return cj_oom();
  return NULL;
}

#else /* no LAPACK */

const char *cjrt_lapack_routine_name(int i) {
  (void)i;
  return NULL; /* no routine to replace */
}

int cjrt_lapack_set_routine(const char *name, void *fn) {
  (void)name;
  (void)fn;
  return -1;
}

void *cjrt_lapack_routine(const char *name) {
  (void)name;
  return NULL;
}

bool cj_lapack_has_trsm(int64_t m, int64_t rows, int64_t cols) {
  (void)m;
  (void)rows;
  (void)cols;
  return false;
}

bool cj_lapack_concurrent(void) { return true; }

void cj_lapack_trsm(int t, bool left, bool lower, char trans, bool unit, int64_t m, const void *M,
                    void *X, int64_t rows, int64_t cols) {
  (void)t, (void)left, (void)lower, (void)trans, (void)unit, (void)m, (void)M, (void)X;
  (void)rows, (void)cols;
}

cj_status cj_lower_cc_lapack(cj_lw *L, cj_op *op, const char *target, size_t len) {
  (void)L;
  int t = 0;
  if (lk_parse(target, len, &t) < 0)
    return cj_op_error(op, CJ_UNIMPLEMENTED,
                       "custom_call @%.*s is not supported by the CPU backend", (int)len, target);
  return cj_op_error(op, CJ_UNIMPLEMENTED,
                     "custom_call @%.*s needs LAPACK, which this build of cjrt does not have",
                     (int)len, target);
}

#endif /* CJRT_HAVE_LAPACK */
