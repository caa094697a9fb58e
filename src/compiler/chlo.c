/* cjrt: decomposing chlo ops into StableHLO (see compiler.h). The broadcasting ops become
 * broadcast_in_dim + the StableHLO op; constants become stablehlo.constant; the elementwise
 * special functions (erf, lgamma, asin, ...) stay when the backend runs them natively, else the
 * op is left for the backend to reject with its location. */
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"

enum { MAXR = 16 };

/* broadcasts v to the dims of `shape` (keeping v's element type); `bd` (rank(v) entries) maps
 * v's dims to result dims, NULL = numpy-style trailing alignment */
static CJ_MUST_USE cj_status bcast_to(cj_module *m, cj_op *at, cj_value *v, const cj_type *shape,
                          const int64_t *bd, cj_value **out) {
  const cj_type *vt = v->type;
  if (!cj_type_is_static(vt) || !cj_type_is_static(shape))
    return cj_op_error(at, CJ_UNIMPLEMENTED, "dynamic shapes are not supported here");
  if (vt->rank == shape->rank && !bd) {
    bool same = true;
    for (int32_t d = 0; d < vt->rank; d++)
      if (vt->dims[d] != shape->dims[d]) same = false;
    if (same) {
      *out = v;
      return NULL;
    }
  }
  if (vt->rank > shape->rank)
    return cj_op_error(at, CJ_INVALID_ARGUMENT, "operand rank %d exceeds the result rank %d",
                       vt->rank, shape->rank);
  int64_t dims[MAXR];
  for (int32_t d = 0; d < vt->rank; d++) {
    dims[d] = bd ? bd[d] : shape->rank - vt->rank + d;
    if (dims[d] < 0 || dims[d] >= shape->rank)
      return cj_op_error(at, CJ_INVALID_ARGUMENT, "bad broadcast dimension");
    int64_t od = vt->dims[d], rd = shape->dims[dims[d]];
    if (od != rd && od != 1)
      return cj_op_error(at, CJ_INVALID_ARGUMENT, "cannot broadcast dimension of size %lld to %lld",
                         (long long)od, (long long)rd);
  }
  const cj_type *rt = cj_type_with_elem(m, shape, vt->elem);
  cj_op *b = cj_build_op(m, at, at, CJ_OP_BROADCAST_IN_DIM, 1, &v, rt);
  if (!b || !rt) return cj_oom();
  const cj_attr *a = cj_attr_i64_array(m, vt->rank, dims);
  if (!a) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, b, "broadcast_dimensions", a));
  *out = &b->results[0];
  return NULL;
}

static bool binary_target(cj_op_kind k, cj_op_kind *out) {
  switch (k) {
#define B(c, s)             \
  case CJ_OP_CHLO_BROADCAST_##c: \
    *out = CJ_OP_##s;       \
    return true;
    B(ADD, ADD)
    B(ATAN2, ATAN2)
    B(DIVIDE, DIVIDE)
    B(MAXIMUM, MAXIMUM)
    B(MINIMUM, MINIMUM)
    B(MULTIPLY, MULTIPLY)
    B(NEXT_AFTER, CHLO_NEXT_AFTER)
    B(POLYGAMMA, CHLO_POLYGAMMA)
    B(POWER, POWER)
    B(REMAINDER, REMAINDER)
    B(SHIFT_LEFT, SHIFT_LEFT)
    B(SHIFT_RIGHT_ARITHMETIC, SHIFT_RIGHT_ARITHMETIC)
    B(SHIFT_RIGHT_LOGICAL, SHIFT_RIGHT_LOGICAL)
    B(SUBTRACT, SUBTRACT)
    B(ZETA, CHLO_ZETA)
    B(AND, AND)
    B(OR, OR)
    B(XOR, XOR)
    B(COMPLEX, COMPLEX)
    B(COMPARE, COMPARE)
#undef B
    default: return false;
  }
}

static CJ_MUST_USE cj_status decompose_binary(cj_module *m, cj_op *func, cj_op *op, cj_op_kind target) {
  const cj_type *rt = op->results[0].type;
  int64_t bd[MAXR], nbd = 0;
  bool have_bd = cj_op_get_i64s(op, "broadcast_dimensions", bd, MAXR, &nbd) && nbd > 0;
  cj_value *x = op->operands[0], *y = op->operands[1];
  const int64_t *bx = NULL, *by = NULL;
  if (have_bd) { /* the attribute maps the lower-rank operand */
    if (x->type->rank < y->type->rank && nbd == x->type->rank) bx = bd;
    if (y->type->rank < x->type->rank && nbd == y->type->rank) by = bd;
  }
  cj_value *xb, *yb;
  CJ_RETURN_IF_ERROR(bcast_to(m, op, x, rt, bx, &xb));
  CJ_RETURN_IF_ERROR(bcast_to(m, op, y, rt, by, &yb));
  cj_value *ops[2] = {xb, yb};
  cj_op *n = cj_build_op(m, op, op, target, 2, ops, rt);
  if (!n) return cj_oom();
  if (target == CJ_OP_COMPARE) {
    int32_t dir = 0, ct = -1;
    if (!cj_op_get_enum(op, "comparison_direction", CJ_EK_CHLO_COMPARISON_DIRECTION, &dir))
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "missing comparison_direction");
    CJ_RETURN_IF_ERROR(cj_op_set_attr(m, n, "comparison_direction",
                                      cj_attr_enum(m, CJ_EK_COMPARISON_DIRECTION, dir)));
    if (cj_op_get_enum(op, "compare_type", CJ_EK_CHLO_COMPARISON_TYPE, &ct))
      CJ_RETURN_IF_ERROR(cj_op_set_attr(m, n, "compare_type", cj_attr_enum(m, CJ_EK_COMPARISON_TYPE, ct)));
  }
  cj_replace_all_uses(func, &op->results[0], &n->results[0]);
  cj_block_remove(op->block, op);
  return NULL;
}

static CJ_MUST_USE cj_status decompose_select(cj_module *m, cj_op *func, cj_op *op) {
  const cj_type *rt = op->results[0].type;
  cj_value *b[3];
  for (int i = 0; i < 3; i++) CJ_RETURN_IF_ERROR(bcast_to(m, op, op->operands[i], rt, NULL, &b[i]));
  cj_op *n = cj_build_op(m, op, op, CJ_OP_SELECT, 3, b, rt);
  if (!n) return cj_oom();
  cj_replace_all_uses(func, &op->results[0], &n->results[0]);
  cj_block_remove(op->block, op);
  return NULL;
}

static CJ_MUST_USE cj_status make_constant(cj_module *m, cj_op *func, cj_op *op, const cj_attr *value) {
  cj_op *n = cj_build_op(m, op, op, CJ_OP_CONSTANT, 0, NULL, op->results[0].type);
  if (!n) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, n, "value", value));
  cj_replace_all_uses(func, &op->results[0], &n->results[0]);
  cj_block_remove(op->block, op);
  return NULL;
}

