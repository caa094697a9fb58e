/* cjrt: cholesky and triangular_solve (and the ISA pick of the linear algebra kernels).
 *
 * One step per op over every batch element. Each element is copied (or converted, for f16,
 * bf16 and the other small floats, which compute in f32) into a working matrix of the compute
 * type, solved there by the blocked routines of k_linalg_kern.c, and stored back:
 *
 *   cholesky  works in the result itself when the types agree. As XLA does, only the `lower`
 *             (or upper) triangle of `a` is read; upper is factored as the transpose of a lower
 *             factorization (a^T, no conjugate), so a = U^H U; the other triangle of the result
 *             is zero; and a matrix whose factorization meets a NaN pivot square root (not
 *             positive definite, or NaN input) comes out all NaN ((NaN, 0) when complex), the
 *             other batch elements being unaffected.
 *   triangular_solve  copies b into the result and solves in place: op(a) x = b (left_side)
 *             or x op(a) = b, with BLAS's ?trsm where the build has LAPACK (k_lapack.c; it
 *             reads a where it is, row-major a being column-major a^T), else with the blocked
 *             substitution of k_linalg_kern.c on op(a) built explicitly (a transpose and, for
 *             ADJOINT, a conjugate of the referenced triangle) in a planned scratch buffer.
 *             unit_diagonal never reads the diagonal. Through the linked BLAS the op gives
 *             the values of the lapack_?trsm_ffi call JAX emits for the same solve, bit for
 *             bit (with an installed trsm, k_lapack.h, that call solves as jaxlib does) (the
 *             accuracy of both routes is alike: on the LU factors of random 300 x 300 f32
 *             matrices, 3.7e-6 (BLAS) and 5.2e-6 (blocked) of the solution's largest element).
 *
 * Batch elements run in parallel on the client's pool when there are several; a single large
 * matrix splits its GEMM updates and independent right-hand sides over the pool instead.
 */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "cpu/k_lapack.h"
#include "cpu/k_linalg.h"
#include "cpu/lower.h"

/* ======================================================================== the ISA pick */

const la_table *cj_la_pick(void) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("fma"))
    return &cj_la_table_avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &cj_la_table_avx2;
#endif
  return &cj_la_table_generic;
}

/* ======================================================================== helpers */

/* The compute type of a storage type (-1 if none): small floats compute in f32. */
static int la_compute_type(cj_dtype dt) {
  switch (dt) {
    case CJ_F32: return LA_F32;
    case CJ_F64: return LA_F64;
    case CJ_C64: return LA_C64;
    case CJ_C128: return LA_C128;
    default: return cj_dtype_is_float(dt) ? LA_F32 : -1;
  }
}

static cj_dtype la_storage_of(int ct) {
  static const cj_dtype s[LA_NTYPES] = {CJ_F32, CJ_F64, CJ_C64, CJ_C128};
  return s[ct];
}

/* In-place transpose of an n x n matrix of element size es (conjugating complex elements when
 * conj). */
static void transpose_sq(void *m, int64_t n, int ct, bool conj) {
  size_t es = (size_t)la_elem_bytes(ct);
  char *p = m;
  char tmp[16];
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = i + 1; j < n; j++) {
      char *x = p + (size_t)(i * n + j) * es, *y = p + (size_t)(j * n + i) * es;
      memcpy(tmp, x, es);
      memcpy(x, y, es);
      memcpy(y, tmp, es);
    }
  if (!conj) return;
  if (ct == LA_C64) {
    float *f = m;
    for (int64_t i = 0; i < n * n; i++) f[2 * i + 1] = -f[2 * i + 1];
  } else if (ct == LA_C128) {
    double *f = m;
    for (int64_t i = 0; i < n * n; i++) f[2 * i + 1] = -f[2 * i + 1];
  }
}

/* Zeroes the strictly upper (lower = true) or strictly lower triangle. */
static void zero_triangle(void *m, int64_t n, int ct, bool keep_lower) {
  size_t es = (size_t)la_elem_bytes(ct);
  char *p = m;
  for (int64_t i = 0; i < n; i++) {
    if (keep_lower) {
      if (i + 1 < n) memset(p + (size_t)(i * n + i + 1) * es, 0, (size_t)(n - i - 1) * es);
    } else {
      memset(p + (size_t)(i * n) * es, 0, (size_t)i * es);
    }
  }
}

