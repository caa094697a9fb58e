/* cjrt: the linear algebra custom calls JAX emits for a platform other than cpu/cuda/rocm,
 * which XLA expands itself on TPUs (k_linalg_house.h):
 *
 *   @Qr(a) -> (a_factored, taus)   LAPACK's geqrf: R in the upper triangle, the Householder
 *        vectors v_i below the diagonal (v_i[i] = 1 implicit), taus of length min(m, n), so that
 *        a = H_0 ... H_{k-1} R with H_i = I - tau_i v_i v_i^H. Batched over leading dimensions.
 *   @ProductOfElementaryHouseholderReflectors(a, taus) -> q   LAPACK's orgqr/ungqr: the first
 *        n columns of H_0 ... H_{k-1} (a is m x n with m >= n, taus k <= n).
 *   @Eigh(a) -> (v, w)   the Hermitian eigendecomposition a v = v diag(w): eigenvectors in the
 *        columns of v (a's type), eigenvalues w of the real type, ascending (sorted whatever the
 *        sort flag asks: any order is allowed without it). backend_config
 *        "lower,sort_eigenvalues,max_iter,tol" (JAX sends "1,1,100,1e-6"): only the `lower`
 *        (else upper) triangle of a is read, the diagonal's imaginary part ignored; max_iter
 *        bounds the Jacobi sweeps; tol is accepted and not used, since the sweeps run to the
 *        unit roundoff of f64 (a tolerance of 1e-6 would leave f64 results at f32 accuracy).
 *        A matrix with a NaN or infinity in the read triangle gives all-NaN results.
 *
 * Every element type computes in f64 (real) or complex f64, converted on the way in and out: f32
 * and complex f32 results are then as accurate as their rounding allows, better than LAPACK's
 * single-precision routines. QR is unblocked Householder (LAPACK's geqr2 / org2r, row-oriented
 * updates); the eigensolver is cyclic two-sided Jacobi (a complex pair is first made real by a
 * diagonal unitary scaling, then rotated), which is accurate and simple but costs about 10 n^3
 * flops per sweep: fine for the small and medium matrices JAX programs decompose, slow for
 * n in the thousands.
 *
 * Batch elements run in parallel on the client's pool; each has its own slice of a planned
 * workspace buffer, so the kernels never allocate.
 */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/k_linalg_house.h"

/* ======================================================================== the routines */

#define HT double
#define HS(name) name##_r
#define HCPLX 0
#include "cpu/k_linalg_house_t.h"
#undef HT
#undef HS
#undef HCPLX

#define HT double _Complex
#define HS(name) name##_c
#define HCPLX 1
#include "cpu/k_linalg_house_t.h"
#undef HT
#undef HS
#undef HCPLX

/* ======================================================================== the kernel */

enum { HH_QR, HH_HP, HH_EIGH };

typedef struct hh_params {
  int kind;
  bool cplx;
  cj_dtype dt, ct, wdt;       /* storage, compute (F64 / C128), eigenvalue storage */
  int64_t batch, m, n, k;     /* eigh: m = n */
  int64_t es, ses, wes;       /* bytes: compute element, storage element, eigenvalue element */
  int64_t ws_bytes;           /* workspace per batch element */
  cj_ew_fn to_ct, from_ct, w_out; /* NULL: the same type, copied */
  cj_ew_aux aux_to, aux_from, aux_w;
  bool lower;
  int64_t max_sweeps;
  int64_t grain;
} hh_params;

typedef struct hh_run {
  const hh_params *p;
  const char *in0, *in1;
  char *out0, *out1, *ws;
} hh_run;

static void load(const hh_params *p, void *dst, const char *src, int64_t n) {
  if (p->to_ct)
    p->to_ct(dst, src, NULL, NULL, n, &p->aux_to);
  else
    memcpy(dst, src, (size_t)(n * p->es));
}

static void store(const hh_params *p, char *dst, const void *src, int64_t n) {
  if (p->from_ct)
    p->from_ct(dst, src, NULL, NULL, n, &p->aux_from);
  else
    memcpy(dst, src, (size_t)(n * p->es));
}