static CJ_MUST_USE cj_status decompose_constant_like(cj_module *m, cj_op *func, cj_op *op) {
  const cj_type *rt = op->results[0].type;
  const cj_attr *v = cj_op_attr(op, "value");
  if (!cj_type_is_tensor(rt) || !v) return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad constant_like");
  if (cj_type_is_quant(rt)) return cj_op_error(op, CJ_UNIMPLEMENTED, "quantized constant_like");
  cj_dtype dt = rt->dtype;
  unsigned char buf[16] = {0};
  if (v->kind == CJ_ATTR_DENSE) {
    if (!v->dense.nbytes) return cj_op_error(op, CJ_INVALID_ARGUMENT, "empty constant_like value");
    size_t n = v->dense.nbytes < sizeof buf ? v->dense.nbytes : sizeof buf;
    memcpy(buf, v->dense.data, n);
  } else if (v->kind == CJ_ATTR_FLOAT) {
    cj_elem_set_f64(dt, buf, 0, v->f.v);
  } else if (v->kind == CJ_ATTR_INT) {
    if (cj_dtype_is_float(dt) || cj_dtype_is_complex(dt))
      cj_elem_set_f64(dt, buf, 0, (double)v->i.v);
    else
      cj_elem_set_i64(dt, buf, 0, v->i.v);
  } else if (v->kind == CJ_ATTR_BOOL) {
    cj_elem_set_i64(dt, buf, 0, v->b ? 1 : 0);
  } else {
    return cj_op_error(op, CJ_UNIMPLEMENTED, "unsupported constant_like value");
  }
  if (!cj_type_is_static(rt)) return cj_op_error(op, CJ_UNIMPLEMENTED, "dynamic constant_like");
  const cj_attr *d = cj_attr_dense(m, rt, buf, (size_t)cj_dtype_bytes(dt), true);
  if (!d) return cj_oom();
  return make_constant(m, func, op, d);
}

/* ---- elementwise decompositions (upstream's formulas, built as StableHLO ops) ---- */

typedef struct bld {
  cj_module *m;
  cj_op *at;
  cj_status st;
} bld;

static cj_value *b_op(bld *b, cj_op_kind k, cj_value *x, cj_value *y, const cj_type *rt) {
  if (b->st || !x) return NULL;
  cj_value *ops[2] = {x, y};
  cj_op *o = cj_build_op(b->m, b->at, b->at, k, y ? 2 : 1, ops, rt ? rt : x->type);
  if (!o) {
    b->st = cj_oom();
    return NULL;
  }
  return &o->results[0];
}

static cj_value *b_const(bld *b, const cj_type *t, double v) {
  if (b->st) return NULL;
  unsigned char buf[16] = {0};
  cj_elem_set_f64(t->dtype, buf, 0, v);
  const cj_attr *d = cj_attr_dense(b->m, t, buf, (size_t)cj_dtype_bytes(t->dtype), true);
  cj_op *o = d ? cj_build_op(b->m, b->at, b->at, CJ_OP_CONSTANT, 0, NULL, t) : NULL;
  if (!o) {
    b->st = cj_oom();
    return NULL;
  }
  cj_status s = cj_op_set_attr(b->m, o, "value", d);
  if (s) b->st = s;
  return &o->results[0];
}

static cj_value *b_cmp(bld *b, cj_value *x, cj_value *y, int dir) {
  if (b->st || !x || !y) return NULL;
  const cj_type *pt = cj_type_with_elem(b->m, x->type, cj_type_elem(b->m, CJ_PRED));
  cj_value *r = b_op(b, CJ_OP_COMPARE, x, y, pt);
  if (r) {
    cj_status s = cj_op_set_attr(b->m, r->def, "comparison_direction",
                                 cj_attr_enum(b->m, CJ_EK_COMPARISON_DIRECTION, dir));
    if (s) b->st = s;
  }
  return r;
}

static cj_value *b_select(bld *b, cj_value *p, cj_value *x, cj_value *y) {
  if (b->st || !p || !x || !y) return NULL;
  cj_value *ops[3] = {p, x, y};
  cj_op *o = cj_build_op(b->m, b->at, b->at, CJ_OP_SELECT, 3, ops, x->type);
  if (!o) {
    b->st = cj_oom();
    return NULL;
  }
  return &o->results[0];
}

/* cosh(x) = e^(x + log(1/2)) + e^(log(1/2) - x); sinh(x) = e^(x + log(1/2)) - e^(log(1/2) - x)
 * for |x| >= 1 and (expm1(x) + expm1(x) / (expm1(x) + 1)) / 2 below (real types); computed in
 * f32 at least, as upstream's decomposition does, so results match XLA's. */
static CJ_MUST_USE cj_status decompose_sinh_cosh(cj_module *m, cj_op *func, cj_op *op, bool is_sinh) {
  const cj_type *t = op->results[0].type;
  if (!cj_type_is_static(t)) return NULL;
  cj_dtype dt = t->dtype;
  bool cplx = cj_dtype_is_complex(dt);
  if (!cplx && !cj_dtype_is_float(dt)) return NULL;
  bld b = {m, op, NULL};
  cj_value *x = op->operands[0];
  const cj_type *ct = t;
  bool up = !cplx && cj_dtype_bits(dt) < 32;
  if (up) {
    ct = cj_type_with_elem(m, t, cj_type_elem(m, CJ_F32));
    x = b_op(&b, CJ_OP_CONVERT, x, NULL, ct);
  }
  const cj_type *rt = cplx ? cj_type_with_elem(m, t, cj_type_elem(m, cj_dtype_component(dt))) : ct;
  cj_value *half = b_const(&b, ct, 0.5);
  cj_value *lh = b_op(&b, CJ_OP_LOG, half, NULL, NULL);
  cj_value *ea = b_op(&b, CJ_OP_EXPONENTIAL, b_op(&b, CJ_OP_ADD, x, lh, NULL), NULL, NULL);
  cj_value *es = b_op(&b, CJ_OP_EXPONENTIAL, b_op(&b, CJ_OP_SUBTRACT, lh, x, NULL), NULL, NULL);
  cj_value *r = b_op(&b, is_sinh ? CJ_OP_SUBTRACT : CJ_OP_ADD, ea, es, NULL);
  if (is_sinh && !cplx) {
    cj_value *em1 = b_op(&b, CJ_OP_EXPONENTIAL_MINUS_ONE, x, NULL, NULL);
    cj_value *one = b_const(&b, ct, 1.0);
    cj_value *ratio = b_op(&b, CJ_OP_DIVIDE, em1, b_op(&b, CJ_OP_ADD, em1, one, NULL), NULL);
    cj_value *small = b_op(&b, CJ_OP_MULTIPLY, half, b_op(&b, CJ_OP_ADD, em1, ratio, NULL), NULL);
    cj_value *ax = b_op(&b, CJ_OP_ABS, x, NULL, rt);
    r = b_select(&b, b_cmp(&b, ax, one, CJ_COMPARISON_DIRECTION_LT), small, r);
  }
  if (up) r = b_op(&b, CJ_OP_CONVERT, r, NULL, t);
  if (b.st) return b.st;
  cj_replace_all_uses(func, &op->results[0], r);
  cj_block_remove(op->block, op);
  return NULL;
}

