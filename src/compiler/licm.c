/* cjrt: loop-invariant elementwise ops moved out of while bodies.
 *
 * A loop body often computes from values that do not change across iterations: a Jacobi sweep
 * 0.25 * (neighbours + h2 * f) scales the fixed right-hand side f on every sweep, where f is a
 * carried value the body returns unchanged or a value from outside the loop. An elementwise op
 * of the body's top level whose operands are all loop-invariant, and at least one of them an
 * array computed, passed in or constant (not only splat constants, iotas and broadcasts or
 * reshapes of such, which the backend reads as views at no cost), moves before the while; its
 * result is then computed once, as XLA's while-loop invariant code motion does, and read by
 * the body from outside (values computed the same way: the same bits). The constants,
 * broadcasts and reshapes it reads are copied out with it. Chains of such ops move together.
 * Only pure ops move (no side effects, no regions); a loop that runs zero times then costs the
 * work once. Nested whiles are done first, so that an op can leave several levels in turn.
 */
#include <stdlib.h>

#include "compiler/compiler.h"

/* whether op lies (at any depth) inside a region of w */
static bool op_inside(const cj_op *op, const cj_op *w) {
  for (const cj_block *b = op->block; b && b->region && b->region->op;) {
    const cj_op *o = b->region->op;
    if (o == w) return true;
    b = o->block;
  }
  return false;
}

static bool value_inside(const cj_value *v, const cj_op *w) {
  if (v->def) return op_inside(v->def, w);
  const cj_op *o = v->block && v->block->region ? v->block->region->op : NULL;
  return o && (o == w || op_inside(o, w));
}

/* what the pass knows about an op of the body (cj_op.scratch) */
enum { LI_VARIANT = 0, LI_VIEW, LI_MOVED };
typedef struct li_op {
  int kind;
  bool real;   /* LI_VIEW: a reshape of an array worth computing from (li_real) */
  cj_op *copy; /* LI_VIEW: its copy before the while, once made */
} li_op;

typedef struct li_loop {
  cj_module *m;
  cj_op *w;
  cj_block *body;
  const bool *inv; /* per body argument: returned unchanged */
} li_loop;

static li_op *li_of(const li_loop *L, const cj_value *v) {
  return v->def && v->def->block == L->body ? v->def->scratch : NULL;
}

/* whether v keeps its value across iterations */
static bool li_invariant(const li_loop *L, const cj_value *v) {
  if (!value_inside(v, L->w)) return true;
  if (!v->def) return v->block == L->body && L->inv[v->index];
  const li_op *r = li_of(L, v);
  return r && r->kind != LI_VARIANT;
}

/* whether v is a constant of one repeated element (the backend reads it as a scalar) */
static bool li_splat(const cj_value *v) {
  if (!v->def || v->def->kind != CJ_OP_CONSTANT) return false;
  const cj_attr *a = cj_op_attr(v->def, "value");
  return a && a->kind == CJ_ATTR_DENSE &&
         (a->dense.splat || (cj_type_is_static(v->type) && v->type->num_elements == 1));
}

/* an invariant array worth computing from once: not a splat constant, an iota, a broadcast or
 * a view of one */
static bool li_real(const li_loop *L, const cj_value *v) {
  const li_op *r = li_of(L, v);
  if (r) return r->kind == LI_MOVED || r->real;
  if (!v->def) return true;
  cj_op_kind k = v->def->kind;
  return k != CJ_OP_IOTA && k != CJ_OP_BROADCAST_IN_DIM && !li_splat(v);
}

/* the value before the while that invariant v equals (copying views out); NULL on OOM */
static cj_value *li_outer(li_loop *L, cj_value *v) {
  if (!value_inside(v, L->w)) return v;
  if (!v->def) return L->w->operands[v->index];
  li_op *r = v->def->scratch;
  if (!r->copy) {
    cj_op *d = v->def;
    cj_value *from[4], *to[4];
    if (d->nopnds > 4) return NULL;
    for (uint32_t i = 0; i < d->nopnds; i++) {
      from[i] = d->operands[i];
      to[i] = li_outer(L, d->operands[i]);
      if (!to[i]) return NULL;
    }
    r->copy = cj_op_clone(L->m, d, d->nopnds, from, to);
    if (!r->copy) return NULL;
    cj_block_insert_before(L->w->block, L->w, r->copy);
  }
  return &r->copy->results[v->index];
}

