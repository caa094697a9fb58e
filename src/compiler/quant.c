/* cjrt: lowering quantized types and ops to integer and float math (see compiler.h).
 *
 * The arithmetic is the reference interpreter's (it runs StableHLO's quant-to-math lowering before
 * interpreting), so results match it bit for bit where the float math is IEEE:
 *
 *   uniform_quantize f32 -> q    clamp(min, x / scale + zp, max), round half to even, convert
 *   uniform_quantize q -> q'     requantize: x * (s/s') + (z' - z * s/s') in f32, clamp when the
 *                                storage is narrower than 32 bits, round half to even
 *   uniform_dequantize           (convert<i32>(x) - zp) converted to f32, times scale
 *   add (per-tensor)             both sides requantized to the result's parameters in i32, summed,
 *                                minus zp, clamped to the storage range
 *   dot / dot_general            integer dot in i32 with zero-point corrections, rescaled by
 *                                s_l * s_r / s_res (when that is not ~1), plus the result zp;
 *                                a float lhs with a quantized rhs dequantizes the rhs (weights only)
 *   data movement and selection  (reshape, transpose, slice, gather, pad, concatenate, select,
 *                                max/min of equal types, reduce_window, ...) work on the stored
 *                                integers unchanged
 *   every other op               dequantize the operands, run the op in f32, quantize the results
 * Scales and float zero points are rounded to f32 as the reference does. Per-axis parameters are
 * broadcast along the quantized dimension.
 *
 * Convolutions keep their quantized types (the CPU backend's convolution implements quantized
 * semantics itself): their operands are bridged from storage integers with bitcast_convert and
 * their results bitcast back. After the pass no other value has a quantized type.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"

enum { MAXR = 16 };

/* op->scratch marks: the quantized type a rewritten value stands for (a cj_type *), or KEEP */
static const char kKeep = 0;
#define KEEP ((void *)&kKeep)

typedef struct qb {
  cj_module *m;
  cj_op *func;
  cj_op *at; /* new ops go before this op */
  cj_status st;
} qb;

static const cj_quant *quant_of_type(const cj_type *t) {
  if (!t) return NULL;
  if (t->kind == CJ_TYPE_QUANT) return t->quant;
  if ((t->kind == CJ_TYPE_TENSOR || t->kind == CJ_TYPE_UNRANKED) && t->elem &&
      t->elem->kind == CJ_TYPE_QUANT)
    return t->elem->quant;
  return NULL;
}

/* the quantized tensor type value v stands for (its own type, or the one recorded when an op
 * producing it was rewritten), NULL if it is not quantized */
static const cj_type *qtype_of(const cj_value *v) {
  if (!v) return NULL;
  if (quant_of_type(v->type)) return v->type;
  if (v->def && v->def->scratch && v->def->scratch != KEEP && v->index == 0) {
    const cj_type *t = v->def->scratch;
    if (quant_of_type(t)) return t;
  }
  return NULL;
}

static const cj_quant *qof(const cj_value *v) { return quant_of_type(qtype_of(v)); }

static bool quant_equal(const cj_quant *a, const cj_quant *b) {
  if (a == b) return true;
  if (!a || !b) return false;
  if (a->storage != b->storage || a->expressed != b->expressed || a->storage_min != b->storage_min ||
      a->storage_max != b->storage_max || a->axis != b->axis || a->nscales != b->nscales)
    return false;
  for (int32_t i = 0; i < a->nscales; i++)
    if (a->scales[i] != b->scales[i] || a->zero_points[i] != b->zero_points[i]) return false;
  return true;
}

static bool per_axis(const cj_quant *q) { return q->axis >= 0; }

/* the same shape with element type dt (quantized element types become their storage) */
static const cj_type *tshape(qb *b, const cj_type *t, cj_dtype dt) {
  if (b->st) return NULL;
  const cj_type *r = cj_type_with_elem(b->m, t, cj_type_elem(b->m, dt));
  if (!r) b->st = cj_oom();
  return r;
}

/* a type with every quantized element type replaced by its storage type */
static const cj_type *strip_type(cj_module *m, const cj_type *t) {
  if (!t) return t;
  if (t->kind == CJ_TYPE_QUANT) return cj_type_elem(m, t->quant->storage);
  if ((t->kind == CJ_TYPE_TENSOR || t->kind == CJ_TYPE_UNRANKED) && quant_of_type(t))
    return t->kind == CJ_TYPE_TENSOR
               ? cj_type_tensor(m, cj_type_elem(m, t->elem->quant->storage), t->rank, t->dims,
                                t->bounds, t->encoding)
               : cj_type_unranked(m, cj_type_elem(m, t->elem->quant->storage));
  if (t->kind == CJ_TYPE_TUPLE || t->kind == CJ_TYPE_FUNCTION) {
    int32_t n = t->kind == CJ_TYPE_TUPLE ? t->rank : t->rank + t->nresults;
    const cj_type **mem = malloc(sizeof(cj_type *) * (size_t)(n ? n : 1));
    if (!mem) return NULL;
    bool changed = false;
    for (int32_t i = 0; i < n; i++) {
      mem[i] = strip_type(m, t->members[i]);
      if (!mem[i]) {
        free(mem);
        return NULL;
      }
      if (mem[i] != t->members[i]) changed = true;
    }
    const cj_type *r = t;
    if (changed)
      r = t->kind == CJ_TYPE_TUPLE ? cj_type_tuple(m, n, mem)
                                   : cj_type_function(m, t->rank, mem, t->nresults, mem + t->rank);
    free(mem);
    return r;
  }
  return t;
}

