/* cjrt: common subexpression elimination in a function's body.
 *
 * JAX traces each jnp call on its own: max and logsumexp both reduce with maximum, softmax and
 * log_softmax both compute exp(x - max(x)), mean and sum both sum, inlined helpers bring their
 * own copies of the same constants. An op of the body's top level that computes what an earlier
 * op there computes (same kind, same operands, same result types, equal attributes, and for a
 * reduce the same body) is dropped and its uses take the earlier results, so the work runs
 * once. Only pure ops qualify: elementwise ops, constants, iota, the data-movement ops and
 * reduce, and the linear algebra custom calls (cse_pure_custom_call); never ops with side
 * effects, random numbers, calls or other regions.
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"

/* every operand of op (and of the ops nested in it) through repl */
static void cse_remap(cj_op *op, cj_value *const *repl, uint32_t nv) {
  for (uint32_t i = 0; i < op->nopnds; i++) {
    cj_value *v = op->operands[i];
    if (v && v->id < nv && repl[v->id]) op->operands[i] = repl[v->id];
  }
  for (uint32_t r = 0; r < op->nregions; r++)
    for (cj_block *b = op->regions[r].first; b; b = b->next)
      for (cj_op *o = b->first; o; o = o->next) cse_remap(o, repl, nv);
}

/* jaxlib's LAPACK calls (lapack_*) and the plugin's @cjrt_lu_pivots_to_permutation and
 * @cjrt_threefry2x32 are pure
 * functions of their operands and attributes, as XLA's CSE takes every custom call that does not
 * declare a side effect: inv and slogdet of one matrix then factor it once, as on XLA:CPU */
static bool cse_pure_custom_call(const cj_op *op) {
  bool se = false;
  const char *s;
  size_t n;
  if ((cj_op_get_bool(op, "has_side_effect", &se) && se) ||
      !cj_attr_get_str(cj_op_attr(op, "call_target_name"), &s, &n))
    return false;
  return (n > 7 && memcmp(s, "lapack_", 7) == 0) ||
         (n == 29 && memcmp(s, "cjrt_lu_pivots_to_permutation", 29) == 0) ||
         (n == 17 && memcmp(s, "cjrt_threefry2x32", 17) == 0);
}

static bool cse_kind_ok(const cj_op *op) {
  uint32_t flags = cj_op_info_get(op->kind)->flags;
  if (op->kind == CJ_OP_UNKNOWN || op->nsuccessors ||
      (flags & (CJ_OPF_SIDE_EFFECT | CJ_OPF_TERMINATOR | CJ_OPF_CARRIED)))
    return false;
  if (op->kind == CJ_OP_REDUCE) return true;
  if (op->nregions) return false;
  if (flags & CJ_OPF_ELEMENTWISE) return true;
  switch (op->kind) {
    case CJ_OP_CONSTANT:
    case CJ_OP_IOTA:
    case CJ_OP_BROADCAST_IN_DIM:
    case CJ_OP_RESHAPE:
    case CJ_OP_TRANSPOSE:
    case CJ_OP_SLICE:
    case CJ_OP_CONCATENATE:
    case CJ_OP_REVERSE:
    case CJ_OP_PAD:
    case CJ_OP_DOT_GENERAL: return true;
    case CJ_OP_CUSTOM_CALL: return cse_pure_custom_call(op);
    default: return false;
  }
}

static bool cse_attrs_equal(const cj_op *a, const cj_op *b) {
  if (a->nattrs != b->nattrs) return false;
  for (uint32_t i = 0; i < a->nattrs; i++) {
    const cj_attr *other = NULL;
    for (uint32_t k = 0; k < b->nattrs && !other; k++)
      if (b->attrs[k].name == a->attrs[i].name) other = b->attrs[k].value;
    if (!other || !cj_attr_equal(a->attrs[i].value, other)) return false;
  }
  return true;
}

/* position of v in block blk: an argument (its index), a result of an op there (ordinal and
 * index), or -1 when it is defined outside */