/* ---- chlo.scan: a stablehlo.while over the scan dimension ----
 * carried: (i, carries..., outputs...); each step takes slice i (or D-1-i when reversed) of
 * every input without the scan dimension, runs the body, writes the body's outputs at that
 * position and carries the rest. */

static cj_op *app(cj_module *m, cj_block *blk, const cj_op *origin, cj_op_kind k, uint32_t n,
                  cj_value *const *opnds, const cj_type *rt) {
  cj_op *o = cj_build_op(m, NULL, origin, k, n, opnds, rt);
  if (o) cj_block_append(blk, o);
  return o;
}

static const cj_type *scalar_t(cj_module *m, cj_dtype dt) { return cj_type_tensor_of(m, dt, 0, NULL); }

static cj_op *app_const(cj_module *m, cj_block *blk, const cj_op *origin, const cj_type *t,
                        int64_t v) {
  unsigned char buf[16] = {0};
  if (cj_dtype_is_float(t->dtype) || cj_dtype_is_complex(t->dtype))
    cj_elem_set_f64(t->dtype, buf, 0, (double)v);
  else
    cj_elem_set_i64(t->dtype, buf, 0, v);
  const cj_attr *d = cj_attr_dense(m, t, buf, (size_t)cj_dtype_bytes(t->dtype), true);
  cj_op *o = d ? app(m, blk, origin, CJ_OP_CONSTANT, 0, NULL, t) : NULL;
  if (o && cj_op_set_attr(m, o, "value", d)) return NULL;
  return o;
}

static cj_op *app_cmp(cj_module *m, cj_block *blk, const cj_op *origin, cj_value *x, cj_value *y,
                      int dir) {
  const cj_type *pt = cj_type_with_elem(m, x->type, cj_type_elem(m, CJ_PRED));
  cj_value *o2[2] = {x, y};
  cj_op *o = app(m, blk, origin, CJ_OP_COMPARE, 2, o2, pt);
  if (o && cj_op_set_attr(m, o, "comparison_direction",
                          cj_attr_enum(m, CJ_EK_COMPARISON_DIRECTION, dir)))
    return NULL;
  return o;
}

/* The while body of a scan (bb: args index, carries, outputs): slices the inputs at the step's
 * index, clones the scan body, writes its outputs there and returns index + 1, the carries and
 * the outputs. */
static CJ_MUST_USE cj_status scan_body(cj_module *m, cj_op *op, cj_block *body, cj_block *bb, int64_t dim,
                           int64_t D, bool rev, uint32_t ni, uint32_t nc, uint32_t no) {
  const cj_type *i64 = scalar_t(m, CJ_S64);
  uint32_t nw = 1 + nc + no;
  cj_status st = NULL;
  cj_value **from = NULL, **to = NULL;
  uint32_t nmap = 0, cap = 0;
  cj_value *i = &bb->args[0];
  cj_value *idx = i;
  cj_op *zero = app_const(m, bb, op, i64, 0), *one = app_const(m, bb, op, i64, 1);
  if (!zero || !one) st = cj_oom();
  if (!st && rev) {
    cj_op *last = app_const(m, bb, op, i64, D - 1);
    cj_value *o2[2] = {last ? &last->results[0] : NULL, i};
    cj_op *sub = last ? app(m, bb, op, CJ_OP_SUBTRACT, 2, o2, i64) : NULL;
    if (!sub) st = cj_oom();
    else idx = &sub->results[0];
  }
  cap = body->nargs + 64;
  from = malloc(sizeof(cj_value *) * cap);
  to = malloc(sizeof(cj_value *) * cap);
  if (!from || !to) st = cj_oom();
  /* input slices */
  for (uint32_t k = 0; k < ni && !st; k++) {
    cj_value *x = op->operands[k];
    const cj_type *xt = x->type;
    if (!cj_type_is_static(xt) || dim >= xt->rank) {
      st = cj_op_error(op, CJ_UNIMPLEMENTED, "scan input %u must have a static shape", k);
      break;
    }
    int32_t r = xt->rank;
    cj_value **o = malloc(sizeof(cj_value *) * (size_t)(r + 1));
    int64_t ss[16];
    if (!o || r > 16) {
      free(o);
      st = cj_oom();
      break;
    }
    o[0] = x;
    for (int32_t d = 0; d < r; d++) {
      o[1 + d] = d == dim ? idx : &zero->results[0];
      ss[d] = d == dim ? 1 : xt->dims[d];
    }
    const cj_type *slt = cj_type_tensor(m, xt->elem, r, ss, NULL, NULL);
    cj_op *ds = app(m, bb, op, CJ_OP_DYNAMIC_SLICE, (uint32_t)(r + 1), o, slt);
    free(o);
    if (!ds || cj_op_set_attr(m, ds, "slice_sizes", cj_attr_i64_array(m, r, ss))) {
      st = cj_oom();
      break;
    }
    cj_value *dv = &ds->results[0];
    cj_op *rs = app(m, bb, op, CJ_OP_RESHAPE, 1, &dv, body->args[k].type);
    if (!rs) {
      st = cj_oom();
      break;
    }
    from[nmap] = &body->args[k];
    to[nmap++] = &rs->results[0];
  }
  for (uint32_t c = 0; c < nc && !st; c++) {
    from[nmap] = &body->args[ni + c];
    to[nmap++] = &bb->args[1 + c];
  }
  /* the body's ops */
  cj_op *term = NULL;
  for (cj_op *bo = body->first; bo && !st; bo = bo->next) {
    if (bo == body->last && (cj_op_info_get(bo->kind)->flags & CJ_OPF_TERMINATOR)) {
      term = bo;
      break;
    }
    cj_op *c = cj_op_clone_mapped(m, bo, &from, &to, &nmap, &cap);
    if (!c) {
      st = cj_oom();
      break;
    }
    cj_block_append(bb, c);
  }
  if (!st && (!term || term->nopnds != no + nc))
    st = cj_op_error(op, CJ_INVALID_ARGUMENT, "scan body returns %u values for %u outputs and %u carries",
                     term ? term->nopnds : 0, no, nc);
  cj_value **ret = st ? NULL : calloc(nw, sizeof *ret);
  if (!st && !ret) st = cj_oom();
  if (!st) {
    cj_value *o2[2] = {i, &one->results[0]};
    cj_op *inc = app(m, bb, op, CJ_OP_ADD, 2, o2, i64);
    if (!inc) st = cj_oom();
    else ret[0] = &inc->results[0];
  }
  for (uint32_t k = 0; k < no + nc && !st; k++) {
    cj_value *v = term->operands[k];
    for (uint32_t q = nmap; q-- > 0;)
      if (from[q] == v) {
        v = to[q];
        break;
      }
    if (k >= no) {
      ret[1 + (k - no)] = v;
      continue;
    }
    /* output k: written at idx */
    const cj_type *ot = op->results[k].type;
    int32_t r = ot->rank;
    int64_t us[16];
    if (r > 16) {
      st = cj_oom();
      break;
    }
    for (int32_t d = 0; d < r; d++) us[d] = d == dim ? 1 : ot->dims[d];
    const cj_type *ut = cj_type_tensor(m, v->type->elem, r, us, NULL, NULL);
    cj_op *rs = app(m, bb, op, CJ_OP_RESHAPE, 1, &v, ut);
    cj_value **o = malloc(sizeof(cj_value *) * (size_t)(r + 2));
    if (!rs || !o) {
      free(o);
      st = cj_oom();
      break;
    }
    o[0] = &bb->args[1 + nc + k];
    o[1] = &rs->results[0];
    for (int32_t d = 0; d < r; d++) o[2 + d] = d == dim ? idx : &zero->results[0];
    cj_op *dus = app(m, bb, op, CJ_OP_DYNAMIC_UPDATE_SLICE, (uint32_t)(r + 2), o, ot);
    free(o);
    if (!dus) {
      st = cj_oom();
      break;
    }
    ret[1 + nc + k] = &dus->results[0];
  }
  if (!st) {
    cj_op *r = cj_op_create(m, CJ_OP_RETURN, NULL, nw, 0, 0);
    if (!r) st = cj_oom();
    else {
      for (uint32_t k = 0; k < nw; k++) r->operands[k] = ret[k];
      cj_block_append(bb, r);
    }
  }
  free(ret);
  free(from);
  free(to);
  return st;
}

