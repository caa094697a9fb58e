/* cjrt reference backend: the interpreter's core. Walks a block's ops in order, keeping one value
 * per SSA value (cj_value.id, numbered at compile time) in the execution's environment, and
 * dispatches each op to the file of its family. Regions (while bodies, branches, reduction
 * bodies, comparators) are run recursively; regions made of scalar elementwise ops only run on
 * scalars (rs) without allocating. */
#include <stdlib.h>
#include <string.h>

#include "reference/ref.h"

/* ---------------------------------------------------------------- numbering */

cj_status cj_rf_number_values(cj_program *p) {
  uint32_t n = 0;
  cj_block *b = cj_func_body(p->main);
  if (!b) return cj_invalid("reference backend: the entry function has no body");
  cj_block_number_values(b, &n);
  p->nvalues = n;
  return NULL;
}

/* ---------------------------------------------------------------- environment */

rv *cj_rf_in(rf_exec *x, const cj_op *op, uint32_t i) { return x->env[op->operands[i]->id]; }

static void env_set(rf_exec *x, const cj_value *v, rv *val) {
  cj_rv_free(x->env[v->id]);
  x->env[v->id] = val;
}

void cj_rf_free_results(rv **res, uint32_t n) {
  if (!res) return;
  for (uint32_t i = 0; i < n; i++) cj_rv_free(res[i]);
  free(res);
}

static CJ_MUST_USE cj_status exec_op(rf_exec *x, cj_op *op);

/* Runs block b with args (borrowed: cloned into the environment); *results are fresh values of
 * the terminator's operands. */
cj_status cj_rf_run_block(rf_exec *x, cj_block *b, rv **args, uint32_t nargs, rv ***results,
                       uint32_t *nresults) {
  *results = NULL;
  *nresults = 0;
  if (nargs != b->nargs) return cj_internal("reference backend: block takes %u arguments, given %u", b->nargs, nargs);
  for (uint32_t i = 0; i < nargs; i++) {
    rv *c;
    CJ_RETURN_IF_ERROR(cj_rv_clone(args[i], &c));
    env_set(x, &b->args[i], c);
  }
  cj_op *term = NULL;
  for (cj_op *op = b->first; op; op = op->next) {
    if (cj_op_info_get(op->kind)->flags & CJ_OPF_TERMINATOR) {
      term = op;
      break;
    }
    CJ_RETURN_IF_ERROR(exec_op(x, op));
  }
  if (!term) return cj_internal("reference backend: block without a terminator");
  rv **res = calloc(term->nopnds + 1, sizeof(rv *));
  if (!res) return cj_oom();
  for (uint32_t i = 0; i < term->nopnds; i++) {
    cj_status st = cj_rv_clone(cj_rf_in(x, term, i), &res[i]);
    if (st) {
      cj_rf_free_results(res, term->nopnds);
      return st;
    }
  }
  *results = res;
  *nresults = term->nopnds;
  return NULL;
}

/* ---------------------------------------------------------------- scalar regions */

static bool scalar_block(const cj_block *b) {
  for (const cj_op *op = b->first; op; op = op->next) {
    if (op->kind == CJ_OP_RETURN) continue;
    if (op->nregions || op->nresults != 1 || !cj_type_is_static(op->results[0].type) ||
        op->results[0].type->num_elements != 1)
      return false;
    if (op->kind == CJ_OP_CONSTANT) continue;
    if (!cj_rf_is_ew(op->kind)) return false;
    for (uint32_t i = 0; i < op->nopnds; i++)
      if (!cj_type_is_static(op->operands[i]->type) || op->operands[i]->type->num_elements != 1)
        return false;
  }
  return true;
}

/* a scalar region's value: its slot, or element 0 of a value defined outside the region */
static rs scalar_of(rf_exec *x, const cj_block *b, const cj_value *v) {
  bool inner = v->def ? v->def->block == b : v->block == b;
  const rv *outer = inner ? NULL : x->env[v->id];
  return outer ? cj_rs_get(outer->dt, outer->data, 0) : x->senv[v->id];
}