static bool type_has_quant(const cj_type *t) {
  if (!t) return false;
  if (quant_of_type(t)) return true;
  if (t->kind == CJ_TYPE_TUPLE || t->kind == CJ_TYPE_FUNCTION) {
    int32_t n = t->kind == CJ_TYPE_TUPLE ? t->rank : t->rank + t->nresults;
    for (int32_t i = 0; i < n; i++)
      if (type_has_quant(t->members[i])) return true;
  }
  return false;
}

/* ---- building ---- */

static cj_value *mk(qb *b, cj_op_kind k, uint32_t n, cj_value *const *opnds, const cj_type *rt) {
  if (b->st || !rt) return NULL;
  for (uint32_t i = 0; i < n; i++)
    if (!opnds[i]) return NULL;
  cj_op *o = cj_build_op(b->m, b->at, b->at, k, n, opnds, rt);
  if (!o) {
    b->st = cj_oom();
    return NULL;
  }
  return &o->results[0];
}

static cj_value *mk1(qb *b, cj_op_kind k, cj_value *x, const cj_type *rt) {
  return mk(b, k, 1, &x, rt);
}
static cj_value *mk2(qb *b, cj_op_kind k, cj_value *x, cj_value *y) {
  cj_value *o[2] = {x, y};
  return x ? mk(b, k, 2, o, x->type) : NULL;
}
static cj_value *convert(qb *b, cj_value *x, const cj_type *rt) {
  return mk1(b, CJ_OP_CONVERT, x, rt);
}

static void set_attr(qb *b, cj_value *v, const char *name, const cj_attr *a) {
  if (b->st || !v) return;
  if (!a) {
    b->st = cj_oom();
    return;
  }
  cj_status s = cj_op_set_attr(b->m, v->def, name, a);
  if (s) b->st = s;
}

/* a constant of type t (rank 0 or 1) from n values given as double (floats) or int64 */
static cj_value *constant(qb *b, const cj_type *t, int64_t n, const double *fv, const int64_t *iv) {
  if (b->st || !t) return NULL;
  int es = cj_dtype_bytes(t->dtype);
  unsigned char *buf = calloc((size_t)(n ? n : 1), (size_t)es);
  if (!buf) {
    b->st = cj_oom();
    return NULL;
  }
  for (int64_t i = 0; i < n; i++) {
    if (fv) cj_elem_set_f64(t->dtype, buf, (size_t)i, fv[i]);
    else cj_elem_set_i64(t->dtype, buf, (size_t)i, iv[i]);
  }
  const cj_attr *d = cj_attr_dense(b->m, t, buf, (size_t)(es * n), false);
  free(buf);
  cj_value *v = mk(b, CJ_OP_CONSTANT, 0, NULL, t);
  set_attr(b, v, "value", d);
  return v;
}

static cj_value *scalar_f32(qb *b, double v) {
  float f = (float)v;
  double d = f;
  return constant(b, cj_type_tensor_of(b->m, CJ_F32, 0, NULL), 1, &d, NULL);
}
static cj_value *scalar_i32(qb *b, int64_t v) {
  int64_t x = (int32_t)v;
  return constant(b, cj_type_tensor_of(b->m, CJ_S32, 0, NULL), 1, NULL, &x);
}

/* broadcasts x (rank 0, or rank 1 along `axis`) to the shape of `like` */
static cj_value *bcast(qb *b, cj_value *x, const cj_type *like, int64_t axis) {
  if (b->st || !x) return NULL;
  const cj_type *rt = tshape(b, like, x->type->dtype);
  cj_value *r = mk1(b, CJ_OP_BROADCAST_IN_DIM, x, rt);
  int64_t dims[1] = {axis};
  set_attr(b, r, "broadcast_dimensions", cj_attr_i64_array(b->m, x->type->rank, dims));
  return r;
}

/* a per-tensor or per-axis parameter tensor shaped like `like` (element type f32 or i32):
 * which = 0 scales (f32), 1 zero points as f32, 2 zero points as i32 */
