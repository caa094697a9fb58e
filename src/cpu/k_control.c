/* cjrt: control flow as nested plans over the same arena: while (a condition plan and a body
 * plan over carried buffers), if and case (one plan per branch, each ending with copies into the
 * op's result buffers). Loop bodies are planned once; an iteration costs one call per step. */
#include <stdlib.h>
#include <string.h>

#include "cpu/lower.h"

/* ======================================================================== nested plans */

cj_status cj_lw_plan_finish(cj_lw *L, cj_lw_saved *saved, cj_plan *out, cj_status st) {
  cj_status st2 = cj_lw_plan_end(L, saved, out);
  if (!st) return st2;
  cj_status_ignore(st2); /* the first error is the one to report */
  return st;
}

cj_status cj_lw_value_plan(cj_lw *L, cj_op *op, cj_block *b, const char *what, cj_plan *out, int32_t *buf) {
  cj_lw_saved saved;
  cj_lw_plan_begin(L, &saved);
  cj_op *term = NULL;
  cj_status st = cj_lw_block(L, b, &term);
  if (!st && (!term || term->nopnds != 1))
    st = cj_op_error(op, CJ_INVALID_ARGUMENT, "%s must return one value", what);
  if (!st) {
    int32_t n;
    const int32_t *lv;
    st = cj_lw_leaves(L, term, term->operands[0], &n, &lv);
    if (!st) *buf = lv[0];
  }
  return cj_lw_plan_finish(L, &saved, out, st);
}

/* Emits the step that runs the nested plans: it reads buffer `first` (the predicate, the
 * selector) and keeps the n buffers of `rest` alive. */
static CJ_MUST_USE cj_status emit_driver(cj_lw *L, cj_op *op, cj_kernel_fn fn, void *p, int32_t first, int32_t n,
                                         const int32_t *rest) {
  int32_t *ins = malloc(sizeof(int32_t) * (size_t)(n + 1));
  if (!ins) return cj_oom();
  ins[0] = first;
  memcpy(ins + 1, rest, sizeof(int32_t) * (size_t)n);
  cj_status st = cj_lw_emit(L, op, fn, p, (uint32_t)n + 1, ins, 0, NULL) ? NULL : cj_oom();
  free(ins);
  return st;
}

/* ======================================================================== while */

/* A double-buffered carry (swap): the body writes some carried values into buffers of their
 * own instead of copying them back; the next iteration runs the plans whose slots name those
 * buffers and the carried ones the other way round (cond[1], body[1]), and so on alternately;
 * after an odd number of iterations `fix` copies them back into the carried buffers. */
typedef struct while_params {
  cj_plan cond[2], body[2], fix;
  bool swap;
} while_params;

static CJ_MUST_USE cj_status k_while(cj_exec_ctx *ctx, const cj_step *st) {
  const while_params *p = st->params;
  const char *pred = CJ_PTR(ctx, st->in[0]);
  int ph = 0;
  for (;;) {
    cj_status s = cj_plan_run(ctx, &p->cond[ph]);
    if (s) return s;
    if (!*pred) break;
    s = cj_plan_run(ctx, &p->body[ph]);
    if (s) return s;
    ph ^= p->swap;
  }
  return ph ? cj_plan_run(ctx, &p->fix) : NULL;
}

/* the leaves of all operands, flattened */
static CJ_MUST_USE cj_status operand_leaves(cj_lw *L, cj_op *op, int32_t *out, int32_t cap, int32_t *n) {
  *n = 0;
  for (uint32_t i = 0; i < op->nopnds; i++) {
    int32_t k;
    const int32_t *lv;
    CJ_RETURN_IF_ERROR(cj_lw_leaves(L, op, op->operands[i], &k, &lv));
    if (*n + k > cap) return cj_op_error(op, CJ_UNIMPLEMENTED, "too many operands");
    memcpy(out + *n, lv, sizeof(int32_t) * (size_t)k);
    *n += k;
  }
  return NULL;
}

