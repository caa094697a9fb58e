/* cjrt: an HLO module (hlo.h, read from a proto or from text) lowered into our StableHLO IR.
 *
 * Each HLO value is held as the list of its array leaves: a tuple is the concatenation of its
 * members' leaves, get-tuple-element picks a sub-range, and tuple-shaped parameters, while loops
 * and conditionals carry their leaves one by one. So no tuple type reaches the IR.
 *
 * Computations become what their caller needs: the entry one func.func @main (a tuple root gives
 * several results, as PJRT flattens it); to_apply / condition / body / comparator computations a
 * region (stablehlo.return of the root's leaves); call and fusion computations are inlined where
 * they are called; conditional branches become regions that use the operands directly.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype.h"
#include "frontend/frontend.h"
#include "frontend/hlo.h"

/* MAX_WORK bounds the instructions lowered in all (inlining a computation that calls another
 * twice, nested, would otherwise grow exponentially) */
enum { MAX_COMP_DEPTH = 64, MAX_OPERAND_DEPTH = 256, MAX_WORK = 1 << 22 };

typedef struct vl {
  uint32_t n;
  cj_value **v;
  const hlo_shape *shape;
} vl;

typedef struct lw {
  cj_module *m;
  const hlo_module *h;
  const char *file;
  int depth;
  int64_t work; /* instructions lowered so far */
} lw;

typedef struct idpos {
  int64_t id;
  int32_t i;
} idpos;

typedef struct sc {
  lw *L;
  const hlo_comp *c;
  cj_block *blk;
  const vl *params;
  uint32_t nparams;
  vl *vals;
  uint8_t *state; /* 0 not lowered, 1 in progress, 2 done */
  idpos *ids;
  int odepth;
} sc;

static CJ_MUST_USE cj_status ins_err(const sc *s, const hlo_instr *in, const char *fmt, ...) CJ_PRINTF(3, 4);
static CJ_MUST_USE cj_status ins_err(const sc *s, const hlo_instr *in, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return cj_invalid("hlo: instruction %s (opcode %s) in computation %s: %s", in->name, in->opcode,
                    s->c->name, msg);
}

static CJ_MUST_USE cj_status unsupported(const sc *s, const hlo_instr *in) {
  return cj_unimplemented("hlo: instruction %s (opcode %s) in computation %s is not supported",
                          in->name, in->opcode, s->c->name);
}

/* ------------------------------------------------------------------ shapes and types */

static uint32_t leaf_count(const hlo_shape *sh, int depth) {
  if (sh->etype != HLO_TUPLE) return 1;
  if (depth > 32) return 0;
  uint32_t n = 0;
  for (int32_t i = 0; i < sh->ntuple; i++) n += leaf_count(&sh->tuple[i], depth + 1);
  return n;
}

static CJ_MUST_USE cj_status array_type(lw *L, const hlo_shape *sh, const cj_type **out) {
  *out = NULL;
  if (sh->etype == HLO_TOKEN) {
    *out = cj_type_token(L->m);
    return *out ? NULL : cj_oom();
  }
  cj_dtype dt = cj_dtype_from_xla(sh->etype);
  if (dt == CJ_INVALID || dt == CJ_TOKEN)
    return cj_unimplemented("hlo: element type %d (xla::PrimitiveType) is not supported",
                            (int)sh->etype);
  int32_t rank = sh->dims.n;
  if (rank > 64) return cj_invalid("hlo: a shape of rank %d", rank);
  int64_t dims[64], bounds[64];
  bool dyn = false;
  for (int32_t i = 0; i < rank; i++) {
    if (sh->dims.v[i] < 0) return cj_invalid("hlo: a shape with a negative dimension");
    dims[i] = sh->dims.v[i];
    bounds[i] = CJ_DYN;
    if (i < sh->dynamic.n && sh->dynamic.v[i]) {
      bounds[i] = dims[i];
      dims[i] = CJ_DYN;
      dyn = true;
    }
  }
  const cj_type *elem = cj_type_elem(L->m, dt);
  *out = elem ? cj_type_tensor(L->m, elem, rank, dims, dyn ? bounds : NULL, NULL) : NULL;
  return *out ? NULL : cj_oom();
}

/* the types of a shape's leaves, appended to types[*n] (cap entries) */
static CJ_MUST_USE cj_status leaf_types(lw *L, const hlo_shape *sh, const cj_type **types, uint32_t *n,
                            uint32_t cap, int depth) {
  if (depth > 32) return cj_invalid("hlo: tuple shapes nested too deeply");
  if (sh->etype == HLO_TUPLE) {
    for (int32_t i = 0; i < sh->ntuple; i++)
      CJ_RETURN_IF_ERROR(leaf_types(L, &sh->tuple[i], types, n, cap, depth + 1));
    return NULL;
  }
  if (*n >= cap) return cj_invalid("hlo: more tuple leaves than expected");
  return array_type(L, sh, &types[(*n)++]);
}

static const cj_type **shape_types(lw *L, const hlo_shape *sh, uint32_t *n, cj_status *st) {
  uint32_t cap = leaf_count(sh, 0);
  const cj_type **t = cj_alloc(L->m, sizeof *t * (cap ? cap : 1));
  *n = 0;
  if (!t) {
    *st = cj_oom();
    return NULL;
  }
  *st = leaf_types(L, sh, t, n, cap, 0);
  return *st ? NULL : t;
}

/* ------------------------------------------------------------------ attributes */

static const cj_attr *i64a(lw *L, const hlo_i64s *a) { return cj_attr_i64_array(L->m, a->n, a->v); }
static const cj_attr *i64(lw *L, int64_t v) {
  return cj_attr_int(L->m, v, cj_type_elem(L->m, CJ_S64));
}
static const cj_attr *i32(lw *L, int64_t v) {
  return cj_attr_int(L->m, v, cj_type_elem(L->m, CJ_S32));
}
/* a dense tensor<rows x cols x i64> */
static const cj_attr *dense2(lw *L, int64_t rows, int64_t cols, const int64_t *v) {
  int64_t d[2] = {rows, cols};
  const cj_type *t = cj_type_tensor_of(L->m, CJ_S64, 2, d);
  return t ? cj_attr_dense(L->m, t, v, sizeof(int64_t) * (size_t)(rows * cols), false) : NULL;
}

typedef struct setter {
  lw *L;
  cj_op *op;
  cj_status st;
} setter;

static void set(setter *t, const char *name, const cj_attr *a) {
  if (t->st) return;
  if (!a) {
    t->st = cj_oom();
    return;
  }
  t->st = cj_op_set_attr(t->L->m, t->op, name, a);
}

/* ------------------------------------------------------------------ building ops */

/* One entry of a custom call's operand_layouts / result_layouts: dense<minor_to_major> :
 * tensor<rank x index>; a shape without a layout is row-major. NULL on out-of-memory. */
static const cj_attr *layout_attr(cj_module *m, const hlo_shape *sh) {
  int64_t r = sh->dims.n, mtm[64];
  if (r > 64) return NULL;
  for (int64_t k = 0; k < r; k++)
    mtm[k] = sh->minor_to_major.n == r ? sh->minor_to_major.v[k] : r - 1 - k;
  const cj_type *ty = cj_type_tensor_of(m, CJ_INDEX, 1, &r);
  return ty ? cj_attr_dense(m, ty, mtm, (size_t)r * sizeof(int64_t), false) : NULL;
}

/* A custom call with operand_shapes_with_layout sees its operands in those layouts and its
 * results in the layouts of its own shape (XLA's layout constraint), as StableHLO's
 * operand_layouts / result_layouts say. */
static CJ_MUST_USE cj_status set_call_layouts(sc *s, const hlo_instr *in, setter *t, uint32_t nops) {
  cj_module *m = s->L->m;
  if ((uint32_t)in->noperand_layouts != nops)
    return ins_err(s, in, "operand_shapes_with_layout has %d shapes for %u operands",
                   in->noperand_layouts, nops);
  const cj_attr *ol[64], *rl[64];
  if (nops > 64) return ins_err(s, in, "more than 64 operands with layouts");
  for (uint32_t i = 0; i < nops; i++) {
    if (in->operand_layouts[i].etype == HLO_TUPLE)
      return ins_err(s, in, "a tuple operand layout is not supported");
    if (!(ol[i] = layout_attr(m, &in->operand_layouts[i]))) return cj_oom();
  }
  const hlo_shape *res = in->shape.etype == HLO_TUPLE ? in->shape.tuple : &in->shape;
  int32_t nres = in->shape.etype == HLO_TUPLE ? in->shape.ntuple : 1;
  if (nres > 64) return ins_err(s, in, "more than 64 results with layouts");
  for (int32_t i = 0; i < nres; i++) {
    if (res[i].etype == HLO_TUPLE) return ins_err(s, in, "a nested tuple result is not supported");
    if (!(rl[i] = layout_attr(m, &res[i]))) return cj_oom();
  }
  set(t, "operand_layouts", cj_attr_array(m, (int32_t)nops, ol));
  set(t, "result_layouts", cj_attr_array(m, nres, rl));
  return NULL;
}