static cj_value *param(qb *b, const cj_quant *q, const cj_type *like, int which) {
  if (b->st) return NULL;
  int64_t n = q->nscales;
  double *fv = malloc(sizeof(double) * (size_t)(n ? n : 1));
  int64_t *iv = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
  if (!fv || !iv) {
    free(fv);
    free(iv);
    b->st = cj_oom();
    return NULL;
  }
  for (int64_t i = 0; i < n; i++) {
    fv[i] = which == 0 ? (double)(float)q->scales[i] : (double)(float)q->zero_points[i];
    iv[i] = (int32_t)q->zero_points[i];
  }
  cj_dtype dt = which == 2 ? CJ_S32 : CJ_F32;
  cj_value *c;
  if (per_axis(q)) {
    int64_t d[1] = {n};
    c = constant(b, cj_type_tensor_of(b->m, dt, 1, d), n, which == 2 ? NULL : fv,
                 which == 2 ? iv : NULL);
  } else {
    c = constant(b, cj_type_tensor_of(b->m, dt, 0, NULL), 1, which == 2 ? NULL : fv,
                 which == 2 ? iv : NULL);
  }
  free(fv);
  free(iv);
  return bcast(b, c, like, per_axis(q) ? q->axis : 0);
}

static cj_value *clamp_scalar(qb *b, double lo, cj_value *x, double hi, bool as_f32) {
  if (b->st || !x) return NULL;
  cj_value *l = as_f32 ? scalar_f32(b, lo) : scalar_i32(b, (int64_t)lo);
  cj_value *h = as_f32 ? scalar_f32(b, hi) : scalar_i32(b, (int64_t)hi);
  cj_value *o[3] = {l, x, h};
  return mk(b, CJ_OP_CLAMP, 3, o, x->type);
}

/* f32 x -> storage integers of q (type `rt`): clamp(x / s + z), round half to even */
static cj_value *quantize_f32(qb *b, cj_value *x, const cj_quant *q, const cj_type *rt) {
  if (b->st || !x) return NULL;
  const cj_type *ft = tshape(b, x->type, CJ_F32);
  if (x->type->dtype != CJ_F32) x = convert(b, x, ft);
  cj_value *r = mk2(b, CJ_OP_DIVIDE, x, param(b, q, ft, 0));
  r = mk2(b, CJ_OP_ADD, r, param(b, q, ft, 1));
  r = clamp_scalar(b, (double)(float)q->storage_min, r, (double)(float)q->storage_max, true);
  r = mk1(b, CJ_OP_ROUND_NEAREST_EVEN, r, ft);
  return convert(b, r, rt);
}

/* storage integers of q -> f32: (convert<i32>(x) - z) * s */
static cj_value *dequantize_f32(qb *b, cj_value *x, const cj_quant *q) {
  if (b->st || !x) return NULL;
  const cj_type *it = tshape(b, x->type, CJ_S32), *ft = tshape(b, x->type, CJ_F32);
  cj_value *r = convert(b, x, it);
  r = mk2(b, CJ_OP_SUBTRACT, r, param(b, q, it, 2));
  r = convert(b, r, ft);
  return mk2(b, CJ_OP_MULTIPLY, r, param(b, q, ft, 0));
}

/* storage of qin -> storage of qout held in type rt (an integer tensor) */
static cj_value *requantize(qb *b, cj_value *x, const cj_quant *qin, const cj_quant *qout,
                            const cj_type *rt) {
  if (b->st || !x) return NULL;
  if (quant_equal(qin, qout)) return convert(b, x, rt);
  const cj_type *ft = tshape(b, x->type, CJ_F32);
  cj_value *f = convert(b, x, ft);
  if (!per_axis(qin) && !per_axis(qout)) {
    double ms = qin->scales[0] / qout->scales[0];
    f = mk2(b, CJ_OP_MULTIPLY, f, bcast(b, scalar_f32(b, ms), ft, 0));
    double mz = (double)qout->zero_points[0] - (double)qin->zero_points[0] * ms;
    if (mz != 0) f = mk2(b, CJ_OP_ADD, f, bcast(b, scalar_f32(b, mz), ft, 0));
  } else {
    const cj_quant *pa = per_axis(qout) ? qout : qin;
    int64_t n = pa->nscales;
    double *ms = calloc((size_t)(n ? n : 1) * 2, sizeof(double));
    if (!ms) {
      b->st = cj_oom();
      return NULL;
    }
    double *mz = ms + n;
    bool anyz = false;
    for (int64_t i = 0; i < n; i++) {
      double si = qin->scales[per_axis(qin) ? i : 0], so = qout->scales[per_axis(qout) ? i : 0];
      double zi = (double)qin->zero_points[per_axis(qin) ? i : 0];
      double zo = (double)qout->zero_points[per_axis(qout) ? i : 0];
      ms[i] = (double)(float)(si / so);
      double z = zo - zi * (si / so);
      mz[i] = (double)(float)z;
      if ((float)z != 0) anyz = true;
    }
    int64_t d[1] = {n};
    const cj_type *vt = cj_type_tensor_of(b->m, CJ_F32, 1, d);
    f = mk2(b, CJ_OP_MULTIPLY, f, bcast(b, constant(b, vt, n, ms, NULL), ft, pa->axis));
    if (anyz) f = mk2(b, CJ_OP_ADD, f, bcast(b, constant(b, vt, n, mz, NULL), ft, pa->axis));
    free(ms);
  }
  if (cj_dtype_bits(rt->dtype) < 32)
    f = clamp_scalar(b, (double)(float)qout->storage_min, f, (double)(float)qout->storage_max, true);
  f = mk1(b, CJ_OP_ROUND_NEAREST_EVEN, f, ft);
  return convert(b, f, rt);
}