static int64_t cse_pos(const cj_value *v, const cj_block *blk) {
  if (!v->def) return v->block == blk ? (int64_t)v->index : -1;
  if (v->def->block != blk) return -1;
  int64_t k = 0;
  for (const cj_op *o = blk->first; o && o != v->def; o = o->next) k++;
  return (int64_t)blk->nargs + k * 64 + v->index;
}

static bool cse_ops_equal(const cj_op *a, const cj_op *b);

/* single-block regions whose ops match one for one (operands at the same positions) */
static bool cse_region_equal(const cj_region *ra, const cj_region *rb) {
  const cj_block *a = ra->first, *b = rb->first;
  if (!a || !b || a->next || b->next || a->nargs != b->nargs) return false;
  for (uint32_t i = 0; i < a->nargs; i++)
    if (a->args[i].type != b->args[i].type) return false;
  const cj_op *x = a->first, *y = b->first;
  for (; x && y; x = x->next, y = y->next) {
    if (x->kind != y->kind || x->kind == CJ_OP_UNKNOWN || x->nregions || y->nregions ||
        x->nopnds != y->nopnds || x->nresults != y->nresults || x->nresults > 64 ||
        !cse_attrs_equal(x, y))
      return false;
    for (uint32_t i = 0; i < x->nresults; i++)
      if (x->results[i].type != y->results[i].type) return false;
    for (uint32_t i = 0; i < x->nopnds; i++) {
      int64_t px = cse_pos(x->operands[i], a), py = cse_pos(y->operands[i], b);
      if (px != py || (px < 0 && x->operands[i] != y->operands[i])) return false;
    }
  }
  return !x && !y;
}

static bool cse_ops_equal(const cj_op *a, const cj_op *b) {
  if (a->kind != b->kind || a->nopnds != b->nopnds ||
      a->nresults != b->nresults || a->nregions != b->nregions)
    return false;
  for (uint32_t i = 0; i < a->nopnds; i++)
    if (a->operands[i] != b->operands[i]) return false;
  for (uint32_t i = 0; i < a->nresults; i++)
    if (a->results[i].type != b->results[i].type) return false;
  if (!cse_attrs_equal(a, b)) return false;
  for (uint32_t r = 0; r < a->nregions; r++)
    if (!cse_region_equal(&a->regions[r], &b->regions[r])) return false;
  return true;
}

static uint64_t cse_hash(const cj_op *op) {
  uint64_t h = 1469598103934665603ull ^ (uint64_t)op->kind;
  for (uint32_t i = 0; i < op->nopnds; i++)
    h = (h ^ (op->operands[i] ? op->operands[i]->id : 0xffffffffu)) * 1099511628211ull;
  for (uint32_t i = 0; i < op->nresults; i++)
    h = (h ^ (uint64_t)(uintptr_t)op->results[i].type) * 1099511628211ull;
  return h ^ (h >> 29);
}

cj_status cj_pass_cse(cj_module *m, cj_op *func) {
  (void)m;
  cj_block *b = cj_func_body(func);
  if (!b) return NULL;
  uint32_t nv = 0, nops = 0;
  cj_block_number_values(b, &nv);
  for (cj_op *op = b->first; op; op = op->next) nops++;
  size_t cap = 16;
  while (cap < 2 * (size_t)nops) cap *= 2;
  cj_value **repl = calloc(nv ? nv : 1, sizeof *repl);
  cj_op **tab = calloc(cap, sizeof *tab);
  if (!repl || !tab) {
    free(repl);
    free(tab);
    return cj_oom();
  }
  for (cj_op *op = b->first; op;) {
    cj_op *next = op->next;
    cse_remap(op, repl, nv);
    if (cse_kind_ok(op)) {
      size_t i = (size_t)cse_hash(op) & (cap - 1);
      while (tab[i] && !cse_ops_equal(tab[i], op)) i = (i + 1) & (cap - 1);
      if (tab[i]) { /* the same as an earlier op: its uses take that op's results */
        for (uint32_t k = 0; k < op->nresults; k++)
          if (op->results[k].id < nv) repl[op->results[k].id] = &tab[i]->results[k];
        cj_block_remove(b, op);
      } else {
        tab[i] = op;
      }
    }
    op = next;
  }
  free(repl);
  free(tab);
  return NULL;
}