cj_status cj_rf_call_scalar(rf_exec *x, cj_block *b, const rs *args, rs *res) {
  if (scalar_block(b)) {
    rs *s = x->senv;
    for (uint32_t i = 0; i < b->nargs; i++) s[b->args[i].id] = args[i];
    for (cj_op *op = b->first; op; op = op->next) {
      if (op->kind == CJ_OP_RETURN) {
        for (uint32_t i = 0; i < op->nopnds; i++) res[i] = scalar_of(x, b, op->operands[i]);
        return NULL;
      }
      if (op->kind == CJ_OP_CONSTANT) {
        const cj_attr *v = cj_op_attr(op, "value");
        if (!v || v->kind != CJ_ATTR_DENSE) return cj_op_error(op, CJ_INVALID_ARGUMENT, "constant without a value");
        s[op->results[0].id] = cj_rs_get(op->results[0].type->dtype, v->dense.data, 0);
        continue;
      }
      rs a[4];
      for (uint32_t i = 0; i < op->nopnds && i < 4; i++) a[i] = scalar_of(x, b, op->operands[i]);
      rs r;
      CJ_RETURN_IF_ERROR(cj_rf_ew_scalar(op, a, &r));
      s[op->results[0].id] = cj_rs_round(op->results[0].type->dtype, r); /* as a tensor would hold it */
    }
    return cj_internal("reference backend: region without a terminator");
  }
  /* the general path: rank-0 tensors through the block */
  rv **in = calloc(b->nargs + 1, sizeof(rv *));
  if (!in) return cj_oom();
  cj_status st = NULL;
  for (uint32_t i = 0; i < b->nargs && !st; i++) {
    st = cj_rv_new_type(b->args[i].type, &in[i]);
    if (!st) cj_rs_set(in[i]->dt, in[i]->data, 0, args[i]);
  }
  rv **out = NULL;
  uint32_t nout = 0;
  if (!st) st = cj_rf_run_block(x, b, in, b->nargs, &out, &nout);
  for (uint32_t i = 0; i < nout && !st; i++) res[i] = cj_rs_get(out[i]->dt, out[i]->data, 0);
  cj_rf_free_results(out, nout);
  cj_rf_free_results(in, b->nargs);
  return st;
}

/* ---------------------------------------------------------------- control flow */

static bool truth(const rv *v) { return v && v->kind == RV_TENSOR && v->n >= 1 && v->data[0] != 0; }

static CJ_MUST_USE cj_status bind_results(rf_exec *x, cj_op *op, rv **res, uint32_t n) {
  if (n != op->nresults) {
    cj_rf_free_results(res, n);
    return cj_op_error(op, CJ_INTERNAL, "region returned %u values for %u results", n, op->nresults);
  }
  for (uint32_t i = 0; i < n; i++) {
    env_set(x, &op->results[i], res[i]);
    res[i] = NULL;
  }
  free(res);
  return NULL;
}

cj_status cj_rf_x_while(rf_exec *x, cj_op *op) {
  uint32_t n = op->nopnds;
  rv **cur = calloc(n + 1, sizeof(rv *));
  if (!cur) return cj_oom();
  cj_status st = NULL;
  for (uint32_t i = 0; i < n && !st; i++) st = cj_rv_clone(cj_rf_in(x, op, i), &cur[i]);
  cj_block *cond = op->regions[0].first, *body = op->regions[1].first;
  while (!st) {
    rv **c = NULL;
    uint32_t nc = 0;
    st = cj_rf_run_block(x, cond, cur, n, &c, &nc);
    if (st) break;
    bool go = nc == 1 && truth(c[0]);
    cj_rf_free_results(c, nc);
    if (!go) break;
    rv **next = NULL;
    uint32_t nn = 0;
    st = cj_rf_run_block(x, body, cur, n, &next, &nn);
    if (st) break;
    if (nn != n) {
      cj_rf_free_results(next, nn);
      st = cj_op_error(op, CJ_INTERNAL, "while body returned %u values for %u", nn, n);
      break;
    }
    cj_rf_free_results(cur, n);
    cur = next;
  }
  if (st) {
    cj_rf_free_results(cur, n);
    return st;
  }
  return bind_results(x, op, cur, n);
}

static CJ_MUST_USE cj_status exec_branch(rf_exec *x, cj_op *op, uint32_t r) {
  rv **res = NULL;
  uint32_t n = 0;
  CJ_RETURN_IF_ERROR(cj_rf_run_block(x, op->regions[r].first, NULL, 0, &res, &n));
  return bind_results(x, op, res, n);
}

cj_status cj_rf_x_map(rf_exec *x, cj_op *op, rv **ins, rv **outs) {
  rv *out = outs[0];
  cj_block *b = op->regions[0].first;
  rs a[16], r;
  if (op->nopnds > 16) return cj_op_error(op, CJ_UNIMPLEMENTED, "map of more than 16 operands");
  for (int64_t i = 0; i < out->n; i++) {
    for (uint32_t k = 0; k < op->nopnds; k++) {
      rv *in = cj_rf_in(x, op, k);
      a[k] = cj_rs_get(in->dt, in->data, i);
    }
    CJ_RETURN_IF_ERROR(cj_rf_call_scalar(x, b, a, &r));
    cj_rs_set(out->dt, out->data, i, r);
  }
  return NULL;
}

cj_status cj_rf_x_if(rf_exec *x, cj_op *op) { return exec_branch(x, op, truth(cj_rf_in(x, op, 0)) ? 0 : 1); }