/* replaces result i of op by v, which stands for quantized type qt (NULL if not quantized) */
static void replace_result(qb *b, cj_op *op, uint32_t i, cj_value *v, const cj_type *qt) {
  if (b->st || !v) return;
  if (qt && v->def && v->type != qt) v->def->scratch = (void *)qt;
  cj_replace_all_uses(b->func, &op->results[i], v);
}

static void remove_op(cj_op *op) { cj_block_remove(op->block, op); }

/* ======================================================================== the rules */

static CJ_MUST_USE cj_status rw_quantize(qb *b, cj_op *op) {
  cj_value *x = op->operands[0];
  const cj_type *rq = qtype_of(&op->results[0]);
  const cj_quant *out = quant_of_type(rq), *in = qof(x);
  if (!out) return cj_op_error(op, CJ_INVALID_ARGUMENT, "the result is not quantized");
  const cj_type *st = strip_type(b->m, rq);
  cj_value *r;
  if (in) {
    if (per_axis(in) && per_axis(out) && in->axis != out->axis)
      return cj_op_error(op, CJ_UNIMPLEMENTED, "cannot requantize while changing the quantized axis");
    r = requantize(b, x, in, out, st);
  } else {
    if (!cj_dtype_is_float(x->type->dtype))
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "the operand must be a float or quantized tensor");
    r = quantize_f32(b, x, out, st);
  }
  replace_result(b, op, 0, r, rq);
  if (b->st) return b->st;
  remove_op(op);
  return NULL;
}

static CJ_MUST_USE cj_status rw_dequantize(qb *b, cj_op *op) {
  cj_value *x = op->operands[0];
  const cj_quant *q = qof(x);
  if (!q) return cj_op_error(op, CJ_INVALID_ARGUMENT, "the operand is not quantized");
  cj_value *r = dequantize_f32(b, x, q);
  const cj_type *rt = op->results[0].type;
  if (r && rt->dtype != CJ_F32) r = convert(b, r, rt);
  replace_result(b, op, 0, r, NULL);
  if (b->st) return b->st;
  remove_op(op);
  return NULL;
}

/* dequantize -> the op in float -> quantize */
static CJ_MUST_USE cj_status rw_qdq(qb *b, cj_op *op) {
  uint32_t n = op->nopnds;
  cj_value **from = malloc(sizeof(cj_value *) * (n ? n : 1) * 2);
  if (!from) return cj_oom();
  cj_value **to = from + n;
  uint32_t nm = 0;
  for (uint32_t i = 0; i < n; i++) {
    cj_value *v = op->operands[i];
    const cj_quant *q = qof(v);
    if (!q) continue;
    cj_value *d = dequantize_f32(b, v, q);
    if (d && q->expressed != CJ_F32) d = convert(b, d, tshape(b, d->type, q->expressed));
    from[nm] = v;
    to[nm++] = d;
  }
  cj_op *c = b->st ? NULL : cj_op_clone(b->m, op, nm, from, to);
  free(from);
  if (b->st) return b->st;
  if (!c) return cj_oom();
  for (uint32_t i = 0; i < c->nresults; i++) {
    const cj_quant *q = quant_of_type(op->results[i].type);
    if (q) c->results[i].type = tshape(b, op->results[i].type, q->expressed);
  }
  if (b->st) return b->st;
  c->scratch = NULL;
  cj_block_insert_before(op->block, op, c);
  for (uint32_t i = 0; i < op->nresults; i++) {
    const cj_type *qt = qtype_of(&op->results[i]);
    const cj_quant *q = quant_of_type(qt);
    cj_value *r = &c->results[i];
    if (q) r = quantize_f32(b, r, q, strip_type(b->m, qt));
    replace_result(b, op, i, r, q ? qt : NULL);
  }
  if (b->st) return b->st;
  remove_op(op);
  return NULL;
}

static CJ_MUST_USE cj_status rw_add(qb *b, cj_op *op) {
  const cj_quant *ql = qof(op->operands[0]), *qr = qof(op->operands[1]);
  const cj_type *rqt = qtype_of(&op->results[0]);
  const cj_quant *qo = quant_of_type(rqt);
  if (!ql || !qr || !qo) return rw_qdq(b, op);
  const cj_type *st = strip_type(b->m, rqt);
  if (per_axis(ql) || per_axis(qr) || per_axis(qo)) {
    if (!per_axis(ql) || !per_axis(qr) || !per_axis(qo) || !quant_equal(ql, qr) ||
        !quant_equal(ql, qo) || qo->storage != CJ_S32)
      return rw_qdq(b, op);
    cj_value *r = mk2(b, CJ_OP_ADD, convert(b, op->operands[0], st), convert(b, op->operands[1], st));
    bool anyz = false;
    for (int32_t i = 0; i < qo->nscales; i++)
      if (qo->zero_points[i]) anyz = true;
    if (anyz) r = mk2(b, CJ_OP_SUBTRACT, r, param(b, qo, st, 2));
    replace_result(b, op, 0, r, rqt);
    if (b->st) return b->st;
    remove_op(op);
    return NULL;
  }
  const cj_type *it = tshape(b, op->results[0].type, CJ_S32);
  cj_value *l = requantize(b, op->operands[0], ql, qo, it);
  cj_value *r = requantize(b, op->operands[1], qr, qo, it);
  cj_value *s = mk2(b, CJ_OP_ADD, l, r);
  s = mk2(b, CJ_OP_SUBTRACT, s, bcast(b, scalar_i32(b, qo->zero_points[0]), it, 0));
  if (qo->storage != CJ_S32) {
    s = clamp_scalar(b, (double)(int32_t)qo->storage_min, s, (double)(int32_t)qo->storage_max, false);
    s = convert(b, s, st);
  }
  replace_result(b, op, 0, s, rqt);
  if (b->st) return b->st;
  remove_op(op);
  return NULL;
}