static CJ_MUST_USE cj_status decompose_scan(cj_module *m, cj_op *func, cj_op *op) {
  cj_block *body = op->nregions ? op->regions[0].first : NULL;
  int64_t seg[4], nseg = 0, dim = 0;
  if (!body) return cj_op_error(op, CJ_INVALID_ARGUMENT, "scan without a body");
  if (!cj_op_get_i64s(op, "operandSegmentSizes", seg, 4, &nseg) || nseg != 2 ||
      seg[0] + seg[1] != op->nopnds)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "scan without operandSegmentSizes [inputs, inits]");
  if (!cj_op_get_i64(op, "dimension", &dim)) return cj_op_error(op, CJ_INVALID_ARGUMENT, "scan without a dimension");
  bool rev = false;
  cj_op_get_bool(op, "is_reverse", &rev);
  uint32_t ni = (uint32_t)seg[0], nc = (uint32_t)seg[1];
  if (op->nresults < nc || body->nargs != ni + nc)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "scan body takes %u arguments for %u inputs and %u inits",
                       body->nargs, ni, nc);
  uint32_t no = op->nresults - nc;
  /* the scan length */
  int64_t D = -1;
  for (uint32_t i = 0; i < op->nopnds && i < ni; i++)
    if (cj_type_is_static(op->operands[i]->type) && dim < op->operands[i]->type->rank)
      D = op->operands[i]->type->dims[dim];
  for (uint32_t i = 0; D < 0 && i < no; i++)
    if (cj_type_is_static(op->results[i].type) && dim < op->results[i].type->rank)
      D = op->results[i].type->dims[dim];
  int64_t sz = 0;
  if (D < 0 && cj_op_get_i64(op, "scan_dim_size", &sz)) D = sz;
  if (D < 0) return cj_op_error(op, CJ_UNIMPLEMENTED, "scan length unknown (dynamic shapes)");
  for (uint32_t i = 0; i < op->nresults; i++)
    if (!cj_type_is_static(op->results[i].type))
      return cj_op_error(op, CJ_UNIMPLEMENTED, "scan results must have static shapes");
  const cj_type *i64 = scalar_t(m, CJ_S64);
  /* initial values: 0, inits, zero outputs */
  uint32_t nw = 1 + nc + no;
  cj_value **init = calloc(nw, sizeof *init);
  const cj_type **wt = calloc(nw, sizeof *wt);
  if (!init || !wt) {
    free(init);
    free(wt);
    return cj_oom();
  }
  cj_status st = NULL;
  cj_op *z = cj_build_op(m, op, op, CJ_OP_CONSTANT, 0, NULL, i64);
  unsigned char zb[16] = {0};
  if (!z || cj_op_set_attr(m, z, "value", cj_attr_dense(m, i64, zb, 8, true))) st = cj_oom();
  if (!st) {
    init[0] = &z->results[0];
    wt[0] = i64;
    for (uint32_t c = 0; c < nc; c++) {
      init[1 + c] = op->operands[ni + c];
      wt[1 + c] = init[1 + c]->type;
    }
    for (uint32_t o = 0; o < no && !st; o++) {
      const cj_type *t = op->results[o].type;
      cj_op *zc = cj_build_op(m, op, op, CJ_OP_CONSTANT, 0, NULL, t);
      const cj_attr *d = cj_attr_dense(m, t, zb, (size_t)cj_dtype_bytes(t->dtype), true);
      if (!zc || !d || cj_op_set_attr(m, zc, "value", d)) st = cj_oom();
      else {
        init[1 + nc + o] = &zc->results[0];
        wt[1 + nc + o] = t;
      }
    }
  }
  cj_op *w = st ? NULL : cj_op_create(m, CJ_OP_WHILE, NULL, nw, nw, 2);
  if (!st && !w) st = cj_oom();
  cj_block *cb = NULL, *bb = NULL;
  if (!st) {
    w->pos = op->pos;
    w->loc = op->loc;
    for (uint32_t i = 0; i < nw; i++) {
      w->operands[i] = init[i];
      w->results[i].type = wt[i];
    }
    cb = cj_region_add_block(m, &w->regions[0], nw, wt);
    bb = cj_region_add_block(m, &w->regions[1], nw, wt);
    if (!cb || !bb) st = cj_oom();
  }
  /* cond: i < D */
  if (!st) {
    cj_op *lim = app_const(m, cb, op, i64, D);
    cj_op *lt = lim ? app_cmp(m, cb, op, &cb->args[0], &lim->results[0], CJ_COMPARISON_DIRECTION_LT) : NULL;
    cj_op *ret = lt ? cj_op_create(m, CJ_OP_RETURN, NULL, 1, 0, 0) : NULL;
    if (!ret) st = cj_oom();
    else {
      ret->operands[0] = &lt->results[0];
      cj_block_append(cb, ret);
    }
  }
  /* body */
  if (!st) st = scan_body(m, op, body, bb, dim, D, rev, ni, nc, no);
  free(init);
  free(wt);
  if (st) return st;
  cj_block_insert_before(op->block, op, w);
  for (uint32_t k = 0; k < no; k++) cj_replace_all_uses(func, &op->results[k], &w->results[1 + nc + k]);
  for (uint32_t c = 0; c < nc; c++) cj_replace_all_uses(func, &op->results[no + c], &w->results[1 + c]);
  cj_block_remove(op->block, op);
  return NULL;
}