static bool all_finite(const double *x, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (!isfinite(x[i])) return false;
  return true;
}

static void run_eigh(const hh_params *p, const char *a_in, char *v_out, char *w_out, char *ws) {
  int64_t n = p->n, nn = n * n;
  char *A = ws, *V = ws + nn * p->es;
  double *w = (double *)(V + nn * p->es), *ws2 = w + n;
  int64_t *idx = (int64_t *)(ws2 + n);
  load(p, A, a_in, nn);
  /* fill the triangle not read from the one that is, and check what was read */
  bool finite = true;
  if (p->cplx) {
    double _Complex *a = (double _Complex *)A;
    for (int64_t i = 0; i < n; i++) {
      a[i * n + i] = creal(a[i * n + i]);
      for (int64_t j = i + 1; j < n; j++) {
        if (p->lower)
          a[i * n + j] = conj(a[j * n + i]);
        else
          a[j * n + i] = conj(a[i * n + j]);
      }
    }
    finite = all_finite((const double *)a, 2 * nn);
  } else {
    double *a = (double *)A;
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = i + 1; j < n; j++) {
        if (p->lower)
          a[i * n + j] = a[j * n + i];
        else
          a[j * n + i] = a[i * n + j];
      }
    finite = all_finite(a, nn);
  }
  if (!finite) {
    double *a = (double *)A; /* NaN, or (NaN, 0) when complex, as cholesky does */
    int64_t step = p->cplx ? 2 : 1;
    for (int64_t i = 0; i < nn; i++) {
      a[i * step] = NAN;
      if (step == 2) a[i * 2 + 1] = 0;
    }
    for (int64_t i = 0; i < n; i++) ws2[i] = NAN;
  } else {
    if (p->cplx)
      hh_jacobi_c((double _Complex *)A, n, (double _Complex *)V, w, p->max_sweeps);
    else
      hh_jacobi_r((double *)A, n, (double *)V, w, p->max_sweeps);
    /* ascending, stable (insertion sort of indices) */
    for (int64_t i = 0; i < n; i++) {
      int64_t j = i;
      while (j > 0 && w[idx[j - 1]] > w[i]) {
        idx[j] = idx[j - 1];
        j--;
      }
      idx[j] = i;
    }
    /* the sorted eigenvalues into ws2, the permuted eigenvectors into A */
    for (int64_t j = 0; j < n; j++) ws2[j] = w[idx[j]];
    for (int64_t r = 0; r < n; r++)
      for (int64_t j = 0; j < n; j++)
        memcpy(A + (r * n + j) * p->es, V + (r * n + idx[j]) * p->es, (size_t)p->es);
  }
  store(p, v_out, A, nn);
  if (p->w_out)
    p->w_out(w_out, ws2, NULL, NULL, n, &p->aux_w);
  else
    memcpy(w_out, ws2, (size_t)(n * 8));
}

static void run_one(const hh_run *R, int64_t e) {
  const hh_params *p = R->p;
  int64_t m = p->m, n = p->n, k = p->k, mn = m * n, es = p->es;
  char *ws = R->ws + e * p->ws_bytes;
  const char *a_in = R->in0 + e * mn * p->ses;
  switch (p->kind) {
    case HH_QR: {
      char *A = ws, *tau = ws + mn * es, *w = tau + k * es;
      load(p, A, a_in, mn);
      if (p->cplx)
        hh_geqrf_c((double _Complex *)A, m, n, (double _Complex *)tau, (double _Complex *)w);
      else
        hh_geqrf_r((double *)A, m, n, (double *)tau, (double *)w);
      store(p, R->out0 + e * mn * p->ses, A, mn);
      store(p, R->out1 + e * k * p->ses, tau, k);
      break;
    }
    case HH_HP: {
      char *A = ws, *tau = ws + mn * es, *Q = tau + k * es, *w = Q + mn * es;
      load(p, A, a_in, mn);
      load(p, tau, R->in1 + e * k * p->ses, k);
      if (p->cplx)
        hh_orgqr_c((const double _Complex *)A, m, n, (const double _Complex *)tau, k,
                   (double _Complex *)Q, (double _Complex *)w);
      else
        hh_orgqr_r((const double *)A, m, n, (const double *)tau, k, (double *)Q, (double *)w);
      store(p, R->out0 + e * mn * p->ses, Q, mn);
      break;
    }
    default:
      run_eigh(p, a_in, R->out0 + e * mn * p->ses, R->out1 + e * n * p->wes, ws);
      break;
  }
}