/* ---- dot-like ops ---- */

typedef struct dotdims {
  int64_t lb[MAXR], lc[MAXR], rb[MAXR], rc[MAXR];
  int64_t nb, nc;
} dotdims;

static CJ_MUST_USE cj_status read_dotdims(const cj_op *op, dotdims *d) {
  memset(d, 0, sizeof *d);
  if (op->kind == CJ_OP_DOT) {
    d->nc = 1;
    d->lc[0] = 1;
    d->rc[0] = 0;
    return NULL;
  }
  const cj_attr *dn = cj_op_attr(op, "dot_dimension_numbers");
  int64_t n1 = 0, n2 = 0, n3 = 0, n4 = 0;
  if (!dn || dn->kind != CJ_ATTR_STRUCT)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "missing dot_dimension_numbers");
  const cj_attr *f;
  if ((f = cj_attr_field(dn, CJ_SK_DOT, CJ_SF_DOT_lhs_batching_dimensions)))
    cj_attr_get_i64s(f, d->lb, MAXR, &n1);
  if ((f = cj_attr_field(dn, CJ_SK_DOT, CJ_SF_DOT_rhs_batching_dimensions)))
    cj_attr_get_i64s(f, d->rb, MAXR, &n2);
  if ((f = cj_attr_field(dn, CJ_SK_DOT, CJ_SF_DOT_lhs_contracting_dimensions)))
    cj_attr_get_i64s(f, d->lc, MAXR, &n3);
  if ((f = cj_attr_field(dn, CJ_SK_DOT, CJ_SF_DOT_rhs_contracting_dimensions)))
    cj_attr_get_i64s(f, d->rc, MAXR, &n4);
  if (n1 != n2 || n3 != n4 || n1 > MAXR || n3 > MAXR)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad dot_dimension_numbers");
  d->nb = n1;
  d->nc = n3;
  return NULL;
}

static bool in_list(int64_t x, const int64_t *l, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (l[i] == x) return true;
  return false;
}

/* sum of convert<i32>(t) over `red` dims, times zp */
static cj_value *zp_partial(qb *b, cj_value *t, int64_t zp, const int64_t *red, int64_t nred) {
  if (b->st || !t) return NULL;
  const cj_type *tt = t->type;
  int64_t od[MAXR];
  int32_t nr = 0;
  for (int32_t i = 0; i < tt->rank; i++)
    if (!in_list(i, red, nred)) od[nr++] = tt->dims[i];
  cj_value *x = convert(b, t, tshape(b, tt, CJ_S32));
  cj_value *init = scalar_i32(b, 0);
  if (b->st || !x || !init) return NULL;
  const cj_type *rt = cj_type_tensor_of(b->m, CJ_S32, nr, od);
  cj_op *r = cj_op_create(b->m, CJ_OP_REDUCE, NULL, 2, 1, 1);
  if (!r || !rt) {
    b->st = cj_oom();
    return NULL;
  }
  r->operands[0] = x;
  r->operands[1] = init;
  r->results[0].type = rt;
  r->pos = b->at->pos;
  r->loc = b->at->loc;
  const cj_type *st = cj_type_tensor_of(b->m, CJ_S32, 0, NULL);
  const cj_type *at[2] = {st, st};
  cj_block *blk = cj_region_add_block(b->m, &r->regions[0], 2, at);
  cj_value *args[2] = {blk ? &blk->args[0] : NULL, blk ? &blk->args[1] : NULL};
  cj_op *add = blk ? cj_build_op(b->m, NULL, b->at, CJ_OP_ADD, 2, args, st) : NULL;
  cj_op *ret = add ? cj_op_create(b->m, CJ_OP_RETURN, NULL, 1, 0, 0) : NULL;
  if (!ret) {
    b->st = cj_oom();
    return NULL;
  }
  ret->operands[0] = &add->results[0];
  cj_block_append(blk, add);
  cj_block_append(blk, ret);
  cj_status s = cj_op_set_attr(b->m, r, "dimensions", cj_attr_i64_array(b->m, nred, red));
  if (s) {
    b->st = s;
    return NULL;
  }
  cj_block_insert_before(b->at->block, b->at, r);
  cj_value *v = &r->results[0];
  return mk2(b, CJ_OP_MULTIPLY, v, bcast(b, scalar_i32(b, zp), rt, 0));
}