/* ---- chlo.ragged_dot: per group, a dot_general of the operands masked to the group ----
 *   mode 1 (the ragged dimension is an lhs non-contracting one; rhs has a group dimension):
 *     sum over groups g of dot(lhs rows of group g, rhs[g])
 *   mode 2 (the ragged dimension is contracting; the result gains a leading group dimension):
 *     result[g] = dot(lhs restricted to the contracting indices of group g, rhs)
 *   mode 3 (a ragged batch dimension): a plain dot_general
 * group_sizes [batch..., G] gives consecutive group lengths along the ragged dimension; its
 * batch dimensions are lhs's leading ones. */

static const cj_attr *i64s_or_empty(cj_module *m, const cj_attr *a) {
  return a ? a : cj_attr_i64_array(m, 0, NULL);
}

static CJ_MUST_USE cj_status rd_field(const cj_attr *dn, int f, int64_t *out, int64_t *n) {
  *n = 0;
  const cj_attr *a = cj_attr_field(dn, CJ_SK_RAGGED_DOT, f);
  if (a && !cj_attr_get_i64s(a, out, 16, n)) return cj_invalid("bad ragged_dot dimension list");
  return NULL;
}

static cj_value *mk_dot(bld *b, cj_value *l, cj_value *r, const cj_type *rt, const int64_t *lb,
                        const int64_t *rb, int64_t nb, const int64_t *lc, const int64_t *rc,
                        int64_t ncn) {
  cj_value *v = b_op(b, CJ_OP_DOT_GENERAL, l, r, rt);
  if (!v) return NULL;
  const cj_attr *f[CJ_SF_DOT__COUNT] = {0};
  f[CJ_SF_DOT_lhs_batching_dimensions] = cj_attr_i64_array(b->m, nb, lb);
  f[CJ_SF_DOT_rhs_batching_dimensions] = cj_attr_i64_array(b->m, nb, rb);
  f[CJ_SF_DOT_lhs_contracting_dimensions] = cj_attr_i64_array(b->m, ncn, lc);
  f[CJ_SF_DOT_rhs_contracting_dimensions] = cj_attr_i64_array(b->m, ncn, rc);
  const cj_attr *a = cj_attr_struct(b->m, CJ_SK_DOT, f);
  cj_status s = a ? cj_op_set_attr(b->m, v->def, "dot_dimension_numbers", a) : cj_oom();
  if (s) b->st = s;
  return v;
}

static cj_value *b_bcast(bld *b, cj_value *x, const cj_type *rt, int64_t n, const int64_t *dims) {
  cj_value *v = b_op(b, CJ_OP_BROADCAST_IN_DIM, x, NULL, rt);
  if (!v) return NULL;
  cj_status s = cj_op_set_attr(b->m, v->def, "broadcast_dimensions", cj_attr_i64_array(b->m, n, dims));
  if (s) b->st = s;
  return v;
}

static cj_value *b_slice(bld *b, cj_value *x, const int64_t *start, const int64_t *limit) {
  const cj_type *xt = x->type;
  int64_t d[16], one[16];
  for (int32_t i = 0; i < xt->rank; i++) {
    d[i] = limit[i] - start[i];
    one[i] = 1;
  }
  cj_value *v = b_op(b, CJ_OP_SLICE, x, NULL, cj_type_tensor(b->m, xt->elem, xt->rank, d, NULL, NULL));
  if (!v) return NULL;
  cj_status s = cj_op_set_attr(b->m, v->def, "start_indices", cj_attr_i64_array(b->m, xt->rank, start));
  if (!s) s = cj_op_set_attr(b->m, v->def, "limit_indices", cj_attr_i64_array(b->m, xt->rank, limit));
  if (!s) s = cj_op_set_attr(b->m, v->def, "strides", cj_attr_i64_array(b->m, xt->rank, one));
  if (s) b->st = s;
  return v;
}

/* the size of group g ([batch...] i64) */
static cj_value *group_size(bld *b, cj_value *gs, int64_t g) {
  const cj_type *t = gs->type;
  int64_t st[16] = {0}, li[16];
  for (int32_t i = 0; i < t->rank; i++) li[i] = t->dims[i];
  st[t->rank - 1] = g;
  li[t->rank - 1] = g + 1;
  cj_value *s = b_slice(b, gs, st, li);
  cj_value *r = b_op(b, CJ_OP_RESHAPE, s, NULL,
                     cj_type_tensor(b->m, t->elem, t->rank - 1, t->dims, NULL, NULL));
  if (r && r->type->dtype != CJ_S64)
    r = b_op(b, CJ_OP_CONVERT, r, NULL, cj_type_tensor_of(b->m, CJ_S64, t->rank - 1, t->dims));
  return r;
}

/* x where start <= iota(dim) < limit (start/limit [batch...] broadcast over x's leading dims),
 * zero elsewhere */
static cj_value *ragged_mask(bld *b, cj_value *x, cj_value *zero, cj_value *start, cj_value *limit,
                             int64_t dim) {
  const cj_type *xt = x->type;
  const cj_type *it = cj_type_tensor_of(b->m, CJ_S64, xt->rank, xt->dims);
  cj_value *io = b_op(b, CJ_OP_IOTA, NULL, NULL, it);
  if (b->st) return NULL;
  if (!io) {
    cj_op *o = cj_build_op(b->m, b->at, b->at, CJ_OP_IOTA, 0, NULL, it);
    if (!o) {
      b->st = cj_oom();
      return NULL;
    }
    cj_status s = cj_op_set_attr(b->m, o, "iota_dimension", cj_attr_int(b->m, dim, NULL));
    if (s) b->st = s;
    io = &o->results[0];
  }
  int64_t bd[16];
  int64_t nb = start->type->rank;
  for (int64_t i = 0; i < nb; i++) bd[i] = i;
  cj_value *sb = b_bcast(b, start, it, nb, bd), *lb = b_bcast(b, limit, it, nb, bd);
  cj_value *m1 = b_cmp(b, io, sb, CJ_COMPARISON_DIRECTION_GE);
  cj_value *m2 = b_cmp(b, io, lb, CJ_COMPARISON_DIRECTION_LT);
  cj_value *mk = b_op(b, CJ_OP_AND, m1, m2, NULL);
  return b_select(b, mk, x, zero);
}