/* binds the block arguments (or the op results) to consecutive leaves */
static CJ_MUST_USE cj_status bind_values(cj_lw *L, cj_value *vals, uint32_t nvals, const int32_t *leaves,
                             int32_t nleaves) {
  int32_t k = 0;
  for (uint32_t i = 0; i < nvals; i++) {
    int32_t c = cj_lw_type_leaves(vals[i].type);
    if (k + c > nleaves) return cj_internal("leaf count mismatch");
    CJ_RETURN_IF_ERROR(cj_lw_bind(L, &vals[i], c, leaves + k));
    k += c;
  }
  return NULL;
}

/* leaves of the terminator's operands */
static CJ_MUST_USE cj_status term_leaves(cj_lw *L, cj_op *term, int32_t *out, int32_t cap, int32_t *n) {
  return operand_leaves(L, term, out, cap, n);
}

/* copies src[i] -> dst[i] where they differ, safely even when some src are dst of others */
static CJ_MUST_USE cj_status parallel_copy(cj_lw *L, const cj_op *op, int32_t n, const int32_t *src,
                               const int32_t *dst) {
  int32_t *s2 = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
  int32_t *d2 = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
  int32_t *tsrc = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
  int32_t *tdst = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
  if (!s2 || !d2 || !tsrc || !tdst) {
    free(s2);
    free(d2);
    free(tsrc);
    free(tdst);
    return cj_oom();
  }
  int32_t m = 0, t = 0;
  for (int32_t i = 0; i < n; i++) {
    if (src[i] == dst[i]) continue;
    bool hazard = false; /* src[i] is overwritten by another copy */
    for (int32_t j = 0; j < n; j++)
      if (j != i && dst[j] == src[i] && src[j] != dst[j]) hazard = true;
    if (hazard) {
      int32_t tmp = cj_lw_new_buf(L, cj_lw_buf_at(L, src[i])->size, CJ_BK_ARENA);
      tsrc[t] = src[i];
      tdst[t++] = tmp;
      s2[m] = tmp;
    } else {
      s2[m] = src[i];
    }
    d2[m++] = dst[i];
  }
  cj_status st = cj_lw_emit_copies(L, op, (uint32_t)t, tsrc, tdst);
  if (!st) st = cj_lw_emit_copies(L, op, (uint32_t)m, s2, d2);
  free(s2);
  free(d2);
  free(tsrc);
  free(tdst);
  return st;
}

enum { MAX_LEAVES = 4096 };

/* Leaf i of a while whose operands are single leaves is loop-invariant when the body returns its
 * own argument i: the loop then reads the initial buffer in place instead of a carried copy (a
 * matrix passed through a solver's loop is not copied on every execution). */
static bool invariant_leaf(const cj_op *op, const cj_block *bb, int32_t n, int32_t i) {
  if ((uint32_t)n != op->nopnds || bb->nargs != op->nopnds) return false;
  const cj_op *t = bb->last;
  return t && t->nopnds == op->nopnds && t->operands[i] == &bb->args[i];
}

/* Leaves whose body result r (a buffer of the body's own, of the carried size, returned once,
 * not the predicate) is double-buffered with its carried buffer instead of copied back: moves
 * them out of ret/carried (the copies left) into sw_r/sw_c. */
static int32_t pick_swaps(cj_lw *L, int32_t n, int32_t *ret, const int32_t *carried, const int32_t *init,
                          int32_t body_start, int32_t pred, int32_t *sw_r, int32_t *sw_c) {
  int32_t m = 0;
  for (int32_t i = 0; i < n; i++) {
    int32_t r = ret[i], c = carried[i];
    if (r == c || c == init[i] || r == pred || c == pred) continue;
    cj_lw_buf *rb = cj_lw_buf_at(L, r), *cb = cj_lw_buf_at(L, c);
    if (rb->kind != CJ_BK_ARENA || cb->kind != CJ_BK_ARENA || rb->merged >= 0 || cb->merged >= 0 ||
        rb->def < body_start || rb->size != cb->size)
      continue;
    bool ok = true;
    for (int32_t j = 0; j < n && ok; j++)
      if ((j != i && ret[j] == r) || carried[j] == r || init[j] == r) ok = false;
    if (!ok) continue;
    sw_r[m] = r;
    sw_c[m++] = c;
    ret[i] = c; /* no copy */
  }
  return m;
}