/* broadcasts a zero-point contribution (t's dims minus `red`) into the result shape */
static cj_value *zp_broadcast(qb *b, cj_value *c, int32_t trank, const int64_t *red, int64_t nred,
                              const int64_t *batching, int64_t nbatch, int64_t nonbatch_start,
                              const cj_type *out) {
  if (b->st || !c) return NULL;
  int64_t bd[MAXR];
  int64_t bi = 0, ni = nonbatch_start, k = 0;
  for (int32_t orig = 0; orig < trank; orig++) {
    if (in_list(orig, red, nred)) continue;
    bd[k++] = in_list(orig, batching, nbatch) ? bi++ : ni++;
  }
  cj_value *r = mk1(b, CJ_OP_BROADCAST_IN_DIM, c, out);
  set_attr(b, r, "broadcast_dimensions", cj_attr_i64_array(b->m, k, bd));
  return r;
}

static CJ_MUST_USE cj_status rw_dot_hybrid(qb *b, cj_op *op) {
  cj_value *rhs = op->operands[1];
  const cj_quant *q = qof(rhs);
  cj_value *bar = mk1(b, CJ_OP_OPTIMIZATION_BARRIER, rhs, strip_type(b->m, qtype_of(rhs)));
  const cj_type *ft = bar ? tshape(b, bar->type, CJ_F32) : NULL;
  cj_value *f = convert(b, bar, ft);
  bool zz = true;
  for (int32_t i = 0; i < q->nscales; i++)
    if (q->zero_points[i]) zz = false;
  if (!zz) f = mk2(b, CJ_OP_SUBTRACT, f, param(b, q, ft, 1));
  f = mk2(b, CJ_OP_MULTIPLY, f, param(b, q, ft, 0));
  cj_value *lhs = op->operands[0];
  if (f && lhs->type->dtype != CJ_F32) f = convert(b, f, tshape(b, f->type, lhs->type->dtype));
  if (b->st) return b->st;
  cj_value *from[1] = {rhs}, *to[1] = {f};
  cj_op *c = cj_op_clone(b->m, op, 1, from, to);
  if (!c) return cj_oom();
  c->scratch = NULL;
  cj_block_insert_before(op->block, op, c);
  replace_result(b, op, 0, &c->results[0], NULL);
  remove_op(op);
  return b->st;
}

static CJ_MUST_USE cj_status rw_dot(qb *b, cj_op *op) {
  cj_value *lhs = op->operands[0], *rhs = op->operands[1];
  const cj_quant *ql = qof(lhs), *qr = qof(rhs);
  const cj_type *rqt = qtype_of(&op->results[0]);
  const cj_quant *qo = quant_of_type(rqt);
  bool full = ql && !per_axis(ql) &&
              ((qr && !per_axis(qr) && qo && !per_axis(qo)) ||
               (qr && per_axis(qr) && qo && per_axis(qo)));
  if (!full) {
    if (!ql && qr && !qo) return rw_dot_hybrid(b, op);
    return rw_qdq(b, op);
  }
  dotdims d;
  CJ_RETURN_IF_ERROR(read_dotdims(op, &d));
  const cj_type *rt = op->results[0].type;
  const cj_type *it = tshape(b, rt, CJ_S32);
  cj_value *ls = lhs, *rs = rhs;
  /* the integer dot of the stored values (as dot_general; attributes kept) */
  cj_op *dot;
  if (op->kind == CJ_OP_DOT) {
    cj_value *o[2] = {ls, rs};
    cj_value *v = mk(b, CJ_OP_DOT_GENERAL, 2, o, it);
    if (!v) return b->st ? b->st : cj_oom();
    const cj_attr *f[CJ_SF_DOT__COUNT] = {0};
    f[CJ_SF_DOT_lhs_batching_dimensions] = cj_attr_i64_array(b->m, 0, NULL);
    f[CJ_SF_DOT_rhs_batching_dimensions] = cj_attr_i64_array(b->m, 0, NULL);
    f[CJ_SF_DOT_lhs_contracting_dimensions] = cj_attr_i64_array(b->m, 1, d.lc);
    f[CJ_SF_DOT_rhs_contracting_dimensions] = cj_attr_i64_array(b->m, 1, d.rc);
    set_attr(b, v, "dot_dimension_numbers", cj_attr_struct(b->m, CJ_SK_DOT, f));
    const cj_attr *pc = cj_op_attr(op, "precision_config");
    if (pc) set_attr(b, v, "precision_config", pc);
    dot = v->def;
  } else {
    dot = cj_op_clone(b->m, op, 0, NULL, NULL);
    if (!dot) return cj_oom();
    dot->scratch = NULL;
    dot->results[0].type = it;
    cj_block_insert_before(op->block, op, dot);
  }
  if (b->st) return b->st;
  cj_value *res = &dot->results[0];
  /* zero-point offset: zp_r * sum(lhs) + zp_l * sum(rhs) - zp_l * zp_r * K */
  int64_t zl = ql->zero_points[0], zr = per_axis(qr) ? 0 : qr->zero_points[0];
  cj_value *off = NULL;
  if (zr != 0) {
    cj_value *c = zp_partial(b, lhs, zr, d.lc, d.nc);
    off = zp_broadcast(b, c, lhs->type->rank, d.lc, d.nc, d.lb, d.nb, d.nb, it);
  }
  if (zl != 0) {
    cj_value *c = zp_partial(b, rhs, zl, d.rc, d.nc);
    int64_t start = lhs->type->rank - d.nc;
    c = zp_broadcast(b, c, rhs->type->rank, d.rc, d.nc, d.rb, d.nb, start, it);
    off = off ? mk2(b, CJ_OP_ADD, off, c) : c;
  }
  if (zl != 0 && zr != 0) {
    int32_t k = 1;
    for (int64_t i = 0; i < d.nc; i++) k = (int32_t)((uint32_t)k * (uint32_t)rhs->type->dims[d.rc[i]]);
    int32_t z = (int32_t)((uint32_t)(int32_t)zl * (uint32_t)(int32_t)zr * (uint32_t)k);
    off = mk2(b, CJ_OP_SUBTRACT, off, bcast(b, scalar_i32(b, z), it, 0));
  }
  double cs = per_axis(qr) ? ql->scales[0] * qr->scales[0] / qo->scales[0]
                           : ql->scales[0] * qr->scales[0] / qo->scales[0];
  if (fabs(cs - 1.0) > 0.001) {
    const cj_type *ft = tshape(b, rt, CJ_F32);
    cj_value *f = convert(b, res, ft);
    f = mk2(b, CJ_OP_MULTIPLY, f, bcast(b, scalar_f32(b, cs), ft, 0));
    res = convert(b, f, it);
    if (off) {
      cj_value *g = convert(b, off, ft);
      g = mk2(b, CJ_OP_MULTIPLY, g, bcast(b, scalar_f32(b, cs), ft, 0));
      off = convert(b, g, it);
    }
  }
  cj_value *cz = bcast(b, scalar_i32(b, per_axis(qo) ? 0 : qo->zero_points[0]), it, 0);
  if (off) cz = mk2(b, CJ_OP_SUBTRACT, cz, off);
  cj_value *r = mk2(b, CJ_OP_ADD, res, cz);
  r = convert(b, r, strip_type(b->m, rqt));
  replace_result(b, op, 0, r, rqt);
  if (b->st) return b->st;
  remove_op(op);
  return NULL;
}

