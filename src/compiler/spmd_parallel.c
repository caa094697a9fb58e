/* cjrt: interpreter.run_parallel made self-contained (see spmd.h). */
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "compiler/spmd.h"

/* A growing map of values for cloning a body. */
typedef struct vmap {
  cj_value **from, **to;
  uint32_t n, cap;
} vmap;

static bool vmap_add(vmap *v, cj_value *from, cj_value *to) {
  if (v->n == v->cap) {
    uint32_t cap = v->cap ? v->cap * 2 : 64;
    cj_value **f = realloc(v->from, sizeof(cj_value *) * cap);
    if (!f) return false;
    v->from = f;
    cj_value **t = realloc(v->to, sizeof(cj_value *) * cap);
    if (!t) return false;
    v->to = t;
    v->cap = cap;
  }
  v->from[v->n] = from;
  v->to[v->n++] = to;
  return true;
}

/* Clones every op of `body` (its terminator included) into block `into`, whose arguments stand
 * for body's. */
static CJ_MUST_USE cj_status clone_into(cj_module *m, cj_block *body, cj_block *into) {
  vmap v = {0};
  cj_status st = NULL;
  for (uint32_t i = 0; i < body->nargs && !st; i++)
    if (!vmap_add(&v, &body->args[i], &into->args[i])) st = cj_oom();
  for (cj_op *o = body->first; o && !st; o = o->next) {
    cj_op *c = cj_op_clone(m, o, v.n, v.from, v.to);
    if (!c) {
      st = cj_oom();
      break;
    }
    cj_block_append(into, c);
    for (uint32_t i = 0; i < o->nresults && !st; i++)
      if (!vmap_add(&v, &o->results[i], &c->results[i])) st = cj_oom();
  }
  free(v.from);
  free(v.to);
  return st;
}

static const char *program_name(const cj_attr *a) {
  if (!a || a->kind != CJ_ATTR_SYMREF || a->sym.nnested) return NULL;
  return a->sym.root;
}

static CJ_MUST_USE cj_status prepare(cj_module *m, cj_op *func, cj_op *op) {
  if (op->nregions > 0) return NULL; /* already prepared */
  if (cj_op_attr(op, "infeed"))
    return cj_op_error(op, CJ_UNIMPLEMENTED,
                       "run_parallel with infeed queues is not supported (cjrt has no infeed)");
  const cj_attr *progs = cj_op_attr(op, "programs");
  if (!progs || progs->kind != CJ_ATTR_ARRAY || progs->arr.n < 1)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "programs must be a non-empty array of arrays");
  int32_t nr = progs->arr.n, np = -1;
  for (int32_t r = 0; r < nr; r++) {
    const cj_attr *row = progs->arr.items[r];
    if (!row || row->kind != CJ_ATTR_ARRAY || row->arr.n < 1 || (np >= 0 && row->arr.n != np))
      return cj_op_error(op, CJ_INVALID_ARGUMENT,
                         "programs must be an array of equally long, non-empty arrays of "
                         "function symbols (one row per replica, one entry per partition)");
    np = row->arr.n;
  }
  if ((int64_t)nr * np > 4096)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "more than 4096 processes");
  uint32_t nproc = (uint32_t)(nr * np);
  cj_op *n = cj_op_create(m, op->kind, op->name, op->nopnds, op->nresults, nproc);
  if (!n) return cj_oom();
  for (uint32_t i = 0; i < op->nopnds; i++) cj_op_set_operand(n, i, op->operands[i]);
  for (uint32_t i = 0; i < op->nresults; i++) n->results[i].type = op->results[i].type;
  for (uint32_t i = 0; i < op->nattrs; i++)
    CJ_RETURN_IF_ERROR(cj_op_set_attr(m, n, op->attrs[i].name, op->attrs[i].value));
  int64_t grid[2] = {nr, np};
  const cj_attr *ga = cj_attr_i64_array(m, 2, grid);
  if (!ga) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, n, "cj.grid", ga));
  n->pos = op->pos;
  n->loc = op->loc;
  uint32_t opi = 0, resi = 0;
  for (uint32_t k = 0; k < nproc; k++) {
    const cj_attr *sym = progs->arr.items[k / (uint32_t)np]->arr.items[k % (uint32_t)np];
    const char *name = program_name(sym);
    if (!name)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "program %u is not a function symbol", k);
    cj_op *f = cj_module_lookup_symbol(m, name);
    cj_block *body = f && f->kind == CJ_OP_FUNC ? cj_func_body(f) : NULL;
    const cj_type *ft = f ? cj_func_type(f) : NULL;
    if (!body || !ft)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "program @%s is not a function with a body",
                         name);
    if (opi + (uint32_t)ft->rank > op->nopnds || resi + (uint32_t)ft->nresults > op->nresults)
      return cj_op_error(op, CJ_INVALID_ARGUMENT,
                         "the programs take more arguments or return more values than the op "
                         "has operands or results (at program %u, @%s)",
                         k, name);
    for (int32_t i = 0; i < ft->rank; i++)
      if (cj_type_fn_input(ft, i) != op->operands[opi + (uint32_t)i]->type)
        return cj_op_error(op, CJ_INVALID_ARGUMENT,
                           "operand %u does not have the type of argument %d of @%s", opi + i, i,
                           name);
    for (int32_t i = 0; i < ft->nresults; i++)
      if (cj_type_fn_result(ft, i) != op->results[resi + (uint32_t)i].type)
        return cj_op_error(op, CJ_INVALID_ARGUMENT,
                           "result %u does not have the type of result %d of @%s", resi + i, i,
                           name);
    cj_block *b = cj_region_add_block(m, &n->regions[k], (uint32_t)ft->rank, ft->members);
    if (!b) return cj_oom();
    CJ_RETURN_IF_ERROR(clone_into(m, body, b));
    opi += (uint32_t)ft->rank;
    resi += (uint32_t)ft->nresults;
  }
  if (opi != op->nopnds || resi != op->nresults)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "the programs take %u arguments and return %u values, but the op has %u "
                       "operands and %u results",
                       opi, resi, op->nopnds, op->nresults);
  cj_block_insert_before(op->block, op, n);
  for (uint32_t i = 0; i < op->nresults; i++) cj_replace_all_uses(func, &op->results[i], &n->results[i]);
  cj_block_remove(op->block, op);
  return NULL;
}

static CJ_MUST_USE cj_status prepare_block(cj_module *m, cj_op *func, cj_block *b) {
  for (cj_op *op = b->first; op;) {
    cj_op *next = op->next;
    if (op->kind == CJ_OP_INTERP_RUN_PARALLEL) {
      CJ_RETURN_IF_ERROR(prepare(m, func, op));
    } else {
      for (uint32_t r = 0; r < op->nregions; r++)
        for (cj_block *nb = op->regions[r].first; nb; nb = nb->next)
          CJ_RETURN_IF_ERROR(prepare_block(m, func, nb));
    }
    op = next;
  }
  return NULL;
}

cj_status cj_pass_run_parallel(cj_module *m, cj_op *func) {
  cj_block *b = cj_func_body(func);
  return b ? prepare_block(m, func, b) : NULL;
}