static CJ_MUST_USE cj_status decompose_ragged_dot(cj_module *m, cj_op *func, cj_op *op) {
  cj_value *lhs = op->operands[0], *rhs = op->operands[1], *gs = op->operands[2];
  const cj_type *lt = lhs->type, *rt = rhs->type, *ot = op->results[0].type;
  if (!cj_type_is_static(lt) || !cj_type_is_static(rt) || !cj_type_is_static(ot) ||
      !cj_type_is_static(gs->type) || gs->type->rank < 1 || lt->rank > 16 || rt->rank > 16)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "ragged_dot needs static shapes");
  const cj_attr *dn = cj_op_attr(op, "ragged_dot_dimension_numbers");
  if (!dn) return cj_op_error(op, CJ_INVALID_ARGUMENT, "missing ragged_dot_dimension_numbers");
  int64_t lb[16], rb[16], lc[16], rc[16], lr[16], rg[16], nlb, nrb, nlc, nrc, nlr, nrg;
  cj_status e = rd_field(dn, CJ_SF_RAGGED_DOT_lhs_batching_dimensions, lb, &nlb);
  if (!e) e = rd_field(dn, CJ_SF_RAGGED_DOT_rhs_batching_dimensions, rb, &nrb);
  if (!e) e = rd_field(dn, CJ_SF_RAGGED_DOT_lhs_contracting_dimensions, lc, &nlc);
  if (!e) e = rd_field(dn, CJ_SF_RAGGED_DOT_rhs_contracting_dimensions, rc, &nrc);
  if (!e) e = rd_field(dn, CJ_SF_RAGGED_DOT_lhs_ragged_dimensions, lr, &nlr);
  if (!e) e = rd_field(dn, CJ_SF_RAGGED_DOT_rhs_group_dimensions, rg, &nrg);
  if (e) {
    cj_status_ignore(e); /* rd_field's one message says less than this one */
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad ragged_dot_dimension_numbers");
  }
  (void)i64s_or_empty;
  if (nlb != nrb || nlc != nrc || nlr != 1)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad ragged_dot_dimension_numbers");
  bld b = {m, op, NULL};
  cj_value *out = NULL;
  int64_t G = gs->type->dims[gs->type->rank - 1];
  const cj_type *bt = cj_type_tensor_of(m, CJ_S64, gs->type->rank - 1, gs->type->dims);
  if (lt->rank < rt->rank) { /* mode 1 */
    if (nrg != 1 || rg[0] < 0 || rg[0] >= rt->rank)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "mode 1 needs one rhs group dimension");
    int64_t g0 = rg[0];
    int64_t arb[16], arc[16];
    for (int64_t i = 0; i < nrb; i++) arb[i] = rb[i] > g0 ? rb[i] - 1 : rb[i];
    for (int64_t i = 0; i < nrc; i++) arc[i] = rc[i] > g0 ? rc[i] - 1 : rc[i];
    cj_value *zero = b_const(&b, cj_type_tensor_of(m, lt->dtype, 0, NULL), 0);
    zero = b_bcast(&b, zero, lt, 0, NULL);
    cj_value *start = b_bcast(&b, b_const(&b, scalar_t(m, CJ_S64), 0), bt, 0, NULL);
    int64_t rd[16], nrd = 0;
    for (int32_t d = 0; d < rt->rank; d++)
      if (d != g0) rd[nrd++] = rt->dims[d];
    const cj_type *rgt = cj_type_tensor(m, rt->elem, (int32_t)nrd, rd, NULL, NULL);
    for (int64_t g = 0; g < G && !b.st; g++) {
      cj_value *limit = b_op(&b, CJ_OP_ADD, start, group_size(&b, gs, g), NULL);
      cj_value *lm = ragged_mask(&b, lhs, zero, start, limit, lr[0]);
      int64_t st[16] = {0}, li[16];
      for (int32_t d = 0; d < rt->rank; d++) li[d] = rt->dims[d];
      st[g0] = g;
      li[g0] = g + 1;
      cj_value *rs = b_op(&b, CJ_OP_RESHAPE, b_slice(&b, rhs, st, li), NULL, rgt);
      cj_value *d = mk_dot(&b, lm, rs, ot, lb, arb, nlb, lc, arc, nlc);
      out = out ? b_op(&b, CJ_OP_ADD, out, d, NULL) : d;
      start = limit;
    }
  } else if (lt->rank < ot->rank) { /* mode 2 */
    int64_t rr = -1;
    for (int64_t i = 0; i < nlc; i++)
      if (lc[i] == lr[0]) rr = rc[i];
    if (rr < 0) return cj_op_error(op, CJ_INVALID_ARGUMENT, "the ragged dimension is not contracting");
    cj_value *zero = b_const(&b, cj_type_tensor_of(m, lt->dtype, 0, NULL), 0);
    zero = b_bcast(&b, zero, lt, 0, NULL);
    cj_value *start = b_bcast(&b, b_const(&b, scalar_t(m, CJ_S64), 0), bt, 0, NULL);
    const cj_type *gt = cj_type_tensor(m, ot->elem, ot->rank - 1, ot->dims + 1, NULL, NULL);
    int64_t one_d[16];
    one_d[0] = 1;
    for (int32_t d = 1; d < ot->rank; d++) one_d[d] = ot->dims[d];
    const cj_type *g1t = cj_type_tensor(m, ot->elem, ot->rank, one_d, NULL, NULL);
    cj_value **parts = calloc((size_t)(G ? G : 1), sizeof *parts);
    if (!parts) return cj_oom();
    for (int64_t g = 0; g < G && !b.st; g++) {
      cj_value *limit = b_op(&b, CJ_OP_ADD, start, group_size(&b, gs, g), NULL);
      cj_value *lm = ragged_mask(&b, lhs, zero, start, limit, lr[0]);
      cj_value *d = mk_dot(&b, lm, rhs, gt, lb, rb, nlb, lc, rc, nlc);
      parts[g] = b_op(&b, CJ_OP_RESHAPE, d, NULL, g1t);
      start = limit;
    }
    if (!b.st) {
      cj_op *c = cj_build_op(m, op, op, CJ_OP_CONCATENATE, (uint32_t)G, parts, ot);
      if (!c || cj_op_set_attr(m, c, "dimension", cj_attr_int(m, 0, NULL))) b.st = cj_oom();
      else out = &c->results[0];
    }
    free(parts);
  } else { /* mode 3 */
    out = mk_dot(&b, lhs, rhs, ot, lb, rb, nlb, lc, rc, nlc);
  }
  if (b.st) return b.st;
  if (!out) return cj_op_error(op, CJ_INVALID_ARGUMENT, "ragged_dot with no groups");
  cj_replace_all_uses(func, &op->results[0], out);
  cj_block_remove(op->block, op);
  return NULL;
}

/* ---- custom_call @mhlo.<op> {mhlo.attributes = {...}, mhlo.version = 1}: how JAX before 0.8
 * sends the chlo ops that have no StableHLO twin (erf as @mhlo.erf, top_k as @mhlo.topk, ...).
 * Turned back into the chlo op, with the dictionary's entries as its attributes, and verified
 * as one; a name that is no chlo op is left to the backend (which names it in its error). */