static void fill_nan(void *m, int64_t n, int ct) {
  if (ct == LA_F32 || ct == LA_C64) {
    float *f = m;
    int64_t step = ct == LA_C64 ? 2 : 1;
    for (int64_t i = 0; i < n; i++) {
      f[i * step] = NAN;
      if (step == 2) f[i * 2 + 1] = 0;
    }
  } else {
    double *f = m;
    int64_t step = ct == LA_C128 ? 2 : 1;
    for (int64_t i = 0; i < n; i++) {
      f[i * step] = NAN;
      if (step == 2) f[i * 2 + 1] = 0;
    }
  }
}

/* ======================================================================== the kernel */

typedef struct la_params {
  const la_table *tab;
  int ct;        /* compute type */
  bool chol;     /* else triangular_solve */
  bool lower;    /* cholesky: which triangle; trsm: of a */
  bool left, unit, trans, conj;
  bool native;   /* storage = compute type */
  bool blas;     /* trsm: with BLAS (cj_lapack_trsm) */
  int64_t batch, m;          /* matrix order */
  int64_t rows, cols;        /* trsm: b / result per element */
  int64_t a_bytes, b_bytes;  /* storage bytes per element */
  int64_t ws_bytes;          /* scratch bytes per element */
  cj_ew_fn cvt_a, cvt_b, cvt_out;
  cj_ew_aux aux_a, aux_b, aux_out;
  bool par_batch;
  int64_t grain;
} la_params;

typedef struct la_run {
  const la_params *p;
  cj_exec_ctx *ctx;
  const char *a, *b;
  char *out, *ws;
  atomic_int failed;
} la_run;

static void run_one(la_run *R, int64_t e, const la_env *E) {
  const la_params *p = R->p;
  size_t es = (size_t)la_elem_bytes(p->ct);
  int64_t n = p->m;
  char *ws = R->ws + e * p->ws_bytes;
  char *out = R->out + e * (p->chol ? p->a_bytes : p->b_bytes);
  const char *a = R->a + e * p->a_bytes;
  if (p->chol) {
    char *w = p->native ? out : ws;
    if (p->native)
      memcpy(w, a, (size_t)(n * n) * es);
    else
      p->cvt_a(w, a, NULL, NULL, n * n, &p->aux_a);
    if (!p->lower) transpose_sq(w, n, p->ct, false);
    bool ok = p->tab->chol[p->ct](E, w, n);
    if (!p->lower) transpose_sq(w, n, p->ct, false);
    zero_triangle(w, n, p->ct, p->lower);
    if (!ok) fill_nan(w, n * n, p->ct);
    if (!p->native) p->cvt_out(out, w, NULL, NULL, n * n, &p->aux_out);
    return;
  }
  const char *b = R->b + e * p->b_bytes;
  int64_t nx = p->rows * p->cols;
  if (p->blas) {
    const char *M = a;
    char *X = out;
    if (p->native) {
      memcpy(X, b, (size_t)nx * es);
    } else {
      M = ws;
      X = ws + (size_t)(n * n) * es;
      p->cvt_a(ws, a, NULL, NULL, n * n, &p->aux_a);
      p->cvt_b(X, b, NULL, NULL, nx, &p->aux_b);
    }
    char trans = !p->trans ? 'N' : p->conj ? 'C' : 'T';
    cj_lapack_trsm(p->ct, p->left, p->lower, trans, p->unit, n, M, X, p->rows, p->cols);
    if (!p->native) p->cvt_out(out, X, NULL, NULL, nx, &p->aux_out);
    return;
  }
  char *M = ws;
  char *X = p->native ? out : ws + (size_t)(n * n) * es;
  if (p->native) {
    memcpy(M, a, (size_t)(n * n) * es);
    memcpy(X, b, (size_t)nx * es);
  } else {
    p->cvt_a(M, a, NULL, NULL, n * n, &p->aux_a);
    p->cvt_b(X, b, NULL, NULL, nx, &p->aux_b);
  }
  bool lower = p->lower;
  if (p->trans) {
    transpose_sq(M, n, p->ct, p->conj);
    lower = !lower;
  }
  p->tab->trsm[p->ct](E, p->left, lower, p->unit, M, n, X, p->rows, p->cols, p->cols);
  if (!p->native) p->cvt_out(out, X, NULL, NULL, nx, &p->aux_out);
}