static bool li_view_kind(const cj_op *op) {
  switch (op->kind) {
    case CJ_OP_CONSTANT:
    case CJ_OP_IOTA:
    case CJ_OP_BROADCAST_IN_DIM:
    case CJ_OP_RESHAPE: return op->nregions == 0 && op->nresults == 1 && op->nopnds <= 1;
    default: return false;
  }
}

static bool li_movable_kind(const cj_op *op) {
  uint32_t flags = cj_op_info_get(op->kind)->flags;
  return (flags & CJ_OPF_ELEMENTWISE) && !(flags & (CJ_OPF_SIDE_EFFECT | CJ_OPF_TERMINATOR)) &&
         op->kind != CJ_OP_UNKNOWN && op->nregions == 0 && op->nresults == 1 && op->nopnds <= 4;
}

/* classifies op and moves it before the while when it qualifies; false on OOM */
static bool li_visit(li_loop *L, cj_op *op, li_op *r) {
  r->kind = LI_VARIANT;
  r->real = false;
  r->copy = NULL;
  op->scratch = r;
  bool inv = true, real = false;
  for (uint32_t i = 0; i < op->nopnds; i++) {
    inv = inv && li_invariant(L, op->operands[i]);
    real = real || li_real(L, op->operands[i]);
  }
  if (!inv) return true;
  if (li_view_kind(op)) {
    r->kind = LI_VIEW;
    r->real = (op->kind == CJ_OP_RESHAPE && real) ||
              (op->kind == CJ_OP_CONSTANT && !li_splat(&op->results[0]));
    return true;
  }
  if (!real || !li_movable_kind(op)) return true;
  for (uint32_t i = 0; i < op->nopnds; i++) {
    cj_value *o = li_outer(L, op->operands[i]);
    if (!o) return false;
    cj_op_set_operand(op, i, o);
  }
  cj_block_remove(L->body, op);
  cj_block_insert_before(L->w->block, L->w, op);
  r->kind = LI_MOVED;
  return true;
}

static CJ_MUST_USE cj_status li_while(cj_module *m, cj_op *w) {
  cj_block *bb = w->nregions == 2 ? w->regions[1].first : NULL;
  cj_op *term = bb ? cj_block_terminator(bb) : NULL;
  if (!bb || bb->next || !term || term->nopnds != bb->nargs || bb->nargs != w->nopnds)
    return NULL;
  bool *inv = calloc(bb->nargs ? bb->nargs : 1, sizeof *inv);
  li_op *recs = calloc(bb->nops ? bb->nops : 1, sizeof *recs);
  if (!inv || !recs) {
    free(inv);
    free(recs);
    return cj_oom();
  }
  for (uint32_t i = 0; i < bb->nargs; i++) inv[i] = term->operands[i] == &bb->args[i];
  li_loop L = {m, w, bb, inv};
  bool ok = true;
  uint32_t k = 0, n = bb->nops;
  for (cj_op *op = bb->first, *next; op && op != term && ok && k < n; op = next, k++) {
    next = op->next;
    ok = li_visit(&L, op, &recs[k]);
  }
  for (cj_op *op = bb->first; op; op = op->next) op->scratch = NULL;
  for (cj_op *op = w->block->first; op; op = op->next) op->scratch = NULL;
  free(inv);
  free(recs);
  return ok ? NULL : cj_oom();
}

static CJ_MUST_USE cj_status li_block(cj_module *m, cj_block *b) {
  for (cj_op *op = b->first; op; op = op->next) {
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next)
        CJ_RETURN_IF_ERROR(li_block(m, nb));
    if (op->kind == CJ_OP_WHILE) CJ_RETURN_IF_ERROR(li_while(m, op));
  }
  return NULL;
}

cj_status cj_pass_licm(cj_module *m, cj_op *func) {
  cj_block *body = cj_func_body(func);
  return body ? li_block(m, body) : NULL;
}
