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
static cj_status bcast_to(cj_module *m, cj_op *at, cj_value *v, const cj_type *shape,
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

static cj_status decompose_binary(cj_module *m, cj_op *func, cj_op *op, cj_op_kind target) {
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

static cj_status decompose_select(cj_module *m, cj_op *func, cj_op *op) {
  const cj_type *rt = op->results[0].type;
  cj_value *b[3];
  for (int i = 0; i < 3; i++) CJ_RETURN_IF_ERROR(bcast_to(m, op, op->operands[i], rt, NULL, &b[i]));
  cj_op *n = cj_build_op(m, op, op, CJ_OP_SELECT, 3, b, rt);
  if (!n) return cj_oom();
  cj_replace_all_uses(func, &op->results[0], &n->results[0]);
  cj_block_remove(op->block, op);
  return NULL;
}

static cj_status make_constant(cj_module *m, cj_op *func, cj_op *op, const cj_attr *value) {
  cj_op *n = cj_build_op(m, op, op, CJ_OP_CONSTANT, 0, NULL, op->results[0].type);
  if (!n) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, n, "value", value));
  cj_replace_all_uses(func, &op->results[0], &n->results[0]);
  cj_block_remove(op->block, op);
  return NULL;
}

static cj_status decompose_constant_like(cj_module *m, cj_op *func, cj_op *op) {
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
static cj_status decompose_sinh_cosh(cj_module *m, cj_op *func, cj_op *op, bool is_sinh) {
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

static cj_status chlo_block(cj_module *m, cj_op *func, cj_block *b, const cj_compile_hooks *h) {
  for (cj_op *op = b->first; op;) {
    cj_op *next = op->next;
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next)
        CJ_RETURN_IF_ERROR(chlo_block(m, func, nb, h));
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