static void batch_body(void *vr, int64_t b, int64_t e) {
  la_run *R = vr;
  cj_tls_area *area = cj_tls_claim(R->ctx);
  if (!area) {
    atomic_store(&R->failed, 1);
    return;
  }
  la_env E = {R->ctx, 1, area->mem};
  for (int64_t i = b; i < e; i++) run_one(R, i, &E);
  cj_tls_release(R->ctx, area);
}

static CJ_MUST_USE cj_status k_linalg(cj_exec_ctx *ctx, const cj_step *st) {
  const la_params *p = st->params;
  la_run R;
  R.p = p;
  R.ctx = ctx;
  R.a = CJ_PTR(ctx, st->in[0]);
  R.b = p->chol ? NULL : CJ_PTR(ctx, st->in[1]);
  R.out = CJ_PTR(ctx, st->out[0]);
  R.ws = CJ_PTR(ctx, st->out[1]);
  atomic_init(&R.failed, 0);
  int nthreads = ctx->pool ? cj_pool_size(ctx->pool) : 1;
  if (p->par_batch && nthreads > 1) {
    cj_pool_parallel_for(ctx->pool, p->batch, p->grain, batch_body, &R);
  } else {
    cj_tls_area *area = cj_tls_claim(ctx);
    if (!area) return cj_internal("%s: no per-thread work area", st->what);
    la_env E = {ctx, nthreads, area->mem};
    for (int64_t i = 0; i < p->batch; i++) run_one(&R, i, &E);
    cj_tls_release(ctx, area);
  }
  if (atomic_load(&R.failed)) return cj_internal("%s: no per-thread work area", st->what);
  return NULL;
}

/* ======================================================================== lowering */

/* Sets the conversions between the storage type and the compute type. */
static CJ_MUST_USE cj_status la_types(cj_op *op, la_params *p, cj_dtype dt) {
  int ct = la_compute_type(dt);
  if (ct < 0)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "element type %s is not supported",
                       cj_dtype_get(dt)->id);
  p->ct = ct;
  p->native = la_storage_of(ct) == dt;
  if (!p->native) {
    cj_dtype c = la_storage_of(ct);
    p->cvt_a = p->cvt_b = cj_cvt_lookup(dt, c);
    p->cvt_out = cj_cvt_lookup(c, dt);
    p->aux_a.src = p->aux_b.src = dt;
    p->aux_a.dt = p->aux_b.dt = c;
    p->aux_out.src = c;
    p->aux_out.dt = dt;
    if (!p->cvt_a || !p->cvt_out)
      return cj_op_error(op, CJ_UNIMPLEMENTED, "no conversion between %s and %s",
                         cj_dtype_get(dt)->id, cj_dtype_get(c)->id);
  }
  p->tab = cj_la_pick();
  return NULL;
}

static CJ_MUST_USE cj_status la_emit(cj_lw *L, cj_op *op, la_params *p, uint32_t nin, const int32_t *in,
                         int32_t out, double flops_per) {
  int nthreads = cj_lw_pool(L) ? cj_pool_size(cj_lw_pool(L)) : 1;
  /* BLAS calls that would only take turns on LAPACK's lock run one after another */
  p->par_batch = p->batch > 1 && (p->batch >= nthreads || p->m < 256) &&
                 !(p->blas && !cj_lapack_concurrent());
  double per = flops_per > 1 ? flops_per : 1;
  p->grain = (int64_t)(200000.0 / per) + 1;
  cj_lw_add_cost(L, flops_per * (double)p->batch, 0);
  cj_lw_set_tls_bytes(L, LA_TLS_BYTES);
  int32_t ws = cj_lw_new_buf(L, p->ws_bytes * p->batch, CJ_BK_ARENA);
  int32_t outs[2] = {out, ws};
  if (!cj_lw_emit(L, op, k_linalg, p, nin, in, 2, outs)) return cj_oom();
  return NULL;
}

