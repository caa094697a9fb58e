/* cjrt: stablehlo.async_start / stablehlo.async_done on the CPU backend.
 *
 *   %f = "stablehlo.async_start"(%x...) ({ ^bb0(%a...): %r = <one collective or slice op>(%a...)
 *                                           "stablehlo.return"(%r...) })
 *          : (...) -> !stablehlo.future<T...>
 *   %y... = "stablehlo.async_done"(%f) : (!stablehlo.future<T...>) -> (T...)
 *
 * The plan runs steps in order on the device, so "asynchronous" adds nothing to overlap: the
 * body runs where async_start stands (its block arguments are bound to the operands' buffers and
 * its op is lowered in place), the future is the body's result buffers, and async_done yields
 * them (its results alias those buffers; no copy, no step). A future used by anything other than
 * async_done (carried through control flow, returned from the entry function) is rejected at
 * compile time.
 */
#include <string.h>

#include "cpu/lower.h"

enum { MAX_ASYNC_LEAVES = 64 };

/* Whether every use of future `f` in the op's function is an async_done. */
static bool only_done_users(const cj_op *start, const cj_value *f) {
  /* the future is visible in its block and in the regions nested below it; walk them */
  const cj_op *stack[256];
  int sp = 0;
  for (const cj_op *op = start->next; op; op = op->next) {
    sp = 0;
    stack[sp++] = op;
    while (sp > 0) {
      const cj_op *o = stack[--sp];
      for (uint32_t i = 0; i < o->nopnds; i++)
        if (o->operands[i] == f && o->kind != CJ_OP_ASYNC_DONE) return false;
      for (uint32_t r = 0; r < o->nregions; r++)
        for (const cj_block *blk = o->regions[r].first; blk; blk = blk->next)
          for (const cj_op *in = blk->first; in; in = in->next) {
            if (sp >= 256) return false;
            stack[sp++] = in;
          }
    }
  }
  return true;
}

cj_status cj_lower_async_start(cj_lw *L, cj_op *op) {
  if (op->nregions != 1 || !op->regions[0].first)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "async_start needs a body");
  cj_block *body = op->regions[0].first;
  if (body->nargs != op->nopnds)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "the body takes %u arguments, the op has %u operands",
                       body->nargs, op->nopnds);
  if (!only_done_users(op, &op->results[0]))
    return cj_op_error(op, CJ_UNIMPLEMENTED,
                       "its future is used by something other than stablehlo.async_done (carried "
                       "through control flow or returned): not supported by the CPU backend");
  for (uint32_t i = 0; i < op->nopnds; i++) {
    int32_t n;
    const int32_t *leaves;
    CJ_RETURN_IF_ERROR(cj_lw_leaves(L, op, op->operands[i], &n, &leaves));
    CJ_RETURN_IF_ERROR(cj_lw_bind(L, &body->args[i], n, leaves));
  }
  cj_op *ret = NULL;
  CJ_RETURN_IF_ERROR(cj_lw_block(L, body, &ret));
  if (!ret) return cj_op_error(op, CJ_INVALID_ARGUMENT, "the body has no return");
  int32_t all[MAX_ASYNC_LEAVES], total = 0;
  for (uint32_t i = 0; i < ret->nopnds; i++) {
    int32_t n;
    const int32_t *leaves;
    CJ_RETURN_IF_ERROR(cj_lw_leaves(L, ret, ret->operands[i], &n, &leaves));
    if (total + n > MAX_ASYNC_LEAVES)
      return cj_op_error(op, CJ_UNIMPLEMENTED, "more than %d values in one future", MAX_ASYNC_LEAVES);
    memcpy(all + total, leaves, sizeof(int32_t) * (size_t)n);
    total += n;
  }
  return cj_lw_bind(L, &op->results[0], total, all);
}

cj_status cj_lower_async_done(cj_lw *L, cj_op *op) {
  int32_t n;
  const int32_t *leaves;
  CJ_RETURN_IF_ERROR(cj_lw_leaves(L, op, op->operands[0], &n, &leaves));
  int32_t at = 0;
  for (uint32_t i = 0; i < op->nresults; i++) {
    int32_t k = cj_lw_type_leaves(op->results[i].type);
    if (at + k > n)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "the future holds fewer values than the op yields");
    /* the bound buffers are read from here on: record the use so they stay live */
    for (int32_t j = 0; j < k; j++) cj_lw_use(L, leaves[at + j]);
    CJ_RETURN_IF_ERROR(cj_lw_bind(L, &op->results[i], k, leaves + at));
    at += k;
  }
  if (at != n)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "the future holds %d values, the op yields %d", n, at);
  return NULL;
}