/* ---- classification ---- */

static bool op_has_quant(const cj_op *op) {
  for (uint32_t i = 0; i < op->nopnds; i++)
    if (qtype_of(op->operands[i]) || type_has_quant(op->operands[i]->type)) return true;
  for (uint32_t i = 0; i < op->nresults; i++)
    if (type_has_quant(op->results[i].type)) return true;
  return false;
}

static bool is_conv(const cj_op *op) {
  return op->kind == CJ_OP_CONVOLUTION || op->kind == CJ_OP_DYNAMIC_CONV;
}

/* The QUANT column of opfacts.def: how an op with quantized operands or results is rewritten.
 *   qr_storage      works on the stored integers unchanged (the reference's type-only
 *                   conversion, plus pure data movement and structure): kept as it is
 *   qr_qdq          the reference runs it as dequantize -> float op -> quantize
 *   qr_conv         convolutions keep their quantized types (bridge_convs)
 *   qr_unsupported  quantized element types are an error
 *   the others      their own rewrites */
typedef cj_status (*qr_fn)(qb *b, cj_op *op);
#define qr_quantize rw_quantize
#define qr_dequantize rw_dequantize
#define qr_add rw_add
#define qr_dot rw_dot
#define qr_qdq rw_qdq

static CJ_MUST_USE cj_status qr_storage(qb *b, cj_op *op) { return NULL; }
static CJ_MUST_USE cj_status qr_conv(qb *b, cj_op *op) { return NULL; }

static CJ_MUST_USE cj_status qr_unsupported(qb *b, cj_op *op) {
  return cj_op_error(op, CJ_UNIMPLEMENTED, "quantized element types are not supported on this op");
}

static CJ_MUST_USE cj_status qr_minmax(qb *b, cj_op *op) {
  const cj_quant *a = qof(op->operands[0]), *c = qof(op->operands[1]);
  const cj_quant *r = quant_of_type(qtype_of(&op->results[0]));
  /* stored integers compare like the values they stand for */
  if (a && c && r && !per_axis(a) && quant_equal(a, c) && quant_equal(a, r)) return NULL;
  return rw_qdq(b, op);
}

static const qr_fn quant_fns[CJ_OP_COUNT] = {
#define OPF(id, infer, canon, ev, quant, ...) quant,
#include "ir/opfacts.def"
#undef OPF
};