static CJ_MUST_USE cj_status recompose_mhlo_call(cj_module *m, cj_op *func, cj_op *op, cj_op **out) {
  *out = op;
  const char *t = NULL;
  size_t n = 0;
  if (!cj_attr_get_str(cj_op_attr(op, "call_target_name"), &t, &n) || n <= 5 ||
      memcmp(t, "mhlo.", 5) != 0)
    return NULL;
  const char *base = t + 5;
  size_t bn = n - 5;
  if (bn == 4 && memcmp(base, "topk", 4) == 0) {
    base = "top_k";
    bn = 5;
  }
  char name[64];
  if (bn + 6 > sizeof name) return NULL;
  memcpy(name, "chlo.", 5);
  memcpy(name + 5, base, bn);
  name[5 + bn] = '\0';
  cj_op_kind k = cj_op_kind_from_name(name, 5 + bn);
  if (k == CJ_OP_UNKNOWN) return NULL;
  cj_op *r = cj_op_create(m, k, NULL, op->nopnds, op->nresults, 0);
  if (!r) return cj_oom();
  for (uint32_t i = 0; i < op->nopnds; i++) r->operands[i] = op->operands[i];
  for (uint32_t i = 0; i < op->nresults; i++) r->results[i].type = op->results[i].type;
  r->pos = op->pos;
  r->loc = op->loc;
  const cj_attr *d = cj_op_attr(op, "mhlo.attributes");
  if (d && d->kind == CJ_ATTR_DICT)
    for (int32_t i = 0; i < d->dict.n; i++)
      CJ_RETURN_IF_ERROR(cj_op_set_attr(m, r, d->dict.items[i].name, d->dict.items[i].value));
  CJ_RETURN_IF_ERROR(cj_verify_op(r));
  cj_block_insert_before(op->block, op, r);
  for (uint32_t i = 0; i < op->nresults; i++)
    cj_replace_all_uses(func, &op->results[i], &r->results[i]);
  cj_block_remove(op->block, op);
  *out = r;
  return NULL;
}

/* ---- custom_call @ApproxTopK: jax.lax.approx_max_k / approx_min_k for platforms other than
 * TPU ({mhlo.backend_config = {top_k, reduction_dim, aggregate_to_topk, recall_target, ...}},
 * operands: N inputs then N initial values, called_computations = [the comparator]). As XLA
 * does off TPUs, computed exactly: a stable sort of the inputs along reduction_dim with the
 * comparator, sliced to the results' size there (top_k with aggregate_to_topk, else the whole
 * dimension). */
static const cj_attr *dict_get(const cj_attr *d, const char *name) {
  if (!d || d->kind != CJ_ATTR_DICT) return NULL;
  for (int32_t i = 0; i < d->dict.n; i++)
    if (strcmp(d->dict.items[i].name, name) == 0) return d->dict.items[i].value;
  return NULL;
}

static CJ_MUST_USE cj_status rewrite_approx_top_k(cj_module *m, cj_op *func, cj_op *op, cj_op **out) {
  *out = op;
  const char *t = NULL;
  size_t n = 0;
  if (!cj_attr_get_str(cj_op_attr(op, "call_target_name"), &t, &n) || n != 10 ||
      memcmp(t, "ApproxTopK", 10) != 0)
    return NULL;
  const cj_attr *cfg = cj_op_attr(op, "mhlo.backend_config");
  int64_t dim = -1;
  if (!cj_attr_get_i64(dict_get(cfg, "reduction_dim"), &dim))
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @ApproxTopK needs mhlo.backend_config with reduction_dim");
  uint32_t N = op->nresults;
  if (N == 0 || op->nopnds != 2 * N)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @ApproxTopK: %u operands for %u results (want inputs and "
                       "as many initial values)", op->nopnds, N);
  const cj_type *in0 = op->operands[0]->type;
  if (!cj_type_is_static(in0) || dim < 0 || dim >= in0->rank)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @ApproxTopK: reduction_dim %lld out of range for %s operands",
                       (long long)dim, cj_type_is_static(in0) ? "its" : "dynamic");
  for (uint32_t i = 0; i < N; i++) {
    const cj_type *it = op->operands[i]->type, *rt = op->results[i].type;
    bool ok = it->kind == CJ_TYPE_TENSOR && rt->kind == CJ_TYPE_TENSOR && cj_type_is_static(it) &&
              cj_type_is_static(rt) && it->rank == in0->rank && rt->rank == in0->rank &&
              it->elem == rt->elem;
    for (int32_t d = 0; ok && d < in0->rank; d++)
      ok = it->dims[d] == in0->dims[d] &&
           (d == dim ? rt->dims[d] <= it->dims[d] : rt->dims[d] == it->dims[d]);
    if (!ok)
      return cj_op_error(op, CJ_INVALID_ARGUMENT,
                         "custom_call @ApproxTopK: operand %u and result %u do not match (same "
                         "element type and shape, at most as long along dimension %lld)",
                         i, i, (long long)dim);
  }
  const cj_attr *cc = cj_op_attr(op, "called_computations");
  const cj_attr *sym = cc && cc->kind == CJ_ATTR_ARRAY && cc->arr.n == 1 ? cc->arr.items[0] : NULL;
  cj_op *cmp = sym && sym->kind == CJ_ATTR_SYMREF && !sym->sym.nnested
                   ? cj_module_lookup_symbol(m, sym->sym.root) : NULL;
  cj_block *body = cmp && cmp->kind == CJ_OP_FUNC ? cj_func_body(cmp) : NULL;
  if (!body || body->nargs != 2 * N || !body->last || body->last->nopnds != 1)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @ApproxTopK needs one comparator function of %u arguments "
                       "in called_computations", 2 * N);
  /* the sort, its comparator region a copy of the function's body */
  cj_op *s = cj_op_create(m, CJ_OP_SORT, NULL, N, N, 1);
  if (!s) return cj_oom();
  s->pos = op->pos;
  s->loc = op->loc;
  for (uint32_t i = 0; i < N; i++) {
    s->operands[i] = op->operands[i];
    s->results[i].type = op->operands[i]->type;
  }
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, s, "dimension", cj_attr_int(m, dim, cj_type_elem(m, CJ_S64))));
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, s, "is_stable", cj_attr_bool(m, true)));
  const cj_type *argt[64];
  if (body->nargs > 64) return cj_op_error(op, CJ_UNIMPLEMENTED, "ApproxTopK with over 32 inputs");
  for (uint32_t i = 0; i < body->nargs; i++) argt[i] = body->args[i].type;
  cj_block *blk = cj_region_add_block(m, &s->regions[0], body->nargs, argt);
  if (!blk) return cj_oom();
  uint32_t nmap = 0, cap = 0;
  cj_value **from = NULL, **to = NULL;
  cj_status st = NULL;
  for (cj_op *o = body->first; o && !st; o = o->next) {
    /* the function's arguments are the block's: one map entry each, then each clone's results */
    if (!nmap && body->nargs) {
      cap = body->nargs + 16;
      from = malloc(sizeof *from * cap);
      to = malloc(sizeof *to * cap);
      if (!from || !to) {
        st = cj_oom();
        break;
      }
      for (uint32_t i = 0; i < body->nargs; i++) {
        from[nmap] = &body->args[i];
        to[nmap++] = &blk->args[i];
      }
    }
    cj_op *c;
    if (o == body->last) { /* func.return -> stablehlo.return */
      cj_value *rv = o->operands[0];
      for (uint32_t q = nmap; q-- > 0;)
        if (from[q] == rv) {
          rv = to[q];
          break;
        }
      c = cj_build_op(m, NULL, o, CJ_OP_RETURN, 1, &rv, NULL);
      if (!c) st = cj_oom();
      else cj_block_append(blk, c);
      break;
    }
    c = cj_op_clone_mapped(m, o, &from, &to, &nmap, &cap);
    if (!c) {
      st = cj_oom();
      break;
    }
    cj_block_append(blk, c);
  }
  free(from);
  free(to);
  CJ_RETURN_IF_ERROR(st);
  CJ_RETURN_IF_ERROR(cj_verify_op(s));
  cj_block_insert_before(op->block, op, s);
  /* the leading part along dim, where the result is shorter */
  for (uint32_t i = 0; i < N; i++) {
    const cj_type *rt = op->results[i].type;
    cj_value *v = &s->results[i];
    if (rt != v->type) {
      size_t rb = sizeof(int64_t) * (size_t)(rt->rank ? rt->rank : 1);
      int64_t *start = cj_alloc(m, rb), *stride = cj_alloc(m, rb);
      if (!start || !stride) return cj_oom();
      for (int32_t d = 0; d < rt->rank; d++) {
        start[d] = 0;
        stride[d] = 1;
      }
      cj_op *sl = cj_build_op(m, op, op, CJ_OP_SLICE, 1, &v, rt);
      if (!sl) return cj_oom();
      CJ_RETURN_IF_ERROR(cj_op_set_attr(m, sl, "start_indices", cj_attr_i64_array(m, rt->rank, start)));
      CJ_RETURN_IF_ERROR(cj_op_set_attr(m, sl, "limit_indices", cj_attr_i64_array(m, rt->rank, rt->dims)));
      CJ_RETURN_IF_ERROR(cj_op_set_attr(m, sl, "strides", cj_attr_i64_array(m, rt->rank, stride)));
      v = &sl->results[0];
    }
    cj_replace_all_uses(func, &op->results[i], v);
  }
  cj_block_remove(op->block, op);
  *out = s;
  return NULL;
}