/* The swapped plans and the copies back (see while_params). */
static CJ_MUST_USE cj_status plan_swaps(cj_lw *L, const cj_op *op, while_params *p, int32_t m,
                                        const int32_t *sw_r, const int32_t *sw_c) {
  p->swap = true;
  CJ_RETURN_IF_ERROR(cj_lw_plan_swapped(L, &p->cond[0], m, sw_r, sw_c, &p->cond[1]));
  CJ_RETURN_IF_ERROR(cj_lw_plan_swapped(L, &p->body[0], m, sw_r, sw_c, &p->body[1]));
  cj_lw_saved saved;
  cj_lw_plan_begin(L, &saved);
  cj_status st = cj_lw_emit_copies(L, op, (uint32_t)m, sw_r, sw_c);
  return cj_lw_plan_finish(L, &saved, &p->fix, st);
}

/* Carried buffers whose initial value is a constant of one repeated element (the zeros a scan
 * stacks its outputs into; CSE leaves one such constant for all of them, so at most one could be
 * updated in place) are filled instead of copied: no reads. Drops them from the copy lists. */
static CJ_MUST_USE cj_status splat_inits(cj_lw *L, cj_op *op, int32_t n, const int32_t *init,
                                         const int32_t *carried, int32_t *ncopy, int32_t *csrc,
                                         int32_t *cdst) {
  int32_t m = 0, leaf = 0;
  for (uint32_t i = 0; i < op->nopnds; i++) {
    const cj_type *t = op->operands[i]->type;
    int32_t nl = cj_lw_type_leaves(t);
    int es = nl == 1 && t->kind == CJ_TYPE_TENSOR ? cj_dtype_bytes(t->dtype) : 0;
    int64_t bytes = es ? cj_lw_type_bytes(t) : 0;
    const char *b = bytes >= (64 << 10) ? cj_lw_const_bytes(L, init[leaf]) : NULL;
    if (b && carried[leaf] != init[leaf] && memcmp(b, b + es, (size_t)(bytes - es)) == 0) {
      char elem[32];
      memcpy(elem, b, (size_t)es);
      CJ_RETURN_IF_ERROR(cj_lw_emit_fill(L, op, elem, es, bytes / es, carried[leaf]));
      for (int32_t j = 0; j < *ncopy; j++)
        if (cdst[j] == carried[leaf]) cdst[j] = -1;
    }
    leaf += nl;
  }
  if (leaf != n) return cj_internal("leaf count mismatch");
  for (int32_t j = 0; j < *ncopy; j++)
    if (cdst[j] >= 0) {
      csrc[m] = csrc[j];
      cdst[m++] = cdst[j];
    }
  *ncopy = m;
  return NULL;
}