static void batch_body(void *vr, int64_t b, int64_t e) {
  for (int64_t i = b; i < e; i++) run_one(vr, i);
}

static CJ_MUST_USE cj_status k_house(cj_exec_ctx *ctx, const cj_step *st) {
  const hh_params *p = st->params;
  hh_run R = {p, CJ_PTR(ctx, st->in[0]), NULL, CJ_PTR(ctx, st->out[0]), NULL, NULL};
  if (p->kind == HH_HP) {
    R.in1 = CJ_PTR(ctx, st->in[1]);
    R.ws = CJ_PTR(ctx, st->out[1]);
  } else {
    R.out1 = CJ_PTR(ctx, st->out[1]);
    R.ws = CJ_PTR(ctx, st->out[2]);
  }
  if (p->batch > 1 && ctx->pool && cj_pool_size(ctx->pool) > 1)
    cj_pool_parallel_for(ctx->pool, p->batch, p->grain, batch_body, &R);
  else
    batch_body(&R, 0, p->batch);
  return NULL;
}

/* ======================================================================== lowering */

/* Checks that t has `rank` dims equal to `dims` (and the element type dt). */
static bool same_shape(const cj_lw_tensor *t, cj_dtype dt, int32_t rank, const int64_t *dims) {
  if (t->dtype != dt || t->rank != rank) return false;
  for (int32_t i = 0; i < rank; i++)
    if (t->dims[i] != dims[i]) return false;
  return true;
}

/* Types, conversions and the operand checks every target shares: operand 0 is a batch of
 * m x n matrices of a floating-point or complex type. */
static CJ_MUST_USE cj_status hh_setup(cj_lw *L, cj_op *op, const char *target, uint32_t nopnds,
                          uint32_t nresults, hh_params **out, cj_lw_tensor *a) {
  if (op->nopnds != nopnds || op->nresults != nresults)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @%s takes %u operand%s and returns %u results, got %u and %u",
                       target, nopnds, nopnds == 1 ? "" : "s", nresults, op->nopnds,
                       op->nresults);
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, a));
  cj_dtype dt = a->dtype;
  bool cplx = cj_dtype_is_complex(dt);
  if (!cj_dtype_is_float(dt) && !cplx)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @%s: operand 0 must have a floating-point or complex element "
                       "type, got %s", target, cj_dtype_get(dt)->id);
  if (a->rank < 2)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @%s: operand 0 must be a batch of matrices (rank >= 2), got "
                       "rank %d", target, (int)a->rank);
  hh_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  p->cplx = cplx;
  p->dt = dt;
  p->ct = cplx ? CJ_C128 : CJ_F64;
  p->es = cplx ? 16 : 8;
  p->ses = cj_dtype_bytes(dt);
  p->wdt = cplx ? cj_dtype_component(dt) : dt;
  p->wes = cj_dtype_bytes(p->wdt);
  p->m = a->dims[a->rank - 2];
  p->n = a->dims[a->rank - 1];
  int64_t mn = p->m * p->n;
  p->batch = mn ? a->nelems / mn : 0;
  if (dt != p->ct) {
    p->to_ct = cj_cvt_lookup(dt, p->ct);
    p->from_ct = cj_cvt_lookup(p->ct, dt);
    p->aux_to.src = dt;
    p->aux_to.dt = p->ct;
    p->aux_from.src = p->ct;
    p->aux_from.dt = dt;
    if (!p->to_ct || !p->from_ct)
      return cj_op_error(op, CJ_UNIMPLEMENTED, "custom_call @%s: element type %s is not supported",
                         target, cj_dtype_get(dt)->id);
  }
  *out = p;
  return NULL;
}