/* ---- stablehlo.cross-replica-sum (an op outside the spec that StableHLO still carries, and
 * VHLO as cross-replica-sum_v1; JAX 0.7 emits it for a psum over a nested pmap axis): XLA's
 * CrossReplicaSum, an all_reduce with an add combiner over replica_groups, in cross-replica
 * mode (no channel). Read as an op of no known kind, carried by name; rewritten here. */
static CJ_MUST_USE cj_status rewrite_cross_replica_sum(cj_module *m, cj_op *func, cj_op *op,
                                                       cj_op **out) {
  *out = op;
  if (!op->name || strcmp(op->name, "stablehlo.cross-replica-sum") != 0) return NULL;
  const cj_attr *groups = cj_op_attr(op, "replica_groups");
  if (op->nopnds != 1 || op->nresults != 1 || op->nregions != 0 || !groups)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "stablehlo.cross-replica-sum takes one operand, one result and "
                       "replica_groups (%u operands, %u results, %s)",
                       op->nopnds, op->nresults, groups ? "replica_groups" : "no replica_groups");
  const cj_type *t = op->operands[0]->type;
  if (!t || t->kind != CJ_TYPE_TENSOR || op->results[0].type != t)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "stablehlo.cross-replica-sum: the result type must be the operand's tensor type");
  cj_op *ar = cj_op_create(m, CJ_OP_ALL_REDUCE, NULL, 1, 1, 1);
  if (!ar) return cj_oom();
  ar->pos = op->pos;
  ar->loc = op->loc;
  ar->operands[0] = op->operands[0];
  ar->results[0].type = t;
  const cj_type *st = cj_type_tensor(m, t->elem, 0, NULL, NULL, NULL);
  if (!st) return cj_oom();
  const cj_type *at[2] = {st, st};
  cj_block *rb = cj_region_add_block(m, &ar->regions[0], 2, at);
  if (!rb) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_build_combiner(m, rb, op, CJ_OP_ADD, st));
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, ar, "replica_groups", groups));
  CJ_RETURN_IF_ERROR(cj_verify_op(ar));
  cj_block_insert_before(op->block, op, ar);
  cj_replace_all_uses(func, &op->results[0], &ar->results[0]);
  cj_block_remove(op->block, op);
  *out = ar;
  return NULL;
}

static CJ_MUST_USE cj_status chlo_block(cj_module *m, cj_op *func, cj_block *b, const cj_compile_hooks *h) {
  for (cj_op *op = b->first; op;) {
    cj_op *next = op->next;
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next)
        CJ_RETURN_IF_ERROR(chlo_block(m, func, nb, h));
    if (op->kind == CJ_OP_CUSTOM_CALL) CJ_RETURN_IF_ERROR(recompose_mhlo_call(m, func, op, &op));
    if (op->kind == CJ_OP_CUSTOM_CALL) CJ_RETURN_IF_ERROR(rewrite_approx_top_k(m, func, op, &op));
    if (op->kind == CJ_OP_UNKNOWN) CJ_RETURN_IF_ERROR(rewrite_cross_replica_sum(m, func, op, &op));
    cj_op_kind target;
    if (binary_target(op->kind, &target)) {
      CJ_RETURN_IF_ERROR(decompose_binary(m, func, op, target));
      /* the new op may be a chlo op itself (next_after, polygamma, zeta): it stays if native */
    } else if (op->kind == CJ_OP_CHLO_BROADCAST_SELECT) {
      CJ_RETURN_IF_ERROR(decompose_select(m, func, op));
    } else if (op->kind == CJ_OP_CHLO_CONSTANT) {
      CJ_RETURN_IF_ERROR(make_constant(m, func, op, cj_op_attr(op, "value")));
    } else if (op->kind == CJ_OP_CHLO_CONSTANT_LIKE) {
      CJ_RETURN_IF_ERROR(decompose_constant_like(m, func, op));
    } else if (op->kind == CJ_OP_CHLO_SINH || op->kind == CJ_OP_CHLO_COSH) {
      CJ_RETURN_IF_ERROR(decompose_sinh_cosh(m, func, op, op->kind == CJ_OP_CHLO_SINH));
    } else if (op->kind == CJ_OP_CHLO_SCAN) {
      CJ_RETURN_IF_ERROR(decompose_scan(m, func, op));
    } else if (op->kind == CJ_OP_CHLO_RAGGED_DOT) {
      CJ_RETURN_IF_ERROR(decompose_ragged_dot(m, func, op));
    }
    op = next;
  }
  (void)h;
  return NULL;
}

cj_status cj_pass_chlo(cj_module *m, cj_op *func, const cj_compile_hooks *hooks) {
  cj_block *b = cj_func_body(func);
  return b ? chlo_block(m, func, b, hooks) : NULL;
}