cj_status cj_rf_x_case(rf_exec *x, cj_op *op) {
  rv *ix = cj_rf_in(x, op, 0);
  int64_t k = cj_rf_geti(ix->dt, ix->data, 0);
  if (k < 0 || k >= (int64_t)op->nregions) k = op->nregions - 1;
  return exec_branch(x, op, (uint32_t)k);
}

/* ---------------------------------------------------------------- tuples */

cj_status cj_rf_x_tuple(rf_exec *x, cj_op *op) {
  rv *t = calloc(1, sizeof *t);
  if (!t) return cj_oom();
  t->kind = RV_TUPLE;
  t->nmem = (int32_t)op->nopnds;
  t->mem = calloc(op->nopnds + 1, sizeof(rv *));
  if (!t->mem) {
    free(t);
    return cj_oom();
  }
  for (uint32_t i = 0; i < op->nopnds; i++) {
    cj_status st = cj_rv_clone(cj_rf_in(x, op, i), &t->mem[i]);
    if (st) {
      cj_rv_free(t);
      return st;
    }
  }
  env_set(x, &op->results[0], t);
  return NULL;
}

cj_status cj_rf_x_get_tuple_element(rf_exec *x, cj_op *op) {
  rv *t = cj_rf_in(x, op, 0);
  int64_t k = 0;
  cj_op_get_i64(op, "index", &k);
  if (t->kind != RV_TUPLE || k < 0 || k >= t->nmem)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "get_tuple_element index %lld out of range", (long long)k);
  rv *c;
  CJ_RETURN_IF_ERROR(cj_rv_clone(t->mem[k], &c));
  env_set(x, &op->results[0], c);
  return NULL;
}

/* optimization_barrier and the sharding annotations: results are the operands */
cj_status cj_rf_x_identity(rf_exec *x, cj_op *op) {
  for (uint32_t i = 0; i < op->nresults; i++) {
    rv *c;
    CJ_RETURN_IF_ERROR(cj_rv_clone(cj_rf_in(x, op, i), &c));
    env_set(x, &op->results[i], c);
  }
  return NULL;
}

/* ---------------------------------------------------------------- dispatch */

typedef cj_status rf_run_fn(rf_exec *x, cj_op *op, rv **ins, rv **outs);
typedef cj_status rf_bind_fn(rf_exec *x, cj_op *op);

/* ref.def's rows by op kind: run (results allocated here) or bind (binds its own results) */
static const struct {
  rf_run_fn *run;
  rf_bind_fn *bind;
} rows[CJ_OP_COUNT] = {
#define REF(OP, fn) [CJ_OP_##OP] = {fn, NULL},
#define REF_IF(OP, fn, can) [CJ_OP_##OP] = {fn, NULL},
#define REF_BIND(OP, fn) [CJ_OP_##OP] = {NULL, fn},
#define REF_EW(OP, i, f, c, b) [CJ_OP_##OP] = {cj_rf_ew, NULL},
#define REF_EWT(OP, i, f, c, b) [CJ_OP_##OP] = {cj_rf_ew, NULL},
#define REF_EW_ANY(OP, fn) [CJ_OP_##OP] = {cj_rf_ew, NULL},
#include "reference/ref.def"
};

static CJ_MUST_USE cj_status exec_op(rf_exec *x, cj_op *op) {
  rf_run_fn *run = (unsigned)op->kind < CJ_OP_COUNT ? rows[op->kind].run : NULL;
  if ((unsigned)op->kind < CJ_OP_COUNT && rows[op->kind].bind) return rows[op->kind].bind(x, op);
  uint32_t nin = op->nopnds, nout = op->nresults;
  rv *ins_small[8], *outs_small[8];
  rv **ins = nin <= 8 ? ins_small : calloc(nin, sizeof(rv *));
  rv **outs = nout <= 8 ? outs_small : calloc(nout, sizeof(rv *));
  cj_status st = (!ins || !outs) ? cj_oom() : NULL;
  for (uint32_t i = 0; i < nin && !st; i++) {
    ins[i] = cj_rf_in(x, op, i);
    if (!ins[i]) st = cj_op_error(op, CJ_INTERNAL, "operand %u has no value", i);
  }
  if (st) {
    if (ins != ins_small) free(ins);
    if (outs != outs_small) free(outs);
    return st;
  }
  for (uint32_t i = 0; i < nout; i++) outs[i] = NULL;
  for (uint32_t i = 0; i < nout && !st; i++) st = cj_rv_new_type(op->results[i].type, &outs[i]);
  if (!st)
    st = run ? run(x, op, ins, outs)
             : cj_op_error(op, CJ_UNIMPLEMENTED, "%s is not supported by the reference backend", op->name);
  for (uint32_t i = 0; i < nout; i++) {
    if (!st)
      env_set(x, &op->results[i], outs[i]);
    else
      cj_rv_free(outs[i]);
  }
  if (ins != ins_small) free(ins);
  if (outs != outs_small) free(outs);
  return st;
}