static CJ_MUST_USE cj_status hh_emit(cj_lw *L, cj_op *op, hh_params *p, uint32_t nin, const int32_t *in,
                         uint32_t nres, const int32_t *res, double flops) {
  cj_lw_add_cost(L, flops * (double)p->batch, 0);
  p->ws_bytes = (p->ws_bytes + 63) / 64 * 64;
  p->grain = (int64_t)(200000.0 / (flops > 1 ? flops : 1)) + 1;
  int32_t outs[3];
  for (uint32_t i = 0; i < nres; i++) outs[i] = res[i];
  outs[nres] = cj_lw_new_buf(L, p->ws_bytes * p->batch, CJ_BK_ARENA);
  if (!cj_lw_emit(L, op, k_house, p, nin, in, nres + 1, outs)) return cj_oom();
  return NULL;
}

cj_status cj_lower_cc_qr(cj_lw *L, cj_op *op) {
  static const char T[] = "Qr";
  hh_params *p;
  cj_lw_tensor a, f, t;
  CJ_RETURN_IF_ERROR(hh_setup(L, op, T, 1, 2, &p, &a));
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &f));
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 1, &t));
  p->kind = HH_QR;
  p->k = p->m < p->n ? p->m : p->n;
  int64_t tdims[CJ_MAX_RANK];
  memcpy(tdims, a.dims, sizeof(int64_t) * (size_t)(a.rank - 1));
  tdims[a.rank - 2] = p->k;
  if (!same_shape(&f, a.dtype, a.rank, a.dims))
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @Qr: result 0 (the factored matrix) must have the operand's "
                       "type");
  if (!same_shape(&t, a.dtype, a.rank - 1, tdims))
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @Qr: result 1 (taus) must have the operand's element type and "
                       "shape [batch..., min(m, n)] = [..., %lld]", (long long)p->k);
  if (p->batch == 0 || p->k == 0) return NULL; /* m * n = 0: nothing to factor */
  p->ws_bytes = (p->m * p->n + p->k + p->n) * p->es;
  double m = (double)p->m, n = (double)p->n, k = (double)p->k;
  double flops = 2 * (m * n * k - (m + n) * k * k / 2 + k * k * k / 3) * (p->cplx ? 4 : 1);
  int32_t res[2] = {f.buf, t.buf};
  return hh_emit(L, op, p, 1, &a.buf, 2, res, flops);
}

cj_status cj_lower_cc_householder_product(cj_lw *L, cj_op *op) {
  static const char T[] = "ProductOfElementaryHouseholderReflectors";
  hh_params *p;
  cj_lw_tensor a, t, q;
  CJ_RETURN_IF_ERROR(hh_setup(L, op, T, 2, 1, &p, &a));
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 1, &t));
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &q));
  p->kind = HH_HP;
  if (p->m < p->n)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @%s: operand 0 must have at least as many rows as columns, got "
                       "%lld x %lld", T, (long long)p->m, (long long)p->n);
  bool batch_ok = t.dtype == a.dtype && t.rank == a.rank - 1;
  for (int32_t i = 0; batch_ok && i < a.rank - 2; i++) batch_ok = t.dims[i] == a.dims[i];
  if (!batch_ok)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @%s: operand 1 (taus) must have operand 0's element type and "
                       "shape [batch..., k]", T);
  p->k = t.dims[t.rank - 1];
  if (p->k > p->n)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @%s: %lld taus for %lld columns (at most one per column)", T,
                       (long long)p->k, (long long)p->n);
  if (!same_shape(&q, a.dtype, a.rank, a.dims))
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @%s: the result must have operand 0's type", T);
  if (p->batch == 0) return NULL;
  p->ws_bytes = (2 * p->m * p->n + p->k + p->n) * p->es;
  double m = (double)p->m, n = (double)p->n, k = (double)p->k;
  double flops = 4 * (m * n * k - (m + n) * k * k / 2 + k * k * k / 3) * (p->cplx ? 4 : 1);
  int32_t ins[2] = {a.buf, t.buf};
  return hh_emit(L, op, p, 2, ins, 1, &q.buf, flops);
}

