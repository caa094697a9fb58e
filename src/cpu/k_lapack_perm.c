/* cjrt: @cjrt_lu_pivots_to_permutation(pivots) -> permutation (k_lapack.h), the custom call
 * python/jax_plugins/cjrt lowers jax.lax.linalg.lu_pivots_to_permutation to on cjrt, in place of
 * JAX's generic rule: a while loop of one row swap per step, whose k steps (k = 128 for one
 * 128 x 128 solve) cost 5-7x XLA:CPU's compiled loop here.
 *
 * pivots: int32[..., k], result int32[..., m] (m >= k), batched over equal leading dimensions.
 * Each batch element starts from the identity and swaps, for i = 0 .. k-1, entries i and
 * j = pivots[i], as the generic rule does with JAX's indexing: a negative j counts from the end
 * (j + m); the read of entry j clamps it into [0, m), and the write to entry j is dropped when
 * it lies outside. LAPACK's pivots (getrf's, 1-based, less one) always lie inside.
 */
#include <string.h>

#include "cpu/k_lapack.h"

typedef struct lp_params {
  int64_t batch, k, m;
} lp_params;

static CJ_MUST_USE cj_status k_lu_permutation(cj_exec_ctx *ctx, const cj_step *st) {
  const lp_params *p = st->params;
  const int32_t *piv = (const int32_t *)CJ_PTR(ctx, st->in[0]);
  int32_t *perm = (int32_t *)CJ_PTR(ctx, st->out[0]);
  const int64_t k = p->k, m = p->m;
  for (int64_t b = 0; b < p->batch; b++, piv += k, perm += m) {
    for (int64_t i = 0; i < m; i++) perm[i] = (int32_t)i;
    for (int64_t i = 0; i < k; i++) {
      int64_t j = piv[i] < 0 ? (int64_t)piv[i] + m : piv[i];
      int64_t jr = j < 0 ? 0 : j >= m ? m - 1 : j;
      int32_t x = perm[i];
      perm[i] = perm[jr];
      if (j >= 0 && j < m) perm[j] = x;
    }
  }
  return NULL;
}

cj_status cj_lower_cc_lu_permutation(cj_lw *L, cj_op *op) {
  static const char T[] = "cjrt_lu_pivots_to_permutation";
  cj_lw_tensor in = {0}, out = {0};
  bool ok = op->nopnds == 1 && op->nresults == 1;
  if (ok) {
    CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &in));
    CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &out));
    ok = in.dtype == CJ_S32 && out.dtype == CJ_S32 && in.rank >= 1 && out.rank == in.rank;
  }
  for (int32_t d = 0; ok && d < in.rank - 1; d++) ok = in.dims[d] == out.dims[d];
  if (!ok)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @%s takes one operand, int32 pivots of rank >= 1, and returns "
                       "one int32 result of that rank and the same leading dimensions", T);
  lp_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  p->k = in.dims[in.rank - 1];
  p->m = out.dims[out.rank - 1];
  if (p->m < p->k)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @%s: the permutation (%lld) must be at least as long as the "
                       "pivots (%lld)", T, (long long)p->m, (long long)p->k);
  p->batch = 1;
  for (int32_t d = 0; d < in.rank - 1; d++) p->batch *= in.dims[d];
  if (p->batch == 0 || p->m == 0) return NULL; /* nothing to write */
  cj_lw_add_cost(L, (double)p->batch * (double)(p->m + 3 * p->k), 0);
  if (!cj_lw_emit(L, op, k_lu_permutation, p, 1, &in.buf, 1, &out.buf)) return cj_oom();
  return NULL;
}
