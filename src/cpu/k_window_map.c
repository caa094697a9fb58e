/* cjrt: stablehlo.map. A body that is one add/multiply/maximum/minimum/and/or/xor of its two
 * arguments maps whole arrays with a combiner; any other body runs as a nested plan per
 * element. */
#include <stdlib.h>
#include <string.h>

#include "cpu/k_gather.h"

typedef struct map_params {
  int32_t n;
  int64_t nelems;
  int32_t *es;   /* per input */
  int32_t res;   /* result element bytes */
  kg_comb_fn comb;
  kg_body body;
  /* slots: in = [inputs n][body args n, ret 1]; out = result */
} map_params;

static CJ_MUST_USE cj_status k_map(cj_exec_ctx *ctx, const cj_step *st) {
  const map_params *p = st->params;
  char *out = CJ_PTR(ctx, st->out[0]);
  if (p->comb) {
    const char *a = CJ_PTR(ctx, st->in[0]), *b = CJ_PTR(ctx, st->in[1]);
    if (out != a) memmove(out, a, (size_t)(p->nelems * p->res));
    p->comb(out, p->res, b, p->res, p->nelems);
    return NULL;
  }
  const kg_body *b = &p->body;
  for (int64_t e = 0; e < p->nelems; e++) {
    for (int32_t i = 0; i < p->n; i++)
      memcpy(KG_ARG(ctx, st, b, i), CJ_PTR(ctx, st->in[i]) + e * p->es[i], (size_t)p->es[i]);
    cj_status s = cj_plan_run(ctx, &b->plan);
    if (s) return s;
    memcpy(out + e * p->res, KG_RET(ctx, st, b, 0), (size_t)p->res);
  }
  return NULL;
}

cj_status cj_lower_map(cj_lw *L, cj_op *op) {
  int32_t n = (int32_t)op->nopnds;
  if (n == 0 || op->nresults != 1 || op->nregions != 1)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "map needs inputs, one result and a body");
  if (n >= KG_MAX_BODY_VALUES)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "more than %d map inputs", KG_MAX_BODY_VALUES - 1);
  map_params *p = cj_lw_alloc(L, sizeof *p);
  int32_t *ins = cj_lw_alloc(L, sizeof(int32_t) * (size_t)(2 * n + 1));
  if (!p) return cj_oom();
  p->n = n;
  p->es = cj_lw_alloc(L, sizeof(int32_t) * (size_t)n);
  if (!p->es || !ins) return cj_oom();
  cj_lw_tensor x0;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &x0));
  cj_block *blk = op->regions[0].first;
  if (!blk || blk->nargs != (uint32_t)n)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "the computation needs %d arguments", n);
  for (int32_t i = 0; i < n; i++) {
    cj_lw_tensor x;
    CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, (uint32_t)i, &x));
    if (x.nelems != x0.nelems || x.rank != x0.rank)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "map inputs differ in shape");
    if (cj_kg_scalar_dtype(blk->args[i].type) != x.dtype)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "argument %d of the computation", i);
    p->es[i] = cj_dtype_bytes(x.dtype);
    ins[i] = x.buf;
  }
  p->nelems = x0.nelems;
  cj_lw_add_cost(L, (double)x0.nelems, 0);
  const cj_type *rt = op->results[0].type;
  if (!cj_type_is_static(rt) || rt->num_elements != x0.nelems)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "the result must have the inputs' shape");
  p->res = cj_dtype_bytes(rt->dtype);
  int kop = n == 2 && rt->dtype == x0.dtype ? cj_kg_body_binop(op, 0, x0.dtype) : -1;
  if (kop >= 0 && kop != KG_REPLACE && kop != KG_KEEP) p->comb = cj_kg_comb_lookup(kop, x0.dtype);
  cj_lw_tensor r;
  if (p->comb) {
    CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &r));
    if (ins[1] != ins[0]) cj_lw_hint_inplace(L, r.buf, ins[0]);
    if (!cj_lw_emit(L, op, k_map, p, 2, ins, 1, &r.buf)) return cj_oom();
    return NULL;
  }
  int32_t start = cj_lw_advance(L);
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &r));
  cj_lw_def_at(L, r.buf, start);
  CJ_RETURN_IF_ERROR(cj_kg_body_lower(L, op, 0, start, &p->body, ins + n));
  if (p->body.nrets != 1 || p->body.ret_types[0]->dtype != rt->dtype)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "the computation must return one %s",
                       cj_dtype_get(rt->dtype)->id);
  p->body.slot0 = (uint32_t)n;
  if (!cj_lw_emit(L, op, k_map, p, (uint32_t)(2 * n + 1), ins, 1, &r.buf)) return cj_oom();
  cj_lw_extend_region(L, start);
  return NULL;
}