/* "lower,sort_eigenvalues,max_iter,tol" */
static CJ_MUST_USE cj_status parse_eigh_config(cj_op *op, bool *lower, int64_t *max_iter) {
  const cj_attr *cfg = cj_op_attr(op, "backend_config");
  const char *s = NULL;
  size_t len = 0;
  *lower = true;
  *max_iter = 100;
  if (!cfg) return NULL;
  if (!cj_attr_get_str(cfg, &s, &len))
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @Eigh: backend_config must be the string "
                       "\"lower,sort_eigenvalues,max_iter,tol\"");
  if (len == 0) return NULL;
  char buf[128];
  if (len >= sizeof buf)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "custom_call @Eigh: backend_config is too long");
  memcpy(buf, s, len);
  buf[len] = 0;
  char *c = buf, *end;
  long long lo = strtoll(c, &end, 10);
  bool ok = end != c && *end == ',';
  if (ok) {
    c = end + 1;
    (void)strtoll(c, &end, 10);
    ok = end != c && *end == ',';
  }
  long long it = 0;
  if (ok) {
    c = end + 1;
    it = strtoll(c, &end, 10);
    ok = end != c && *end == ',';
  }
  if (ok) {
    c = end + 1;
    double tol = strtod(c, &end);
    ok = end != c && *end == 0 && tol >= 0;
  }
  if (!ok || (lo != 0 && lo != 1) || it < 1)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @Eigh: backend_config \"%s\" is not \"lower,sort_eigenvalues,"
                       "max_iter,tol\" (lower and sort 0 or 1, max_iter >= 1)", buf);
  *lower = lo == 1;
  *max_iter = it;
  return NULL;
}

cj_status cj_lower_cc_eigh(cj_lw *L, cj_op *op) {
  static const char T[] = "Eigh";
  hh_params *p;
  cj_lw_tensor a, v, w;
  CJ_RETURN_IF_ERROR(hh_setup(L, op, T, 1, 2, &p, &a));
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &v));
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 1, &w));
  p->kind = HH_EIGH;
  if (p->m != p->n)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @Eigh: operand 0 must be square matrices, got %lld x %lld",
                       (long long)p->m, (long long)p->n);
  CJ_RETURN_IF_ERROR(parse_eigh_config(op, &p->lower, &p->max_sweeps));
  if (!same_shape(&v, a.dtype, a.rank, a.dims))
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @Eigh: result 0 (the eigenvectors) must have the operand's "
                       "type");
  if (!same_shape(&w, p->wdt, a.rank - 1, a.dims))
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @Eigh: result 1 (the eigenvalues) must have element type %s "
                       "and shape [batch..., n]", cj_dtype_get(p->wdt)->id);
  if (p->wdt != CJ_F64) {
    p->w_out = cj_cvt_lookup(CJ_F64, p->wdt);
    p->aux_w.src = CJ_F64;
    p->aux_w.dt = p->wdt;
    if (!p->w_out)
      return cj_op_error(op, CJ_UNIMPLEMENTED, "custom_call @Eigh: element type %s is not supported",
                         cj_dtype_get(p->wdt)->id);
  }
  if (p->batch == 0) return NULL;
  int64_t n = p->n;
  p->ws_bytes = 2 * n * n * p->es + 3 * n * 8;
  double nd = (double)n;
  double flops = 8 * nd * nd * nd * 8 * (p->cplx ? 4 : 1); /* about eight sweeps */
  int32_t res[2] = {v.buf, w.buf};
  return hh_emit(L, op, p, 1, &a.buf, 2, res, flops);
}