cj_status cj_lower_while(cj_lw *L, cj_op *op) {
  if (op->nregions != 2) return cj_op_error(op, CJ_INVALID_ARGUMENT, "while needs 2 regions");
  cj_block *cb = op->regions[0].first, *bb = op->regions[1].first;
  if (!cb || !bb) return cj_op_error(op, CJ_INVALID_ARGUMENT, "while regions need a block");
  int32_t *init = malloc(sizeof(int32_t) * MAX_LEAVES * 9);
  if (!init) return cj_oom();
  int32_t *carried = init + MAX_LEAVES, *ret = init + 2 * MAX_LEAVES;
  int32_t *sw_r = init + 5 * MAX_LEAVES, *sw_c = init + 6 * MAX_LEAVES, nsw = 0;
  int32_t *keep = init + 7 * MAX_LEAVES; /* 2 * MAX_LEAVES */
  int32_t n = 0, nr = 0;
  cj_status st = operand_leaves(L, op, init, MAX_LEAVES, &n);
  /* carried buffers, initialized by copies (in place when an init dies here); invariant
   * leaves are their initial buffers */
  int32_t ncopy = 0, *csrc = init + 3 * MAX_LEAVES, *cdst = init + 4 * MAX_LEAVES;
  for (int32_t i = 0; !st && i < n; i++) {
    if (invariant_leaf(op, bb, n, i)) {
      carried[i] = init[i];
      continue;
    }
    carried[i] = cj_lw_new_buf(L, cj_lw_buf_at(L, init[i])->size, CJ_BK_ARENA);
    cj_lw_hint_inplace(L, carried[i], init[i]);
    csrc[ncopy] = init[i];
    cdst[ncopy++] = carried[i];
  }
  int32_t start = cj_lw_pos(L);
  if (!st) st = splat_inits(L, op, n, init, carried, &ncopy, csrc, cdst);
  if (!st) {
    if (ncopy) {
      st = cj_lw_emit_copies(L, op, (uint32_t)ncopy, csrc, cdst);
    } else {
      cj_lw_advance(L);
    }
  }
  while_params *p = cj_lw_alloc(L, sizeof *p);
  if (!st && !p) st = cj_oom();
  if (!st) st = bind_values(L, cb->args, cb->nargs, carried, n);
  if (!st) st = bind_values(L, bb->args, bb->nargs, carried, n);
  /* condition */
  int32_t pred = -1;
  uint32_t cmark = cj_lw_slot_mark(L);
  if (!st) st = cj_lw_value_plan(L, op, cb, "the condition", &p->cond[0], &pred);
  bool swappable = !st && cj_lw_plan_self_contained(L, &p->cond[0], cmark, cj_lw_slot_mark(L));
  /* body, ending with copies of its results into the carried buffers */
  if (!st) {
    cj_lw_saved saved;
    cj_lw_plan_begin(L, &saved);
    cj_op *term = NULL;
    int32_t body_start = cj_lw_pos(L);
    uint32_t bmark = cj_lw_slot_mark(L);
    st = cj_lw_block(L, bb, &term);
    if (!st && !term) st = cj_op_error(op, CJ_INVALID_ARGUMENT, "the body has no terminator");
    if (!st) st = term_leaves(L, term, ret, MAX_LEAVES, &nr);
    if (!st && nr != n) st = cj_op_error(op, CJ_INVALID_ARGUMENT, "the body returns %d values, expected %d", nr, n);
    /* Copy elision: a result computed in the body after the last read of its carried value
     * is written straight into the carried buffer (e.g. a dynamic_update_slice of the carried
     * array updates it in place), instead of into a temporary copied back every iteration. */
    for (int32_t i = 0; !st && i < n; i++) {
      int32_t r = ret[i], c = carried[i];
      if (r == c) continue;
      cj_lw_buf *rb = cj_lw_buf_at(L, r), *cb = cj_lw_buf_at(L, c);
      if (rb->kind != CJ_BK_ARENA || rb->merged >= 0 || rb->def < body_start || rb->size != cb->size)
        continue;
      bool unique = true;
      for (int32_t j = 0; j < n; j++)
        if (j != i && (ret[j] == r || ret[j] == c)) unique = false;
      if (!unique) continue;
      if (cb->last > rb->def) continue;
      if (cb->last == rb->def && !cj_lw_has_hint(L, r, c, rb->def)) continue;
      cj_lw_merge(L, r, c);
      ret[i] = c;
    }
    /* the remaining copies: double-buffered where the plans reach buffers by their slots */
    if (!st && swappable && cj_lw_plan_self_contained(L, NULL, bmark, cj_lw_slot_mark(L)))
      nsw = pick_swaps(L, n, ret, carried, init, body_start, pred, sw_r, sw_c);
    if (!st) st = parallel_copy(L, term, n, ret, carried);
    st = cj_lw_plan_finish(L, &saved, &p->body[0], st);
  }
  if (!st && nsw) st = plan_swaps(L, op, p, nsw, sw_r, sw_c);
  if (!st) {
    for (int32_t i = 0; i < n; i++)
      if (carried[i] != init[i]) cj_lw_def_at(L, carried[i], start);
    /* the driver reads the predicate and keeps the carried buffers (and their doubles) alive */
    memcpy(keep, carried, sizeof(int32_t) * (size_t)n);
    for (int32_t i = 0; i < nsw; i++) {
      cj_lw_def_at(L, sw_r[i], start);
      keep[n + i] = sw_r[i];
    }
    st = emit_driver(L, op, k_while, p, pred, n + nsw, keep);
  }
  if (!st) st = bind_values(L, op->results, op->nresults, carried, n);
  if (!st) cj_lw_extend_region(L, start);
  free(init);
  return st;
}

/* ======================================================================== if / case */

