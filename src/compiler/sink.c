/* cjrt: all_reduce moved past the transpose or reshape that is its only use.
 *
 * A data-parallel gradient is computed by a dot_general whose contraction runs over the batch,
 * which the partitioner splits: the local dot is completed by an all_reduce over the devices
 * (spmd_partition.c). JAX's backward pass then transposes that gradient to the weight's layout.
 * On one device the backend folds such a transpose into the dot (it writes the transposed
 * product); with the all_reduce in between, the transpose became a strided copy of the whole
 * gradient on every device. A sum (any all_reduce combiner: it acts element by element) commutes
 * with a permutation of the elements, so
 *     %r = all_reduce(%x); %t = transpose(%r)    becomes    %t' = transpose(%x); %r' = all_reduce(%t')
 * with %r' taking the uses of %t. The same holds for reshape. Only an all_reduce of one value
 * whose result has exactly one use, that transpose or reshape in the same block, is moved; the
 * rewrite is repeated, so a chain of them moves too.
 */
#include <stdlib.h>

#include "compiler/compiler.h"

/* The transpose or reshape to move before `ar` (its only use, found after it in its block), or
 * NULL */
static cj_op *movable_user(cj_op *ar, const uint32_t *uses, uint32_t nv) {
  if (ar->kind != CJ_OP_ALL_REDUCE || ar->nopnds != 1 || ar->nresults != 1) return NULL;
  cj_value *r = &ar->results[0];
  if (r->id >= nv || uses[r->id] != 1) return NULL;
  for (cj_op *t = ar->next; t; t = t->next)
    for (uint32_t i = 0; i < t->nopnds; i++)
      if (t->operands[i] == r)
        return (t->kind == CJ_OP_TRANSPOSE || t->kind == CJ_OP_RESHAPE) && t->nopnds == 1 &&
                       t->nresults == 1
                   ? t
                   : NULL;
  return NULL; /* used inside a nested region */
}

static bool sink_block(cj_op *func, cj_block *b, const uint32_t *uses, uint32_t nv) {
  bool changed = false;
  for (cj_op *op = b->first; op; op = op->next) {
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next)
        changed |= sink_block(func, nb, uses, nv);
    cj_op *t = movable_user(op, uses, nv);
    if (!t) continue;
    /* uses of t's result go to the all_reduce's (t's own operand is the all_reduce's result) */
    cj_replace_uses_in_op(func, &t->results[0], &op->results[0]);
    cj_block_remove(b, t);
    cj_block_insert_before(b, op, t);
    t->operands[0] = op->operands[0];
    op->operands[0] = &t->results[0];
    op->results[0].type = t->results[0].type;
    changed = true;
  }
  return changed;
}

cj_status cj_pass_sink_collectives(cj_module *m, cj_op *func) {
  (void)m;
  cj_block *body = cj_func_body(func);
  /* a chain of transposes and reshapes moves one op a round */
  for (bool again = body != NULL; again;) {
    uint32_t nv;
    uint32_t *uses = cj_use_counts(body, &nv);
    if (!uses) return cj_oom();
    again = sink_block(func, body, uses, nv);
    free(uses);
  }
  return NULL;
}