static cj_op *emit(sc *s, const hlo_instr *in, cj_op_kind k, uint32_t nop, cj_value *const *ops,
                   uint32_t nres, uint32_t nreg) {
  cj_module *m = s->L->m;
  cj_op *op = cj_op_create(m, k, NULL, nop, nres, nreg);
  if (!op) return NULL;
  for (uint32_t i = 0; i < nop; i++) op->operands[i] = ops[i];
  op->pos = (cj_srcpos){s->L->file, 0, 0};
  const char *nm = cj_intern(m, in->name, strlen(in->name));
  op->loc = nm ? cj_attr_loc(m, CJ_LOC_NAME, nm, 0, 0, 0, NULL, NULL) : NULL;
  cj_block_append(s->blk, op);
  return op;
}

static CJ_MUST_USE cj_status results_vl(sc *s, const hlo_instr *in, cj_op *op, vl *out) {
  out->n = op->nresults;
  out->shape = &in->shape;
  out->v = cj_alloc(s->L->m, sizeof(cj_value *) * (op->nresults ? op->nresults : 1));
  if (!out->v) return cj_oom();
  for (uint32_t i = 0; i < op->nresults; i++) out->v[i] = &op->results[i];
  return NULL;
}

/* result types of op from the instruction's shape (its leaves must number op->nresults) */
static CJ_MUST_USE cj_status type_results(sc *s, const hlo_instr *in, cj_op *op) {
  uint32_t n;
  cj_status st;
  const cj_type **t = shape_types(s->L, &in->shape, &n, &st);
  if (st) return st;
  if (n != op->nresults)
    return ins_err(s, in, "its shape has %u leaves where %u results were expected", n,
                   op->nresults);
  for (uint32_t i = 0; i < n; i++) op->results[i].type = t[i];
  return NULL;
}

/* ------------------------------------------------------------------ computations */

static const hlo_comp *find_comp(const hlo_module *h, int64_t id) {
  for (int32_t i = 0; i < h->n; i++)
    if (h->comps[i].id == id) return &h->comps[i];
  return NULL;
}

static CJ_MUST_USE cj_status lower_comp(lw *L, const hlo_comp *c, cj_block *blk, const vl *params,
                            uint32_t nparams, vl *root);

/* the parameters of c by number: *np of them, pars[i] its parameter i */
static CJ_MUST_USE cj_status comp_params(lw *L, const hlo_comp *c, const hlo_instr ***pars, uint32_t *np) {
  uint32_t n = 0;
  for (int32_t i = 0; i < c->n; i++)
    if (strcmp(c->instrs[i].opcode, "parameter") == 0) n++;
  const hlo_instr **p = cj_alloc(L->m, sizeof *p * (n ? n : 1));
  if (!p) return cj_oom();
  for (int32_t i = 0; i < c->n; i++) {
    const hlo_instr *in = &c->instrs[i];
    if (strcmp(in->opcode, "parameter") != 0) continue;
    if (in->parameter_number < 0 || (uint64_t)in->parameter_number >= n ||
        p[in->parameter_number])
      return cj_invalid("hlo: computation %s: parameter %s has number %lld of %u parameters",
                        c->name, in->name, (long long)in->parameter_number, n);
    p[in->parameter_number] = in;
  }
  *pars = p;
  *np = n;
  return NULL;
}

/* Fills region r's one block from computation `id`: its parameters' leaves are the block
 * arguments, and `ret` (stablehlo.return or func.return) returns the root's leaves. */
static CJ_MUST_USE cj_status comp_body(lw *L, int64_t id, cj_region *r, cj_op_kind ret, const char *what,
                           const char *caller, vl *root_out) {
  const hlo_comp *c = find_comp(L->h, id);
  if (!c) return cj_invalid("hlo: %s: no computation with id %lld (%s)", caller, (long long)id, what);
  const hlo_instr **pars = NULL;
  uint32_t np = 0;
  CJ_RETURN_IF_ERROR(comp_params(L, c, &pars, &np));
  uint32_t nargs = 0;
  for (uint32_t i = 0; i < np; i++) nargs += leaf_count(&pars[i]->shape, 0);
  const cj_type **types = cj_alloc(L->m, sizeof *types * (nargs ? nargs : 1));
  vl *params = cj_alloc(L->m, sizeof *params * (np ? np : 1));
  if (!types || !params) return cj_oom();
  uint32_t k = 0;
  for (uint32_t i = 0; i < np; i++)
    CJ_RETURN_IF_ERROR(leaf_types(L, &pars[i]->shape, types, &k, nargs, 0));
  cj_block *blk = cj_region_add_block(L->m, r, nargs, types);
  if (!blk) return cj_oom();
  k = 0;
  for (uint32_t i = 0; i < np; i++) {
    params[i].n = leaf_count(&pars[i]->shape, 0);
    params[i].shape = &pars[i]->shape;
    params[i].v = cj_alloc(L->m, sizeof(cj_value *) * (params[i].n ? params[i].n : 1));
    if (!params[i].v) return cj_oom();
    for (uint32_t j = 0; j < params[i].n; j++) params[i].v[j] = &blk->args[k++];
  }
  vl root;
  CJ_RETURN_IF_ERROR(lower_comp(L, c, blk, params, np, &root));
  cj_op *rop = cj_op_create(L->m, ret, NULL, root.n, 0, 0);
  if (!rop) return cj_oom();
  for (uint32_t i = 0; i < root.n; i++) rop->operands[i] = root.v[i];
  rop->pos = (cj_srcpos){L->file, 0, 0};
  cj_block_append(blk, rop);
  if (root_out) *root_out = root;
  return NULL;
}

/* ------------------------------------------------------------------ instructions */

static CJ_MUST_USE cj_status ensure(sc *s, int32_t idx);

/* An instruction id within its computation. XLA's newer protos (TensorFlow 2.21's, for one)
 * number instructions (computation id << 32) + local id but name operands and roots by either
 * form; XLA resolves them by the low 32 bits, and so do we (older protos' ids are all below
 * 2^32, unchanged). */
static int64_t local_id(int64_t id) { return id & 0xffffffff; }