typedef struct branch_params {
  int32_t n;
  cj_plan *branches;
  cj_dtype idx_dt; /* case: the index type; if: PRED */
  bool is_if;
} branch_params;

static CJ_MUST_USE cj_status k_branch(cj_exec_ctx *ctx, const cj_step *st) {
  const branch_params *p = st->params;
  const char *sel = CJ_PTR(ctx, st->in[0]);
  int64_t b;
  if (p->is_if) {
    b = *sel ? 0 : 1;
  } else {
    b = cj_elem_get_i64(p->idx_dt, sel, 0);
    if (b < 0 || b >= p->n) b = p->n - 1; /* out of range: the last branch */
  }
  return cj_plan_run(ctx, &p->branches[b]);
}

static CJ_MUST_USE cj_status lower_branches(cj_lw *L, cj_op *op, bool is_if) {
  cj_lw_tensor sel;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &sel));
  if (sel.nelems != 1) return cj_op_error(op, CJ_INVALID_ARGUMENT, "the selector must be a scalar");
  if (is_if && op->nregions != 2) return cj_op_error(op, CJ_INVALID_ARGUMENT, "if needs 2 regions");
  if (!is_if && op->nregions < 1) return cj_op_error(op, CJ_INVALID_ARGUMENT, "case needs branches");
  branch_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  p->n = (int32_t)op->nregions;
  p->is_if = is_if;
  p->idx_dt = sel.dtype;
  p->branches = cj_lw_alloc(L, sizeof(cj_plan) * op->nregions);
  if (!p->branches) return cj_oom();
  int32_t start = cj_lw_advance(L);
  /* result leaves */
  int32_t nleaves = 0;
  for (uint32_t i = 0; i < op->nresults; i++) nleaves += cj_lw_type_leaves(op->results[i].type);
  int32_t *res = malloc(sizeof(int32_t) * (size_t)(nleaves + 1) * 2);
  if (!res) return cj_oom();
  int32_t *ret = res + nleaves + 1;
  cj_status st = NULL;
  {
    int32_t k = 0;
    for (uint32_t i = 0; !st && i < op->nresults; i++) {
      const cj_type *lt[MAX_LEAVES / 8];
      int32_t c;
      st = cj_lw_leaf_types(op->results[i].type, lt, MAX_LEAVES / 8, &c);
      for (int32_t j = 0; !st && j < c; j++) {
        int64_t bytes = cj_lw_type_bytes(lt[j]);
        if (bytes < 0) st = cj_op_error(op, CJ_UNIMPLEMENTED, "dynamic result type");
        else {
          res[k] = cj_lw_new_buf(L, bytes, CJ_BK_ARENA);
          cj_lw_def_at(L, res[k], start);
          k++;
        }
      }
    }
  }
  for (uint32_t r = 0; !st && r < op->nregions; r++) {
    cj_block *b = op->regions[r].first;
    cj_lw_saved saved;
    cj_lw_plan_begin(L, &saved);
    cj_op *term = NULL;
    int32_t n = 0;
    if (!b) st = cj_op_error(op, CJ_INVALID_ARGUMENT, "empty branch");
    if (!st) st = cj_lw_block(L, b, &term);
    if (!st && !term) st = cj_op_error(op, CJ_INVALID_ARGUMENT, "branch without terminator");
    if (!st) st = term_leaves(L, term, ret, nleaves + 1, &n);
    if (!st && n != nleaves) st = cj_op_error(op, CJ_INVALID_ARGUMENT, "branch %u returns %d values, expected %d", r, n, nleaves);
    if (!st) st = parallel_copy(L, term, n, ret, res);
    st = cj_lw_plan_finish(L, &saved, &p->branches[r], st);
  }
  if (!st) st = emit_driver(L, op, k_branch, p, sel.buf, nleaves, res);
  if (!st) st = bind_values(L, op->results, op->nresults, res, nleaves);
  if (!st) cj_lw_extend_region(L, start);
  free(res);
  return st;
}

cj_status cj_lower_if(cj_lw *L, cj_op *op) { return lower_branches(L, op, true); }
cj_status cj_lower_case(cj_lw *L, cj_op *op) { return lower_branches(L, op, false); }
