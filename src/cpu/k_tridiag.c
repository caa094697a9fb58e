/* cjrt: jaxlib's `tridiagonal_solve_perturbed_ffi`, the CPU target JAX emits for
 * jax.lax.linalg.tridiagonal_solve(..., perturb_singular=True) (k_lapack.h).
 *
 * The solve is row-pivoted Gaussian elimination on the tridiagonal matrix with the forward
 * substitution done during the factorization (in the manner of LAPACK's xLAGTF + xLAGTS, as
 * jaxlib's kernel does): U has at most two superdiagonals, and during back substitution a pivot
 * so small that dividing by it would overflow is perturbed by about eps * max |U(i,j)|, so that
 * numerically singular systems (T - lambda I, inverse iteration) give finite results.
 *
 * Operands dl, d, du: [batch..., n] (dl[0] and du[n-1] unused), b: [batch..., n, k]; result x
 * like b. The call's operand_layouts / result_layouts only say how jaxlib's handler sees memory;
 * this kernel works on the logical (row-major) arrays, so every valid layout gives the same
 * answer. Batch elements run in parallel on the client's pool. Computed in the element type's own
 * precision, as jaxlib does. Element types: f32, f64, complex64, complex128.
 */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/threadpool.h"
#include "cpu/k_lapack.h"
#include "cpu/plan.h"

#define TT float
#define TR float
#define TS(name) name##_s
#define TABS(x) fabsf(x)
#define TRE(x) (x)
#define TEPS FLT_EPSILON
#define TMIN FLT_MIN
#define TMAX FLT_MAX
#include "cpu/k_tridiag_t.h"

#define TT double
#define TR double
#define TS(name) name##_d
#define TABS(x) fabs(x)
#define TRE(x) (x)
#define TEPS DBL_EPSILON
#define TMIN DBL_MIN
#define TMAX DBL_MAX
#include "cpu/k_tridiag_t.h"

#define TT float complex
#define TR float
#define TS(name) name##_c
#define TABS(x) cabsf(x)
#define TRE(x) crealf(x)
#define TEPS FLT_EPSILON
#define TMIN FLT_MIN
#define TMAX FLT_MAX
#include "cpu/k_tridiag_t.h"

#define TT double complex
#define TR double
#define TS(name) name##_z
#define TABS(x) cabs(x)
#define TRE(x) creal(x)
#define TEPS DBL_EPSILON
#define TMIN DBL_MIN
#define TMAX DBL_MAX
#include "cpu/k_tridiag_t.h"

typedef struct tp_params {
  int t;            /* 0 f32, 1 f64, 2 c64, 3 c128 */
  int64_t es;       /* element bytes */
  int64_t batch, n, k, grain;
} tp_params;

typedef struct tp_exec {
  const tp_params *p;
  cj_exec_ctx *ctx;
  const char *dl, *d, *du, *b;
  char *x;
} tp_exec;

static void tp_body(void *vx, int64_t lo, int64_t hi) {
  const tp_exec *X = vx;
  const tp_params *p = X->p;
  cj_tls_area *area = cj_tls_claim(X->ctx);
  if (!area) return; /* cannot happen: the lowering asked for an area */
  char *u = (char *)(((uintptr_t)area->mem + 63) & ~(uintptr_t)63);
  char *row = u + 3 * p->n * p->es;
  for (int64_t i = lo; i < hi; i++) {
    int64_t dv = i * p->n * p->es, mv = dv * p->k;
    const void *dl = X->dl + dv, *d = X->d + dv, *du = X->du + dv, *b = X->b + mv;
    void *x = X->x + mv;
    switch (p->t) {
      case 0: tp_solve_s(p->n, p->k, dl, d, du, b, x, (float *)u, (float *)row); break;
      case 1: tp_solve_d(p->n, p->k, dl, d, du, b, x, (double *)u, (double *)row); break;
      case 2:
        tp_solve_c(p->n, p->k, dl, d, du, b, x, (float complex *)u, (float complex *)row);
        break;
      default:
        tp_solve_z(p->n, p->k, dl, d, du, b, x, (double complex *)u, (double complex *)row);
        break;
    }
  }
  cj_tls_release(X->ctx, area);
}