cj_status cj_lower_cholesky(cj_lw *L, cj_op *op) {
  cj_lw_tensor a, r;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &a));
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &r));
  if (a.rank < 2 || a.dims[a.rank - 1] != a.dims[a.rank - 2] || r.dtype != a.dtype ||
      r.nelems != a.nelems)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "expected batched square matrices");
  la_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  CJ_RETURN_IF_ERROR(la_types(op, p, a.dtype));
  p->chol = true;
  p->blas = false;
  p->lower = false;
  cj_op_get_bool(op, "lower", &p->lower);
  p->m = a.dims[a.rank - 1];
  p->batch = p->m ? a.nelems / (p->m * p->m) : 0;
  p->a_bytes = p->m * p->m * cj_dtype_bytes(a.dtype);
  p->ws_bytes = p->native ? 0 : p->m * p->m * la_elem_bytes(p->ct);
  if (p->batch == 0 || p->m == 0) return NULL;
  double n = (double)p->m;
  return la_emit(L, op, p, 1, &a.buf, r.buf, n * n * n / 3.0 * (p->ct >= LA_C64 ? 4 : 1));
}

cj_status cj_lower_triangular_solve(cj_lw *L, cj_op *op) {
  cj_lw_tensor a, b, r;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &a));
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 1, &b));
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &r));
  la_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  bool left = false, lower = false, unit = false;
  int32_t tr = CJ_TRANSPOSE_NO_TRANSPOSE;
  if (!cj_op_get_bool(op, "left_side", &left) || !cj_op_get_bool(op, "lower", &lower) ||
      !cj_op_get_bool(op, "unit_diagonal", &unit) ||
      !cj_op_get_enum(op, "transpose_a", CJ_EK_TRANSPOSE, &tr))
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "left_side, lower, unit_diagonal and transpose_a are required");
  if (tr != CJ_TRANSPOSE_NO_TRANSPOSE && tr != CJ_TRANSPOSE_TRANSPOSE && tr != CJ_TRANSPOSE_ADJOINT)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "transpose_a must be NO_TRANSPOSE, TRANSPOSE or ADJOINT");
  int32_t rank = a.rank;
  if (rank < 2 || b.rank != rank || r.rank != rank || a.dims[rank - 1] != a.dims[rank - 2] ||
      a.dtype != b.dtype || r.dtype != b.dtype)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "a must be batched square matrices of b's type and rank");
  for (int32_t d = 0; d < rank; d++)
    if (b.dims[d] != r.dims[d] || (d < rank - 2 && a.dims[d] != b.dims[d]))
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "batch dimensions of a, b and the result differ");
  int64_t m = a.dims[rank - 1];
  if (b.dims[left ? rank - 2 : rank - 1] != m)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "b does not fit a on the %s side", left ? "left" : "right");
  CJ_RETURN_IF_ERROR(la_types(op, p, a.dtype));
  p->chol = false;
  p->left = left;
  p->lower = lower;
  p->unit = unit;
  p->trans = tr != CJ_TRANSPOSE_NO_TRANSPOSE;
  p->conj = tr == CJ_TRANSPOSE_ADJOINT && p->ct >= LA_C64;
  p->m = m;
  p->rows = b.dims[rank - 2];
  p->cols = b.dims[rank - 1];
  int64_t nx = p->rows * p->cols;
  p->batch = nx ? b.nelems / nx : 0;
  p->a_bytes = m * m * cj_dtype_bytes(a.dtype);
  p->b_bytes = nx * cj_dtype_bytes(b.dtype);
  int es = la_elem_bytes(p->ct);
  p->blas = cj_lapack_has_trsm(m, p->rows, p->cols);
  p->ws_bytes = p->blas && p->native ? 0 : m * m * es + (p->native ? 0 : nx * es);
  if (p->batch == 0 || nx == 0) return NULL;
  int32_t ins[2] = {a.buf, b.buf};
  return la_emit(L, op, p, 2, ins, r.buf,
                 (double)m * (double)m * (double)(left ? p->cols : p->rows) *
                     (p->ct >= LA_C64 ? 4 : 1));
}