static CJ_MUST_USE cj_status operand(sc *s, const hlo_instr *in, int32_t k, vl *out) {
  if (k >= in->operand_ids.n) return ins_err(s, in, "has no operand %d", k);
  int64_t id = local_id(in->operand_ids.v[k]);
  int32_t lo = 0, hi = s->c->n - 1;
  while (lo <= hi) {
    int32_t mid = lo + (hi - lo) / 2;
    if (s->ids[mid].id == id) {
      int32_t idx = s->ids[mid].i;
      CJ_RETURN_IF_ERROR(ensure(s, idx));
      *out = s->vals[idx];
      return NULL;
    }
    if (s->ids[mid].id < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return ins_err(s, in, "operand %d refers to id %lld, not an instruction of the computation", k,
                 (long long)id);
}

static CJ_MUST_USE cj_status array_operand(sc *s, const hlo_instr *in, int32_t k, cj_value **out) {
  vl v;
  CJ_RETURN_IF_ERROR(operand(s, in, k, &v));
  if (v.n != 1 || (v.shape && v.shape->etype == HLO_TUPLE))
    return ins_err(s, in, "operand %d is a tuple where an array was expected", k);
  *out = v.v[0];
  return NULL;
}

/* all operands, each an array */
static CJ_MUST_USE cj_status array_operands(sc *s, const hlo_instr *in, cj_value ***out) {
  cj_value **v = cj_alloc(s->L->m, sizeof *v * (in->operand_ids.n ? in->operand_ids.n : 1));
  if (!v) return cj_oom();
  for (int32_t k = 0; k < in->operand_ids.n; k++)
    CJ_RETURN_IF_ERROR(array_operand(s, in, k, &v[k]));
  *out = v;
  return NULL;
}

/* the leaves of all operands, concatenated */
static CJ_MUST_USE cj_status leaf_operands(sc *s, const hlo_instr *in, cj_value ***out, uint32_t *n) {
  uint32_t total = 0;
  for (int32_t k = 0; k < in->operand_ids.n; k++) {
    vl v;
    CJ_RETURN_IF_ERROR(operand(s, in, k, &v));
    total += v.n;
  }
  cj_value **a = cj_alloc(s->L->m, sizeof *a * (total ? total : 1));
  if (!a) return cj_oom();
  uint32_t j = 0;
  for (int32_t k = 0; k < in->operand_ids.n; k++) {
    vl v;
    CJ_RETURN_IF_ERROR(operand(s, in, k, &v));
    for (uint32_t i = 0; i < v.n; i++) a[j++] = v.v[i];
  }
  *out = a;
  *n = total;
  return NULL;
}

static CJ_MUST_USE cj_status need_operands(sc *s, const hlo_instr *in, int32_t n) {
  if (in->operand_ids.n != n)
    return ins_err(s, in, "has %d operands, expected %d", in->operand_ids.n, n);
  return NULL;
}

static CJ_MUST_USE cj_status need_called(sc *s, const hlo_instr *in, int32_t n) {
  if (in->called_ids.n != n)
    return ins_err(s, in, "calls %d computations, expected %d", in->called_ids.n, n);
  return NULL;
}

typedef struct ew_row {
  const char *opcode;
  cj_op_kind kind;
  int nopnds;
} ew_row;

static const ew_row kElementwise[] = {
    {"abs", CJ_OP_ABS, 1},
    {"cbrt", CJ_OP_CBRT, 1},
    {"ceil", CJ_OP_CEIL, 1},
    {"convert", CJ_OP_CONVERT, 1},
    {"count-leading-zeros", CJ_OP_COUNT_LEADING_ZEROS, 1},
    {"clz", CJ_OP_COUNT_LEADING_ZEROS, 1},
    {"cosine", CJ_OP_COSINE, 1},
    {"exponential", CJ_OP_EXPONENTIAL, 1},
    {"exponential-minus-one", CJ_OP_EXPONENTIAL_MINUS_ONE, 1},
    {"floor", CJ_OP_FLOOR, 1},
    {"imag", CJ_OP_IMAG, 1},
    {"is-finite", CJ_OP_IS_FINITE, 1},
    {"log", CJ_OP_LOG, 1},
    {"log-plus-one", CJ_OP_LOG_PLUS_ONE, 1},
    {"logistic", CJ_OP_LOGISTIC, 1},
    {"not", CJ_OP_NOT, 1},
    {"negate", CJ_OP_NEGATE, 1},
    {"popcnt", CJ_OP_POPCNT, 1},
    {"real", CJ_OP_REAL, 1},
    {"round-nearest-afz", CJ_OP_ROUND_NEAREST_AFZ, 1},
    {"round-nearest-even", CJ_OP_ROUND_NEAREST_EVEN, 1},
    {"rsqrt", CJ_OP_RSQRT, 1},
    {"sign", CJ_OP_SIGN, 1},
    {"sine", CJ_OP_SINE, 1},
    {"sqrt", CJ_OP_SQRT, 1},
    {"tan", CJ_OP_TAN, 1},
    {"tanh", CJ_OP_TANH, 1},
    {"erf", CJ_OP_CHLO_ERF, 1},
    {"bitcast-convert", CJ_OP_BITCAST_CONVERT, 1},
    {"add", CJ_OP_ADD, 2},
    {"atan2", CJ_OP_ATAN2, 2},
    {"complex", CJ_OP_COMPLEX, 2},
    {"divide", CJ_OP_DIVIDE, 2},
    {"maximum", CJ_OP_MAXIMUM, 2},
    {"minimum", CJ_OP_MINIMUM, 2},
    {"multiply", CJ_OP_MULTIPLY, 2},
    {"power", CJ_OP_POWER, 2},
    {"remainder", CJ_OP_REMAINDER, 2},
    {"shift-left", CJ_OP_SHIFT_LEFT, 2},
    {"shift-right-arithmetic", CJ_OP_SHIFT_RIGHT_ARITHMETIC, 2},
    {"shift-right-logical", CJ_OP_SHIFT_RIGHT_LOGICAL, 2},
    {"subtract", CJ_OP_SUBTRACT, 2},
    {"and", CJ_OP_AND, 2},
    {"or", CJ_OP_OR, 2},
    {"xor", CJ_OP_XOR, 2},
    {"select", CJ_OP_SELECT, 3},
    {"clamp", CJ_OP_CLAMP, 3},
    {"reshape", CJ_OP_RESHAPE, 1},
    {"cholesky", CJ_OP_CHOLESKY, 1},
    {"dynamic-update-slice", CJ_OP_DYNAMIC_UPDATE_SLICE, -1},
    {"replica-id", CJ_OP_REPLICA_ID, 0},
    {"partition-id", CJ_OP_PARTITION_ID, 0},
    {"after-all", CJ_OP_AFTER_ALL, -1},
};

/* a single-result op of `k` over the array operands, typed by the instruction's shape */
static CJ_MUST_USE cj_status simple(sc *s, const hlo_instr *in, cj_op_kind k, int nopnds, cj_op **out) {
  if (nopnds >= 0) CJ_RETURN_IF_ERROR(need_operands(s, in, nopnds));
  cj_value **ops;
  CJ_RETURN_IF_ERROR(array_operands(s, in, &ops));
  cj_op *op = emit(s, in, k, (uint32_t)in->operand_ids.n, ops, 1, 0);
  if (!op) return cj_oom();
  CJ_RETURN_IF_ERROR(type_results(s, in, op));
  *out = op;
  return NULL;
}

static const cj_attr *precision(lw *L, const hlo_instr *in) {
  const cj_attr **items = cj_alloc(L->m, sizeof *items * (in->precision.n ? in->precision.n : 1));
  if (!items) return NULL;
  for (int32_t i = 0; i < in->precision.n; i++) {
    int64_t p = in->precision.v[i];
    items[i] = cj_attr_enum(L->m, CJ_EK_PRECISION, (int32_t)(p >= 0 && p <= 2 ? p : 0));
    if (!items[i]) return NULL;
  }
  return cj_attr_array(L->m, in->precision.n, items);
}

static const cj_attr *replica_groups(sc *s, const hlo_instr *in, cj_status *st) {
  int64_t ng = in->ngroups, per = ng ? in->groups[0].n : 0;
  for (int32_t g = 0; g < in->ngroups; g++)
    if (in->groups[g].n != per) {
      *st = ins_err(s, in, "its replica groups differ in size");
      return NULL;
    }
  int64_t *v = cj_alloc(s->L->m, sizeof *v * (size_t)(ng * per + 1));
  if (!v) return NULL;
  for (int32_t g = 0; g < in->ngroups; g++)
    if (per) memcpy(v + g * per, in->groups[g].v, sizeof *v * (size_t)per);
  return dense2(s->L, ng, per, v);
}

static void collective_attrs(sc *s, const hlo_instr *in, setter *t) {
  set(t, "replica_groups", replica_groups(s, in, &t->st));
  if (in->channel_id > 0) {
    const cj_attr *f[CJ_SF_CHANNEL_HANDLE__COUNT] = {i64(s->L, in->channel_id), i64(s->L, 1)};
    set(t, "channel_handle", f[0] && f[1] ? cj_attr_struct(s->L->m, CJ_SK_CHANNEL_HANDLE, f) : NULL);
  }
  if (in->use_global_device_ids) set(t, "use_global_device_ids", cj_attr_unit(s->L->m));
}

/* padding attribute of a window: tensor<N x 2 x i64> */
static const cj_attr *window_padding(lw *L, const hlo_instr *in) {
  int64_t *v = cj_alloc(L->m, sizeof *v * (size_t)(2 * in->nwindow + 1));
  if (!v) return NULL;
  for (int32_t i = 0; i < in->nwindow; i++) {
    v[2 * i] = in->window[i].pad_lo;
    v[2 * i + 1] = in->window[i].pad_hi;
  }
  return dense2(L, in->nwindow, 2, v);
}

static const cj_attr *window_field(lw *L, const hlo_instr *in, int which) {
  int64_t *v = cj_alloc(L->m, sizeof *v * (size_t)(in->nwindow + 1));
  if (!v) return NULL;
  for (int32_t i = 0; i < in->nwindow; i++) {
    const hlo_window_dim *w = &in->window[i];
    v[i] = which == 0 ? w->size : which == 1 ? w->stride : which == 2 ? w->base_dil : w->win_dil;
  }
  return cj_attr_i64_array(L->m, in->nwindow, v);
}

static int32_t direction(const char *s) {
  static const char *const names[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  for (int32_t i = 0; i < 6; i++)
    if (s && strcmp(s, names[i]) == 0) return i;
  return -1;
}

/* lower_instr, continued: scatter, sort, while, conditional, custom calls and the rest */
static CJ_MUST_USE cj_status lower_instr_control(sc *s, int32_t idx) {
  lw *L = s->L;
  cj_module *m = L->m;
  const hlo_instr *in = &s->c->instrs[idx];
  const char *oc = in->opcode;
  vl *out = &s->vals[idx];
  cj_op *op = NULL;
  setter t = {L, NULL, NULL};
  if (strcmp(oc, "scatter") == 0 || strcmp(oc, "sort") == 0) {
    bool sort = oc[1] == 'o';
    CJ_RETURN_IF_ERROR(need_called(s, in, 1));
    cj_value **ops;
    uint32_t nops;
    CJ_RETURN_IF_ERROR(leaf_operands(s, in, &ops, &nops));
    uint32_t nres = leaf_count(&in->shape, 0);
    if (sort ? nops != nres : nops != 2 * nres + 1)
      return ins_err(s, in, "has %u operands for %u results", nops, nres);
    op = emit(s, in, sort ? CJ_OP_SORT : CJ_OP_SCATTER, nops, ops, nres, 1);
    if (!op) return cj_oom();
    CJ_RETURN_IF_ERROR(type_results(s, in, op));
    CJ_RETURN_IF_ERROR(comp_body(L, in->called_ids.v[0], &op->regions[0], CJ_OP_RETURN,
                                 sort ? "comparator" : "to_apply", in->name, NULL));
    t.op = op;
    if (sort) {
      if (in->dimensions.n != 1) return ins_err(s, in, "needs exactly one dimension");
      set(&t, "dimension", i64(L, in->dimensions.v[0]));
      if (in->is_stable) set(&t, "is_stable", cj_attr_bool(m, true));
    } else {
      const cj_attr *f[CJ_SF_SCATTER__COUNT] = {
          i64a(L, &in->update_window_dims),    i64a(L, &in->inserted_window_dims),
          i64a(L, &in->input_batching_dims),   i64a(L, &in->scatter_indices_batching_dims),
          i64a(L, &in->scatter_dims_to_operand_dims), i64(L, in->scatter_index_vector_dim)};
      for (int i = 0; i < CJ_SF_SCATTER__COUNT; i++)
        if (!f[i]) return cj_oom();
      set(&t, "scatter_dimension_numbers", cj_attr_struct(m, CJ_SK_SCATTER, f));
      if (in->indices_are_sorted) set(&t, "indices_are_sorted", cj_attr_bool(m, true));
      if (in->unique_indices) set(&t, "unique_indices", cj_attr_bool(m, true));
    }
    if (t.st) return t.st;
    return results_vl(s, in, op, out);
  }
  if (strcmp(oc, "while") == 0) {
    CJ_RETURN_IF_ERROR(need_operands(s, in, 1));
    CJ_RETURN_IF_ERROR(need_called(s, in, 2));
    vl init;
    CJ_RETURN_IF_ERROR(operand(s, in, 0, &init));
    if (init.n != leaf_count(&in->shape, 0)) return ins_err(s, in, "its operand does not match its shape");
    op = emit(s, in, CJ_OP_WHILE, init.n, init.v, init.n, 2);
    if (!op) return cj_oom();
    CJ_RETURN_IF_ERROR(type_results(s, in, op));
    /* called_computation_ids: body, then condition */
    CJ_RETURN_IF_ERROR(comp_body(L, in->called_ids.v[1], &op->regions[0], CJ_OP_RETURN,
                                 "condition", in->name, NULL));
    CJ_RETURN_IF_ERROR(
        comp_body(L, in->called_ids.v[0], &op->regions[1], CJ_OP_RETURN, "body", in->name, NULL));
    return results_vl(s, in, op, out);
  }
  if (strcmp(oc, "conditional") == 0) {
    int32_t nb = in->called_ids.n;
    if (nb < 1 || in->operand_ids.n != nb + 1)
      return ins_err(s, in, "has %d branches and %d operands", nb, in->operand_ids.n);
    cj_value *pred;
    CJ_RETURN_IF_ERROR(array_operand(s, in, 0, &pred));
    bool is_if = pred->type->dtype == CJ_PRED;
    if (is_if && nb != 2) return ins_err(s, in, "a predicated conditional needs 2 branches");
    uint32_t nres = leaf_count(&in->shape, 0);
    op = emit(s, in, is_if ? CJ_OP_IF : CJ_OP_CASE, 1, &pred, nres, (uint32_t)nb);
    if (!op) return cj_oom();
    CJ_RETURN_IF_ERROR(type_results(s, in, op));
    for (int32_t b = 0; b < nb; b++) {
      const hlo_comp *c = find_comp(L->h, in->called_ids.v[b]);
      if (!c) return ins_err(s, in, "branch %d is not a computation of the module", b);
      vl arg;
      CJ_RETURN_IF_ERROR(operand(s, in, b + 1, &arg));
      cj_block *blk = cj_region_add_block(m, &op->regions[b], 0, NULL);
      if (!blk) return cj_oom();
      vl root;
      CJ_RETURN_IF_ERROR(lower_comp(L, c, blk, &arg, 1, &root));
      if (root.n != nres) return ins_err(s, in, "branch %d returns %u values, not %u", b, root.n, nres);
      cj_op *r = cj_op_create(m, CJ_OP_RETURN, NULL, root.n, 0, 0);
      if (!r) return cj_oom();
      for (uint32_t i = 0; i < root.n; i++) r->operands[i] = root.v[i];
      cj_block_append(blk, r);
    }
    return results_vl(s, in, op, out);
  }
  if (strcmp(oc, "custom-call") == 0 || strcmp(oc, "opt-barrier") == 0 ||
      strcmp(oc, "rng-bit-generator") == 0 || strcmp(oc, "topk") == 0) {
    cj_op_kind k = oc[0] == 'c'   ? CJ_OP_CUSTOM_CALL
                   : oc[0] == 'o' ? CJ_OP_OPTIMIZATION_BARRIER
                   : oc[0] == 'r' ? CJ_OP_RNG_BIT_GENERATOR
                                  : CJ_OP_CHLO_TOP_K;
    cj_value **ops;
    uint32_t nops;
    CJ_RETURN_IF_ERROR(leaf_operands(s, in, &ops, &nops));
    uint32_t nres = leaf_count(&in->shape, 0);
    op = emit(s, in, k, nops, ops, nres, 0);
    if (!op) return cj_oom();
    CJ_RETURN_IF_ERROR(type_results(s, in, op));
    t.op = op;
    if (k == CJ_OP_CUSTOM_CALL) {
      const char *tg = in->custom_call_target ? in->custom_call_target : "";
      set(&t, "call_target_name", cj_attr_string(m, tg, strlen(tg)));
      if (in->custom_call_has_side_effect) set(&t, "has_side_effect", cj_attr_bool(m, true));
      if (in->api_version) set(&t, "api_version", i32(L, in->api_version));
      if (in->backend_config_len) {
        const cj_attr *bc = NULL;
        if (in->api_version == 4) {
          /* typed FFI: backend_config is a dictionary attribute written as MLIR text */
          cj_status ps = cj_parse_attr_text(m, in->backend_config, in->backend_config_len, &bc);
          if (ps || !bc || bc->kind != CJ_ATTR_DICT) {
            cj_status_ignore(ps); /* not a dictionary: the handler gets no attributes */
            bc = NULL;
          }
        }
        if (!bc) bc = cj_attr_string(m, in->backend_config, in->backend_config_len);
        set(&t, "backend_config", bc);
      }
      if (in->noperand_layouts > 0) CJ_RETURN_IF_ERROR(set_call_layouts(s, in, &t, nops));
      /* @Sharding and the SPMD shape calls carry their sharding as GSPMD's StableHLO does */
      if (in->sharding) set(&t, "mhlo.sharding", cj_attr_string(m, in->sharding, strlen(in->sharding)));
    } else if (k == CJ_OP_RNG_BIT_GENERATOR) {
      if (in->rng_algorithm < 0 || in->rng_algorithm > 2) return ins_err(s, in, "unknown algorithm");
      set(&t, "rng_algorithm", cj_attr_enum(m, CJ_EK_RNG_ALGORITHM, (int32_t)in->rng_algorithm));
    } else if (k == CJ_OP_CHLO_TOP_K) {
      if (!in->largest) return ins_err(s, in, "top-k of the smallest values is not supported");
      set(&t, "k", i64(L, in->k));
    }
    if (t.st) return t.st;
    return results_vl(s, in, op, out);
  }
  return unsupported(s, in);
}

/* lower_instr, continued: reductions, collectives, select-and-scatter */
static CJ_MUST_USE cj_status lower_instr_regions(sc *s, int32_t idx) {
  lw *L = s->L;
  cj_module *m = L->m;
  const hlo_instr *in = &s->c->instrs[idx];
  const char *oc = in->opcode;
  vl *out = &s->vals[idx];
  cj_op *op = NULL;
  setter t = {L, NULL, NULL};
  /* ---- ops with regions or several results ---- */
  if (strcmp(oc, "reduce") == 0 || strcmp(oc, "reduce-window") == 0 ||
      strcmp(oc, "all-reduce") == 0 || strcmp(oc, "reduce-scatter") == 0) {
    bool win = strcmp(oc, "reduce-window") == 0, all = strcmp(oc, "all-reduce") == 0,
         rs = strcmp(oc, "reduce-scatter") == 0;
    CJ_RETURN_IF_ERROR(need_called(s, in, 1));
    cj_value **ops;
    uint32_t nops;
    CJ_RETURN_IF_ERROR(leaf_operands(s, in, &ops, &nops));
    uint32_t nres = leaf_count(&in->shape, 0);
    if (!all && !rs && nops != 2 * nres)
      return ins_err(s, in, "has %u operands for %u results", nops, nres);
    cj_op_kind k = all ? CJ_OP_ALL_REDUCE : rs ? CJ_OP_REDUCE_SCATTER : win ? CJ_OP_REDUCE_WINDOW
                                                                           : CJ_OP_REDUCE;
    op = emit(s, in, k, nops, ops, nres, 1);
    if (!op) return cj_oom();
    CJ_RETURN_IF_ERROR(type_results(s, in, op));
    CJ_RETURN_IF_ERROR(
        comp_body(L, in->called_ids.v[0], &op->regions[0], CJ_OP_RETURN, "to_apply", in->name, NULL));
    t.op = op;
    if (k == CJ_OP_REDUCE) set(&t, "dimensions", i64a(L, &in->dimensions));
    if (k == CJ_OP_REDUCE_WINDOW) {
      set(&t, "window_dimensions", window_field(L, in, 0));
      set(&t, "window_strides", window_field(L, in, 1));
      set(&t, "base_dilations", window_field(L, in, 2));
      set(&t, "window_dilations", window_field(L, in, 3));
      set(&t, "padding", window_padding(L, in));
    }
    if (all || rs) collective_attrs(s, in, &t);
    if (rs) {
      if (in->dimensions.n != 1) return ins_err(s, in, "needs exactly one dimension");
      set(&t, "scatter_dimension", i64(L, in->dimensions.v[0]));
    }
    if (t.st) return t.st;
    return results_vl(s, in, op, out);
  }
  if (strcmp(oc, "all-gather") == 0 || strcmp(oc, "all-to-all") == 0 ||
      strcmp(oc, "collective-permute") == 0) {
    cj_value **ops;
    uint32_t nops;
    CJ_RETURN_IF_ERROR(leaf_operands(s, in, &ops, &nops));
    uint32_t nres = leaf_count(&in->shape, 0);
    cj_op_kind k = oc[4] == 'g' ? CJ_OP_ALL_GATHER : oc[4] == 't' ? CJ_OP_ALL_TO_ALL
                                                                  : CJ_OP_COLLECTIVE_PERMUTE;
    if (k != CJ_OP_ALL_GATHER && nops != 1) return unsupported(s, in);
    op = emit(s, in, k, nops, ops, nres, 0);
    if (!op) return cj_oom();
    CJ_RETURN_IF_ERROR(type_results(s, in, op));
    t.op = op;
    if (k == CJ_OP_COLLECTIVE_PERMUTE) {
      set(&t, "source_target_pairs",
          dense2(L, in->source_target.n / 2, 2, in->source_target.n ? in->source_target.v : (int64_t[1]){0}));
      if (in->channel_id > 0) {
        const cj_attr *f[CJ_SF_CHANNEL_HANDLE__COUNT] = {i64(L, in->channel_id), i64(L, 1)};
        set(&t, "channel_handle", cj_attr_struct(m, CJ_SK_CHANNEL_HANDLE, f));
      }
    } else {
      if (in->dimensions.n != 1) return ins_err(s, in, "needs exactly one dimension");
      collective_attrs(s, in, &t);
      if (k == CJ_OP_ALL_GATHER) set(&t, "all_gather_dim", i64(L, in->dimensions.v[0]));
      else {
        if (!in->ngroups) return ins_err(s, in, "needs replica groups");
        set(&t, "split_dimension", i64(L, in->dimensions.v[0]));
        set(&t, "concat_dimension", i64(L, in->dimensions.v[0]));
        set(&t, "split_count", i64(L, in->groups[0].n));
      }
    }
    if (t.st) return t.st;
    return results_vl(s, in, op, out);
  }
  if (strcmp(oc, "select-and-scatter") == 0) {
    CJ_RETURN_IF_ERROR(need_operands(s, in, 3));
    CJ_RETURN_IF_ERROR(need_called(s, in, 2));
    cj_value **ops;
    CJ_RETURN_IF_ERROR(array_operands(s, in, &ops));
    op = emit(s, in, CJ_OP_SELECT_AND_SCATTER, 3, ops, 1, 2);
    if (!op) return cj_oom();
    CJ_RETURN_IF_ERROR(type_results(s, in, op));
    CJ_RETURN_IF_ERROR(
        comp_body(L, in->called_ids.v[0], &op->regions[0], CJ_OP_RETURN, "select", in->name, NULL));
    CJ_RETURN_IF_ERROR(
        comp_body(L, in->called_ids.v[1], &op->regions[1], CJ_OP_RETURN, "scatter", in->name, NULL));
    t.op = op;
    set(&t, "window_dimensions", window_field(L, in, 0));
    set(&t, "window_strides", window_field(L, in, 1));
    set(&t, "padding", window_padding(L, in));
    if (t.st) return t.st;
    return results_vl(s, in, op, out);
  }
  return lower_instr_control(s, idx);
}

/* lower_instr, continued: dot, convolution, gather, fft, triangular-solve, rng, batch norm */
static CJ_MUST_USE cj_status lower_instr_linalg(sc *s, int32_t idx) {
  lw *L = s->L;
  cj_module *m = L->m;
  const hlo_instr *in = &s->c->instrs[idx];
  const char *oc = in->opcode;
  vl *out = &s->vals[idx];
  cj_op *op = NULL;
  setter t = {L, NULL, NULL};
  if (strcmp(oc, "dot") == 0) {
    CJ_RETURN_IF_ERROR(simple(s, in, CJ_OP_DOT_GENERAL, 2, &op));
    t.op = op;
    const cj_attr *f[CJ_SF_DOT__COUNT] = {
        i64a(L, &in->lhs_batch), i64a(L, &in->rhs_batch), i64a(L, &in->lhs_contracting),
        i64a(L, &in->rhs_contracting)};
    for (int i = 0; i < CJ_SF_DOT__COUNT; i++)
      if (!f[i]) return cj_oom();
    set(&t, "dot_dimension_numbers", cj_attr_struct(m, CJ_SK_DOT, f));
    if (in->precision.n) set(&t, "precision_config", precision(L, in));
    if (t.st) return t.st;
    return results_vl(s, in, op, out);
  }
  if (strcmp(oc, "convolution") == 0) {
    CJ_RETURN_IF_ERROR(simple(s, in, CJ_OP_CONVOLUTION, 2, &op));
    if (!in->has_conv_dnums) return ins_err(s, in, "has no convolution dimension numbers");
    t.op = op;
    const cj_attr *f[CJ_SF_CONV__COUNT] = {
        i64(L, in->in_batch),      i64(L, in->in_feature),      i64a(L, &in->in_spatial),
        i64(L, in->k_in_feature),  i64(L, in->k_out_feature),   i64a(L, &in->k_spatial),
        i64(L, in->out_batch),     i64(L, in->out_feature),     i64a(L, &in->out_spatial)};
    for (int i = 0; i < CJ_SF_CONV__COUNT; i++)
      if (!f[i]) return cj_oom();
    set(&t, "dimension_numbers", cj_attr_struct(m, CJ_SK_CONV, f));
    if (in->nwindow > 64) return ins_err(s, in, "a window of %d dimensions", in->nwindow);
    if (in->nwindow) {
      set(&t, "window_strides", window_field(L, in, 1));
      set(&t, "padding", window_padding(L, in));
      set(&t, "lhs_dilation", window_field(L, in, 2));
      set(&t, "rhs_dilation", window_field(L, in, 3));
      bool anyrev = false;
      uint8_t rev[64] = {0};
      for (int32_t i = 0; i < in->nwindow && i < 64; i++)
        if ((rev[i] = in->window[i].reversal)) anyrev = true;
      if (anyrev) set(&t, "window_reversal", cj_attr_dense_array(m, CJ_PRED, in->nwindow, rev));
    }
    set(&t, "feature_group_count", i64(L, in->feature_group_count));
    set(&t, "batch_group_count", i64(L, in->batch_group_count));
    if (in->precision.n) set(&t, "precision_config", precision(L, in));
    if (t.st) return t.st;
    return results_vl(s, in, op, out);
  }
  if (strcmp(oc, "gather") == 0) {
    CJ_RETURN_IF_ERROR(simple(s, in, CJ_OP_GATHER, 2, &op));
    t.op = op;
    const cj_attr *f[CJ_SF_GATHER__COUNT] = {
        i64a(L, &in->offset_dims),           i64a(L, &in->collapsed_slice_dims),
        i64a(L, &in->operand_batching_dims), i64a(L, &in->start_indices_batching_dims),
        i64a(L, &in->start_index_map),       i64(L, in->index_vector_dim)};
    for (int i = 0; i < CJ_SF_GATHER__COUNT; i++)
      if (!f[i]) return cj_oom();
    set(&t, "dimension_numbers", cj_attr_struct(m, CJ_SK_GATHER, f));
    set(&t, "slice_sizes", i64a(L, &in->gather_slice_sizes));
    if (in->indices_are_sorted) set(&t, "indices_are_sorted", cj_attr_bool(m, true));
    if (t.st) return t.st;
    return results_vl(s, in, op, out);
  }
  if (strcmp(oc, "fft") == 0) {
    CJ_RETURN_IF_ERROR(simple(s, in, CJ_OP_FFT, 1, &op));
    t.op = op;
    if (in->fft_type < 0 || in->fft_type > 3) return ins_err(s, in, "unknown fft type");
    set(&t, "fft_type", cj_attr_enum(m, CJ_EK_FFT_TYPE, (int32_t)in->fft_type));
    set(&t, "fft_length", i64a(L, &in->fft_length));
    if (t.st) return t.st;
    return results_vl(s, in, op, out);
  }
  if (strcmp(oc, "triangular-solve") == 0) {
    CJ_RETURN_IF_ERROR(simple(s, in, CJ_OP_TRIANGULAR_SOLVE, 2, &op));
    t.op = op;
    int64_t ta = in->transpose_a >= 1 && in->transpose_a <= 3 ? in->transpose_a : 1;
    set(&t, "left_side", cj_attr_bool(m, in->left_side));
    set(&t, "lower", cj_attr_bool(m, in->lower));
    set(&t, "unit_diagonal", cj_attr_bool(m, in->unit_diagonal));
    set(&t, "transpose_a", cj_attr_enum(m, CJ_EK_TRANSPOSE, (int32_t)ta));
    if (t.st) return t.st;
    return results_vl(s, in, op, out);
  }
  if (strcmp(oc, "rng") == 0) {
    CJ_RETURN_IF_ERROR(need_operands(s, in, 2));
    cj_value *ops[3];
    CJ_RETURN_IF_ERROR(array_operand(s, in, 0, &ops[0]));
    CJ_RETURN_IF_ERROR(array_operand(s, in, 1, &ops[1]));
    int64_t r = in->shape.dims.n;
    const cj_type *st = cj_type_tensor_of(m, CJ_S64, 1, &r);
    cj_op *c = st ? emit(s, in, CJ_OP_CONSTANT, 0, NULL, 1, 0) : NULL;
    if (!c) return cj_oom();
    c->results[0].type = st;
    t.op = c;
    set(&t, "value", cj_attr_dense(m, st, in->shape.dims.v, sizeof(int64_t) * (size_t)r, false));
    if (t.st) return t.st;
    ops[2] = &c->results[0];
    op = emit(s, in, CJ_OP_RNG, 3, ops, 1, 0);
    if (!op) return cj_oom();
    CJ_RETURN_IF_ERROR(type_results(s, in, op));
    t.op = op;
    if (in->distribution != 1 && in->distribution != 2) return ins_err(s, in, "unknown distribution");
    set(&t, "rng_distribution", cj_attr_enum(m, CJ_EK_RNG_DISTRIBUTION, (int32_t)in->distribution));
    if (t.st) return t.st;
    return results_vl(s, in, op, out);
  }
  if (strncmp(oc, "batch-norm-", 11) == 0) {
    cj_op_kind k;
    int n, nres;
    if (strcmp(oc + 11, "training") == 0) k = CJ_OP_BATCH_NORM_TRAINING, n = 3, nres = 3;
    else if (strcmp(oc + 11, "inference") == 0) k = CJ_OP_BATCH_NORM_INFERENCE, n = 5, nres = 1;
    else if (strcmp(oc + 11, "grad") == 0) k = CJ_OP_BATCH_NORM_GRAD, n = 5, nres = 3;
    else return unsupported(s, in);
    CJ_RETURN_IF_ERROR(need_operands(s, in, n));
    cj_value **ops;
    CJ_RETURN_IF_ERROR(array_operands(s, in, &ops));
    op = emit(s, in, k, (uint32_t)n, ops, (uint32_t)nres, 0);
    if (!op) return cj_oom();
    CJ_RETURN_IF_ERROR(type_results(s, in, op));
    t.op = op;
    set(&t, "epsilon", cj_attr_float(m, in->epsilon, cj_type_elem(m, CJ_F32)));
    set(&t, "feature_index", i64(L, in->feature_index));
    if (t.st) return t.st;
    return results_vl(s, in, op, out);
  }
  return lower_instr_regions(s, idx);
}

/* lower_instr, continued: elementwise and other one-to-one ops */
static CJ_MUST_USE cj_status lower_instr_ew(sc *s, int32_t idx) {
  lw *L = s->L;
  cj_module *m = L->m;
  const hlo_instr *in = &s->c->instrs[idx];
  const char *oc = in->opcode;
  vl *out = &s->vals[idx];
  cj_op *op = NULL;
  setter t = {L, NULL, NULL};
  /* ---- elementwise and other one-to-one ops ---- */
  for (size_t i = 0; i < sizeof kElementwise / sizeof *kElementwise; i++)
    if (strcmp(oc, kElementwise[i].opcode) == 0) {
      CJ_RETURN_IF_ERROR(simple(s, in, kElementwise[i].kind, kElementwise[i].nopnds, &op));
      t.op = op;
      if (kElementwise[i].kind == CJ_OP_CHOLESKY) set(&t, "lower", cj_attr_bool(m, in->lower));
      if (t.st) return t.st;
      return results_vl(s, in, op, out);
    }

  if (strcmp(oc, "bitcast") == 0) {
    CJ_RETURN_IF_ERROR(simple(s, in, CJ_OP_RESHAPE, 1, &op));
    if (op->operands[0]->type->dtype != op->results[0].type->dtype)
      return ins_err(s, in, "a bitcast that changes the element type is not supported");
    return results_vl(s, in, op, out);
  }
  if (strcmp(oc, "constant") == 0) {
    const hlo_literal *l = in->literal;
    if (!l) return ins_err(s, in, "has no literal");
    op = emit(s, in, CJ_OP_CONSTANT, 0, NULL, 1, 0);
    if (!op) return cj_oom();
    CJ_RETURN_IF_ERROR(type_results(s, in, op));
    const cj_type *ty = op->results[0].type;
    if (!cj_type_is_static(ty) ||
        (size_t)ty->num_elements * (size_t)cj_dtype_bytes(ty->dtype) != l->nbytes)
      return ins_err(s, in, "its literal holds %zu bytes for its shape", l->nbytes);
    t.op = op;
    set(&t, "value", cj_attr_dense(m, ty, l->data, l->nbytes, false));
    if (t.st) return t.st;
    return results_vl(s, in, op, out);
  }
  if (strcmp(oc, "compare") == 0) {
    CJ_RETURN_IF_ERROR(simple(s, in, CJ_OP_COMPARE, 2, &op));
    int32_t d = direction(in->comparison_direction);
    if (d < 0)
      return ins_err(s, in, "comparison direction '%s' is not one of EQ NE GE GT LE LT",
                     in->comparison_direction ? in->comparison_direction : "");
    int32_t ct;
    const char *cts = in->comparison_type;
    cj_dtype dt = op->operands[0]->type->dtype;
    if (cts && *cts) {
      if (!cj_enum_from_name(CJ_EK_COMPARISON_TYPE, cts, strlen(cts), &ct))
        return ins_err(s, in, "comparison type '%s' is not known", cts);
    } else {
      cj_dtype_kind k = cj_dtype_kindof(dt);
      ct = k == CJ_DK_FLOAT || k == CJ_DK_COMPLEX ? CJ_COMPARISON_TYPE_FLOAT
           : k == CJ_DK_SINT                      ? CJ_COMPARISON_TYPE_SIGNED
                                                  : CJ_COMPARISON_TYPE_UNSIGNED;
    }
    t.op = op;
    set(&t, "comparison_direction", cj_attr_enum(m, CJ_EK_COMPARISON_DIRECTION, d));
    set(&t, "compare_type", cj_attr_enum(m, CJ_EK_COMPARISON_TYPE, ct));
    if (t.st) return t.st;
    return results_vl(s, in, op, out);
  }
  if (strcmp(oc, "broadcast") == 0 || strcmp(oc, "transpose") == 0 ||
      strcmp(oc, "reverse") == 0 || strcmp(oc, "map") == 0) {
    bool is_map = oc[0] == 'm';
    cj_op_kind k = oc[0] == 'b' ? CJ_OP_BROADCAST_IN_DIM
                   : oc[0] == 't' ? CJ_OP_TRANSPOSE
                   : is_map       ? CJ_OP_MAP
                                  : CJ_OP_REVERSE;
    if (is_map) {
      CJ_RETURN_IF_ERROR(need_called(s, in, 1));
      cj_value **ops;
      CJ_RETURN_IF_ERROR(array_operands(s, in, &ops));
      op = emit(s, in, k, (uint32_t)in->operand_ids.n, ops, 1, 1);
      if (!op) return cj_oom();
      CJ_RETURN_IF_ERROR(type_results(s, in, op));
      CJ_RETURN_IF_ERROR(
          comp_body(L, in->called_ids.v[0], &op->regions[0], CJ_OP_RETURN, "to_apply", in->name, NULL));
    } else {
      CJ_RETURN_IF_ERROR(simple(s, in, k, 1, &op));
    }
    t.op = op;
    const char *an = k == CJ_OP_BROADCAST_IN_DIM ? "broadcast_dimensions"
                     : k == CJ_OP_TRANSPOSE      ? "permutation"
                                                 : "dimensions";
    if (is_map && !in->dimensions.n) {
      int32_t r = op->results[0].type->rank;
      int64_t d[64];
      for (int32_t i = 0; i < r && i < 64; i++) d[i] = i;
      set(&t, an, cj_attr_i64_array(m, r < 64 ? r : 64, d));
    } else {
      set(&t, an, i64a(L, &in->dimensions));
    }
    if (t.st) return t.st;
    return results_vl(s, in, op, out);
  }
  if (strcmp(oc, "slice") == 0) {
    CJ_RETURN_IF_ERROR(simple(s, in, CJ_OP_SLICE, 1, &op));
    t.op = op;
    set(&t, "start_indices", i64a(L, &in->slice_start));
    set(&t, "limit_indices", i64a(L, &in->slice_limit));
    set(&t, "strides", i64a(L, &in->slice_stride));
    if (t.st) return t.st;
    return results_vl(s, in, op, out);
  }
  if (strcmp(oc, "dynamic-slice") == 0) {
    CJ_RETURN_IF_ERROR(simple(s, in, CJ_OP_DYNAMIC_SLICE, -1, &op));
    t.op = op;
    set(&t, "slice_sizes", i64a(L, &in->dynamic_slice_sizes));
    if (t.st) return t.st;
    return results_vl(s, in, op, out);
  }
  if (strcmp(oc, "concatenate") == 0 || strcmp(oc, "iota") == 0 ||
      strcmp(oc, "get-dimension-size") == 0 || strcmp(oc, "set-dimension-size") == 0) {
    cj_op_kind k = oc[0] == 'c'   ? CJ_OP_CONCATENATE
                   : oc[0] == 'i' ? CJ_OP_IOTA
                   : oc[0] == 'g' ? CJ_OP_GET_DIMENSION_SIZE
                                  : CJ_OP_SET_DIMENSION_SIZE;
    int n = k == CJ_OP_CONCATENATE ? -1 : k == CJ_OP_IOTA ? 0 : k == CJ_OP_GET_DIMENSION_SIZE ? 1 : 2;
    CJ_RETURN_IF_ERROR(simple(s, in, k, n, &op));
    if (in->dimensions.n != 1) return ins_err(s, in, "needs exactly one dimension");
    t.op = op;
    set(&t, k == CJ_OP_IOTA ? "iota_dimension" : "dimension", i64(L, in->dimensions.v[0]));
    if (t.st) return t.st;
    return results_vl(s, in, op, out);
  }
  if (strcmp(oc, "pad") == 0) {
    CJ_RETURN_IF_ERROR(simple(s, in, CJ_OP_PAD, 2, &op));
    t.op = op;
    set(&t, "edge_padding_low", i64a(L, &in->pad_lo));
    set(&t, "edge_padding_high", i64a(L, &in->pad_hi));
    set(&t, "interior_padding", i64a(L, &in->pad_interior));
    if (t.st) return t.st;
    return results_vl(s, in, op, out);
  }
  if (strcmp(oc, "reduce-precision") == 0) {
    CJ_RETURN_IF_ERROR(simple(s, in, CJ_OP_REDUCE_PRECISION, 1, &op));
    t.op = op;
    set(&t, "exponent_bits", i32(L, in->exponent_bits));
    set(&t, "mantissa_bits", i32(L, in->mantissa_bits));
    if (t.st) return t.st;
    return results_vl(s, in, op, out);
  }
  return lower_instr_linalg(s, idx);
}

static CJ_MUST_USE cj_status lower_instr(sc *s, int32_t idx) {
  lw *L = s->L;
  cj_module *m = L->m;
  const hlo_instr *in = &s->c->instrs[idx];
  const char *oc = in->opcode;
  vl *out = &s->vals[idx];

  /* ---- values that need no op ---- */
  if (strcmp(oc, "parameter") == 0) {
    int64_t pn = in->parameter_number;
    if (pn < 0 || (uint64_t)pn >= s->nparams)
      return ins_err(s, in, "parameter number %lld of %u", (long long)pn, s->nparams);
    *out = s->params[pn];
    if (out->n != leaf_count(&in->shape, 0))
      return ins_err(s, in, "its shape does not match the value passed");
    out->shape = &in->shape;
    return NULL;
  }
  if (strcmp(oc, "tuple") == 0) {
    CJ_RETURN_IF_ERROR(leaf_operands(s, in, &out->v, &out->n));
    out->shape = &in->shape;
    return NULL;
  }
  if (strcmp(oc, "get-tuple-element") == 0) {
    CJ_RETURN_IF_ERROR(need_operands(s, in, 1));
    vl v;
    CJ_RETURN_IF_ERROR(operand(s, in, 0, &v));
    const hlo_shape *sh = v.shape;
    int64_t ti = in->tuple_index;
    if (!sh || sh->etype != HLO_TUPLE || ti < 0 || ti >= sh->ntuple)
      return ins_err(s, in, "tuple index %lld is out of range", (long long)ti);
    uint32_t off = 0;
    for (int64_t i = 0; i < ti; i++) off += leaf_count(&sh->tuple[i], 0);
    out->n = leaf_count(&sh->tuple[ti], 0);
    if (off + out->n > v.n) return ins_err(s, in, "its operand has too few leaves");
    out->v = v.v + off;
    out->shape = &sh->tuple[ti];
    return NULL;
  }
  if (strcmp(oc, "copy") == 0 || strcmp(oc, "domain") == 0 || strcmp(oc, "add-dependency") == 0) {
    if (in->operand_ids.n < 1) return ins_err(s, in, "has no operand");
    CJ_RETURN_IF_ERROR(operand(s, in, 0, out));
    out->shape = &in->shape;
    return NULL;
  }
  if (strcmp(oc, "call") == 0 || strcmp(oc, "fusion") == 0) {
    CJ_RETURN_IF_ERROR(need_called(s, in, 1));
    const hlo_comp *c = find_comp(L->h, in->called_ids.v[0]);
    if (!c) return ins_err(s, in, "calls a computation that does not exist");
    vl *ps = cj_alloc(m, sizeof *ps * (in->operand_ids.n ? in->operand_ids.n : 1));
    if (!ps) return cj_oom();
    for (int32_t k = 0; k < in->operand_ids.n; k++) CJ_RETURN_IF_ERROR(operand(s, in, k, &ps[k]));
    CJ_RETURN_IF_ERROR(lower_comp(L, c, s->blk, ps, (uint32_t)in->operand_ids.n, out));
    if (out->n != leaf_count(&in->shape, 0))
      return ins_err(s, in, "the called computation's result does not match its shape");
    out->shape = &in->shape;
    return NULL;
  }
  return lower_instr_ew(s, idx);
}

static CJ_MUST_USE cj_status too_much_work(const sc *s) {
  return cj_status_make(CJ_RESOURCE_EXHAUSTED,
                        "hlo: computation %s: more than %d instructions once calls and fusions are "
                        "inlined",
                        s->c->name, (int)MAX_WORK);
}

static CJ_MUST_USE cj_status ensure(sc *s, int32_t idx) {
  if (s->state[idx] == 2) return NULL;
  const hlo_instr *in = &s->c->instrs[idx];
  if (s->state[idx] == 1)
    return cj_invalid("hlo: instruction %s in computation %s depends on itself", in->name,
                      s->c->name);
  if (s->odepth >= MAX_OPERAND_DEPTH)
    return cj_invalid("hlo: computation %s: instructions are too far out of dependency order",
                      s->c->name);
  if (++s->L->work > MAX_WORK)
    return too_much_work(s);
  s->state[idx] = 1;
  s->odepth++;
  cj_status st = lower_instr(s, idx);
  s->odepth--;
  if (st) return st;
  s->state[idx] = 2;
  return NULL;
}

static int cmp_idpos(const void *a, const void *b) {
  const idpos *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

static CJ_MUST_USE cj_status lower_comp(lw *L, const hlo_comp *c, cj_block *blk, const vl *params,
                            uint32_t nparams, vl *root) {
  if (L->depth >= MAX_COMP_DEPTH)
    return cj_invalid("hlo: computation %s: calls nested too deeply (recursive?)", c->name);
  if (!c->n) return cj_invalid("hlo: computation %s has no instructions", c->name);
  sc s = {L, c, blk, params, nparams, NULL, NULL, NULL, 0};
  size_t n = (size_t)c->n;
  s.vals = calloc(n, sizeof *s.vals);
  s.state = calloc(n, 1);
  s.ids = malloc(n * sizeof *s.ids);
  cj_status st = NULL;
  if (!s.vals || !s.state || !s.ids) st = cj_oom();
  if (!st) {
    for (size_t i = 0; i < n; i++) s.ids[i] = (idpos){local_id(c->instrs[i].id), (int32_t)i};
    qsort(s.ids, n, sizeof *s.ids, cmp_idpos);
    for (size_t i = 1; i < n && !st; i++)
      if (s.ids[i].id == s.ids[i - 1].id)
        st = cj_invalid("hlo: computation %s: two instructions have id %lld", c->name,
                        (long long)s.ids[i].id);
  }
  L->depth++;
  for (size_t i = 0; i < n && !st; i++) st = ensure(&s, (int32_t)i);
  L->depth--;
  if (!st) {
    int32_t ri = (int32_t)n - 1;
    if (c->has_root) {
      ri = -1;
      for (size_t i = 0; i < n; i++)
        if (local_id(c->instrs[i].id) == local_id(c->root_id)) ri = (int32_t)i;
      if (ri < 0)
        st = cj_invalid("hlo: computation %s: root id %lld is not one of its instructions",
                        c->name, (long long)c->root_id);
    }
    if (!st) *root = s.vals[ri];
  }
  free(s.vals);
  free(s.state);
  free(s.ids);
  return st;
}

/* ------------------------------------------------------------------ shardings */

/* Splits HloSharding text into the shardings of n leaves: a tuple "{{a}, {b}}" gives one per
 * element (XLA flattens nested tuples), anything else is the sharding of every leaf. false when
 * the counts differ or out of memory (*oom says which). */
static bool split_sharding(cj_module *m, const char *s, uint32_t n, const char **out, bool *oom) {
  size_t len = strlen(s);
  *oom = false;
  if (len < 2 || s[0] != '{' || s[len - 1] != '}') return false;
  if (s[1] != '{' && !(len == 2 && n == 0)) {
    for (uint32_t i = 0; i < n; i++) out[i] = s;
    return true;
  }
  uint32_t k = 0;
  int depth = 0;
  const char *start = s + 1, *end = s + len - 1;
  for (const char *p = start; p <= end; p++) {
    char c = p < end ? *p : ',';
    if (c == '{' || c == '[' || c == '(') depth++;
    else if (c == '}' || c == ']' || c == ')') depth--;
    if (depth < 0) return false;
    if (c != ',' || depth) continue;
    const char *a = start, *b = p;
    while (a < b && *a == ' ') a++;
    while (b > a && b[-1] == ' ') b--;
    start = p + 1;
    if (a == b && p == end && k == 0) break; /* "{}" */
    if (k >= n || a == b) return false;
    char *e = cj_alloc(m, (size_t)(b - a) + 1);
    if (!e) {
      *oom = true;
      return false;
    }
    memcpy(e, a, (size_t)(b - a));
    e[b - a] = 0;
    out[k++] = e;
  }
  return k == n && depth == 0;
}

/* { mhlo.sharding = "..." } for each leaf of a sharded instruction; NULL entries stay empty */
static CJ_MUST_USE cj_status leaf_shardings(lw *L, const hlo_instr *in, uint32_t nleaves,
                                            const char **out, bool *any) {
  if (!in->sharding) return NULL;
  bool oom = false;
  if (!split_sharding(L->m, in->sharding, nleaves, out, &oom))
    return oom ? cj_oom()
               : cj_invalid("hlo: instruction %s: sharding %s does not fit its %u values",
                            in->name, in->sharding, nleaves);
  *any = true;
  return NULL;
}

static const cj_attr *sharding_dicts(cj_module *m, uint32_t n, const char **sh) {
  const cj_attr **d = cj_alloc(m, sizeof *d * (n ? n : 1));
  const char *key = cj_intern(m, "mhlo.sharding", 13);
  if (!d || !key) return NULL;
  for (uint32_t i = 0; i < n; i++) {
    cj_named_attr it = {key, sh[i] ? cj_attr_string(m, sh[i], strlen(sh[i])) : NULL};
    d[i] = sh[i] ? (it.value ? cj_attr_dict(m, 1, &it) : NULL) : cj_attr_dict(m, 0, NULL);
    if (!d[i]) return NULL;
  }
  return cj_attr_array(m, (int32_t)n, d);
}

/* The entry's parameter and root shardings become mhlo.sharding on @main's arguments and
 * results, the form GSPMD programs in StableHLO have (src/compiler/spmd.c reads it). */
static CJ_MUST_USE cj_status set_entry_shardings(lw *L, const hlo_comp *c, cj_op *fn, const vl *root) {
  cj_module *m = L->m;
  cj_block *b = cj_func_body(fn);
  const hlo_instr **pars = NULL;
  uint32_t np = 0, at = 0;
  CJ_RETURN_IF_ERROR(comp_params(L, c, &pars, &np));
  const char **ash = cj_alloc(m, sizeof *ash * (b->nargs ? b->nargs : 1));
  const char **rsh = cj_alloc(m, sizeof *rsh * (root->n ? root->n : 1));
  if (!ash || !rsh) return cj_oom();
  memset(ash, 0, sizeof *ash * (b->nargs ? b->nargs : 1));
  memset(rsh, 0, sizeof *rsh * (root->n ? root->n : 1));
  bool anya = false, anyr = false;
  for (uint32_t i = 0; i < np; i++) {
    uint32_t nl = leaf_count(&pars[i]->shape, 0);
    if (at + nl > b->nargs) return cj_invalid("hlo: the entry's parameters do not match @main");
    CJ_RETURN_IF_ERROR(leaf_shardings(L, pars[i], nl, ash + at, &anya));
    at += nl;
  }
  const hlo_instr *ri = c->n ? &c->instrs[c->n - 1] : NULL;
  for (int32_t i = 0; c->has_root && i < c->n; i++)
    if (local_id(c->instrs[i].id) == local_id(c->root_id)) ri = &c->instrs[i];
  if (ri) CJ_RETURN_IF_ERROR(leaf_shardings(L, ri, root->n, rsh, &anyr));
  if (anya) {
    const cj_attr *a = sharding_dicts(m, b->nargs, ash);
    CJ_RETURN_IF_ERROR(a ? cj_op_set_attr(m, fn, "arg_attrs", a) : cj_oom());
  }
  if (anyr) {
    const cj_attr *a = sharding_dicts(m, root->n, rsh);
    CJ_RETURN_IF_ERROR(a ? cj_op_set_attr(m, fn, "res_attrs", a) : cj_oom());
  }
  return NULL;
}

cj_status cj_hlo_lower(const hlo_module *h, const char *filename, cj_module **out) {
  *out = NULL;
  const hlo_comp *entry = NULL;
  if (h->has_entry_id) entry = find_comp(h, h->entry_id);
  if (!entry && h->entry_name)
    for (int32_t i = 0; i < h->n && !entry; i++)
      if (strcmp(h->comps[i].name, h->entry_name) == 0) entry = &h->comps[i];
  if (!entry && h->n) entry = &h->comps[h->n - 1];
  if (!entry) return cj_invalid("hlo: the module has no entry computation");
  cj_module *m = cj_module_create(filename);
  if (!m) return cj_oom();
  lw L = {m, h, m->filename ? m->filename : filename, 0, 0};
  cj_status st = NULL;
  if (h->name) {
    m->name = cj_intern(m, h->name, strlen(h->name));
    if (!m->name) st = cj_oom();
  }
  cj_op *fn = st ? NULL : cj_op_create(m, CJ_OP_FUNC, NULL, 0, 0, 1);
  if (!st && !fn) st = cj_oom();
  vl root = {0};
  if (!st) {
    fn->pos = (cj_srcpos){L.file, 0, 0};
    cj_block_append(cj_module_block(m), fn);
    st = comp_body(&L, entry->id, &fn->regions[0], CJ_OP_FUNC_RETURN, "entry", "module", &root);
    /* comp_body finds by id; an entry with a duplicate id falls back to lowering by pointer */
  }
  if (!st) {
    cj_block *b = cj_func_body(fn);
    const cj_type **ins = cj_alloc(m, sizeof *ins * (b->nargs ? b->nargs : 1));
    const cj_type **outs = cj_alloc(m, sizeof *outs * (root.n ? root.n : 1));
    if (!ins || !outs) st = cj_oom();
    for (uint32_t i = 0; !st && i < b->nargs; i++) ins[i] = b->args[i].type;
    for (uint32_t i = 0; !st && i < root.n; i++) outs[i] = root.v[i]->type;
    const cj_type *ft =
        st ? NULL : cj_type_function(m, (int32_t)b->nargs, ins, (int32_t)root.n, outs);
    if (!st && !ft) st = cj_oom();
    if (!st) st = cj_op_set_attr(m, fn, "sym_name", cj_attr_string(m, "main", 4));
    if (!st) st = cj_op_set_attr(m, fn, "function_type", cj_attr_type(m, ft));
    if (!st) st = set_entry_shardings(&L, entry, fn, &root);
  }
  if (st) {
    cj_module_free(m);
    return st;
  }
  *out = m;
  return NULL;
}

/* ------------------------------------------------------------------ entry points */

/* HLO text starts with `HloModule` (after blank lines and // comments) */
static bool is_hlo_text(const void *data, size_t len) {
  const char *p = data, *e = p + len;
  for (;;) {
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    if (e - p >= 2 && p[0] == '/' && p[1] == '/') {
      while (p < e && *p != '\n') p++;
      continue;
    }
    break;
  }
  return e - p >= 9 && memcmp(p, "HloModule", 9) == 0;
}


cj_status cj_read_hlo_program(const void *data, size_t len, cj_hlo_format format,
                              const char *filename, cj_module **out) {
  if (!out) return cj_invalid("cj_read_hlo_program: out is NULL");
  *out = NULL;
  if (!data && len) return cj_invalid("cj_read_hlo_program: data is NULL");
  hlo_module *h = NULL;
  cj_status st;
  if (format == CJ_HLO_TEXT || (format == CJ_HLO_PROTO && is_hlo_text(data, len)))
    st = cj_hlo_read_text(data, len, filename, &h);
  else
    st = cj_hlo_read_proto(data, len, format == CJ_HLO_PROTO_WITH_CONFIG, &h);
  if (!st) st = cj_hlo_lower(h, filename, out);
  cj_hlo_module_free(h);
  return st;
}