static CJ_MUST_USE cj_status k_tridiag_perturbed(cj_exec_ctx *ctx, const cj_step *st) {
  const tp_params *p = st->params;
  tp_exec X = {.p = p, .ctx = ctx};
  X.dl = CJ_PTR(ctx, st->in[0]);
  X.d = CJ_PTR(ctx, st->in[1]);
  X.du = CJ_PTR(ctx, st->in[2]);
  X.b = CJ_PTR(ctx, st->in[3]);
  X.x = CJ_PTR(ctx, st->out[0]);
  if (p->batch > 1 && ctx->pool && cj_pool_size(ctx->pool) > 1)
    cj_pool_parallel_for(ctx->pool, p->batch, p->grain, tp_body, &X);
  else
    tp_body(&X, 0, p->batch);
  return NULL;
}

/* An element type as MLIR writes it (f32, i32, complex<f64>), for messages. */
static const char *tp_type_name(cj_dtype dt) {
  const cj_dtype_info *in = cj_dtype_get(dt);
  return in->mlir ? in->mlir : in->id;
}

cj_status cj_lower_cc_tridiagonal_perturbed(cj_lw *L, cj_op *op) {
  const char *T = "tridiagonal_solve_perturbed_ffi";
  if (op->nopnds != 4 || op->nresults != 1)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @%s takes 4 operands (dl, d, du, b) and returns 1 result, "
                       "got %u and %u", T, op->nopnds, op->nresults);
  cj_lw_tensor in[4], out;
  for (uint32_t i = 0; i < 4; i++) CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, i, &in[i]));
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &out));
  static const cj_dtype types[4] = {CJ_F32, CJ_F64, CJ_C64, CJ_C128};
  int t = -1;
  for (int k = 0; k < 4; k++)
    if (in[3].dtype == types[k]) t = k;
  if (t < 0)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @%s: element type %s is not one of f32, f64, complex<f32>, "
                       "complex<f64>", T, tp_type_name(in[3].dtype));
  const cj_lw_tensor *b = &in[3];
  if (b->rank < 2)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @%s: operand 3 (b) must have rank >= 2, got %d", T, b->rank);
  for (int i = 0; i < 3; i++) {
    bool ok = in[i].dtype == b->dtype && in[i].rank == b->rank - 1;
    for (int32_t k = 0; ok && k < b->rank - 1; k++) ok = in[i].dims[k] == b->dims[k];
    if (!ok)
      return cj_op_error(op, CJ_INVALID_ARGUMENT,
                         "custom_call @%s: operand %d must be %s with b's shape less its last "
                         "dimension", T, i, tp_type_name(b->dtype));
  }
  bool same = out.dtype == b->dtype && out.rank == b->rank;
  for (int32_t k = 0; same && k < b->rank; k++) same = out.dims[k] == b->dims[k];
  if (!same)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "custom_call @%s: the result must have b's type",
                       T);
  tp_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  p->t = t;
  p->es = cj_dtype_bytes(b->dtype);
  p->n = b->dims[b->rank - 2];
  p->k = b->dims[b->rank - 1];
  p->batch = 1;
  for (int32_t k = 0; k < b->rank - 2; k++) p->batch *= b->dims[k];
  if (p->batch == 0 || p->n == 0 || p->k == 0) return NULL; /* nothing to write */
  double flops = 8.0 * (double)p->n * (double)p->k * (t >= 2 ? 4 : 1);
  p->grain = (int64_t)(200000.0 / flops) + 1;
  cj_lw_set_tls_bytes(L, (3 * p->n + p->k) * p->es + 64);
  cj_lw_add_cost(L, flops * (double)p->batch, 0);
  int32_t ins[4] = {in[0].buf, in[1].buf, in[2].buf, in[3].buf}, outs[1] = {out.buf};
  if (!cj_lw_emit(L, op, k_tridiag_perturbed, p, 4, ins, 1, outs)) return cj_oom();
  return NULL;
}