static CJ_MUST_USE cj_status rewrite_block(qb *b, cj_block *blk) {
  for (cj_op *op = blk->first; op;) {
    cj_op *next = op->next;
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next)
        CJ_RETURN_IF_ERROR(rewrite_block(b, nb));
    if (!op_has_quant(op) || is_conv(op)) {
      op = next;
      continue;
    }
    b->at = op;
    CJ_RETURN_IF_ERROR(quant_fns[op->kind](b, op));
    if (b->st) return b->st;
    op = next;
  }
  return NULL;
}

/* ---- convolutions keep quantized types: bitcast bridges ---- */

static CJ_MUST_USE cj_status bridge_convs(qb *b, cj_block *blk) {
  for (cj_op *op = blk->first; op; op = op->next) {
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next)
        CJ_RETURN_IF_ERROR(bridge_convs(b, nb));
    if (!is_conv(op)) continue;
    bool any = false;
    for (uint32_t i = 0; i < op->nopnds; i++)
      if (qtype_of(op->operands[i])) any = true;
    if (quant_of_type(op->results[0].type)) any = true;
    if (!any) continue;
    b->at = op;
    for (uint32_t i = 0; i < op->nopnds; i++) {
      const cj_type *qt = qtype_of(op->operands[i]);
      if (!qt) continue;
      cj_value *v = op->operands[i];
      if (v->type != qt || !(v->def && v->def->scratch == KEEP)) {
        cj_value *s = v->type == qt ? mk1(b, CJ_OP_BITCAST_CONVERT, v, strip_type(b->m, qt)) : v;
        cj_value *c = mk1(b, CJ_OP_BITCAST_CONVERT, s, qt);
        if (b->st) return b->st;
        c->def->scratch = KEEP;
        op->operands[i] = c;
      }
    }
    op->scratch = KEEP;
    if (quant_of_type(op->results[0].type)) {
      /* uses of the result read its stored integers */
      cj_op *after = op->next;
      b->at = after;
      cj_value *res = &op->results[0];
      cj_value *s = mk1(b, CJ_OP_BITCAST_CONVERT, res, strip_type(b->m, res->type));
      if (b->st) return b->st;
      cj_replace_all_uses(b->func, res, s);
      s->def->operands[0] = res; /* the replacement touched the bridge itself */
      op = s->def;
    }
  }
  return NULL;
}

/* ---- strip quantized types everywhere else ---- */

static CJ_MUST_USE cj_status strip_block(qb *b, cj_block *blk) {
  for (uint32_t i = 0; i < blk->nargs; i++) {
    const cj_type *t = strip_type(b->m, blk->args[i].type);
    if (!t) return cj_oom();
    blk->args[i].type = t;
  }
  for (cj_op *op = blk->first; op; op = op->next) {
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next)
        CJ_RETURN_IF_ERROR(strip_block(b, nb));
    if (op->scratch == KEEP) continue;
    for (uint32_t i = 0; i < op->nresults; i++) {
      const cj_type *t = strip_type(b->m, op->results[i].type);
      if (!t) return cj_oom();
      op->results[i].type = t;
    }
    /* dense attributes (constant values, check values) of quantized types */
    for (uint32_t i = 0; i < op->nattrs; i++) {
      const cj_attr *a = op->attrs[i].value;
      if (a && a->kind == CJ_ATTR_DENSE && quant_of_type(a->dense.type)) {
        const cj_attr *n = cj_attr_dense(b->m, strip_type(b->m, a->dense.type), a->dense.data,
                                         a->dense.nbytes, a->dense.splat);
        if (!n) return cj_oom();
        op->attrs[i].value = n;
      }
    }
  }
  return NULL;
}

static void clear_scratch(cj_block *blk) {
  for (cj_op *op = blk->first; op; op = op->next) {
    op->scratch = NULL;
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next) clear_scratch(nb);
  }
}

static bool block_has_quant(cj_block *blk) {
  for (uint32_t i = 0; i < blk->nargs; i++)
    if (type_has_quant(blk->args[i].type)) return true;
  for (cj_op *op = blk->first; op; op = op->next) {
    if (op_has_quant(op)) return true;
    for (uint32_t i = 0; i < op->nattrs; i++) {
      const cj_attr *a = op->attrs[i].value;
      if (a && a->kind == CJ_ATTR_DENSE && quant_of_type(a->dense.type)) return true;
    }
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next)
        if (block_has_quant(nb)) return true;
  }
  return false;
}

cj_status cj_pass_quant(cj_module *m, cj_op *func) {
  cj_block *body = cj_func_body(func);
  if (!body || !block_has_quant(body)) return NULL;
  qb b = {m, func, NULL, NULL};
  clear_scratch(body);
  CJ_RETURN_IF_ERROR(rewrite_block(&b, body));
  CJ_RETURN_IF_ERROR(bridge_convs(&b, body));
  CJ_RETURN_IF_ERROR(strip_block(&b, body));
  clear_scratch(body);
  /* the signature */
  const cj_type *ft = cj_func_type(func);
  if (ft && type_has_quant(ft)) {
    const cj_type *nt = strip_type(m, ft);
    if (!nt) return cj_oom();
    CJ_RETURN_IF_ERROR(cj_op_set_attr(m, func, "function_type", cj_attr_type(m, nt)));
  }
  return NULL;
}
