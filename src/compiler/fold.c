/* cjrt: folding (see compiler.h): identity ops disappear, reshapes of reshapes collapse, and
 * shape ops (reshape, broadcast_in_dim, transpose, slice, reverse) and value-preserving converts
 * of splat constants become splat constants. Everything else is left to run. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"

enum { MAXR = 16 };

static bool same_type(const cj_op *op) {
  return op->nopnds >= 1 && op->nresults == 1 && op->operands[0]->type == op->results[0].type;
}

/* ---- the FOLD column of opfacts.def: fold_<op> names the op's identity test (when it returns
 * its operand unchanged), its own rewrite, and how it folds a splat constant operand ---- */

typedef bool (*identity_fn)(const cj_op *op);
enum splat_rule {
  SPLAT_NO,      /* not folded */
  SPLAT_SAME,    /* a shape op: the same splat value in the result's shape */
  SPLAT_CONVERT, /* a convert that keeps the value */
};
/* a rewrite of op; *done: op was replaced or needs nothing more */
typedef cj_status (*rewrite_fn)(cj_module *m, cj_op *func, cj_op *op, bool *done);
typedef struct fold_rule {
  identity_fn identity; /* NULL: never an identity */
  rewrite_fn rewrite;   /* NULL: none */
  enum splat_rule splat;
} fold_rule;

static CJ_MUST_USE cj_status rw_transpose_of_dot(cj_module *m, cj_op *func, cj_op *op, bool *done);
static CJ_MUST_USE cj_status rw_dot_of_transposes(cj_module *m, cj_op *func, cj_op *op, bool *done);
static CJ_MUST_USE cj_status rw_reshape_of_reshape(cj_module *m, cj_op *func, cj_op *op, bool *done);
static CJ_MUST_USE cj_status rw_scatter_add_window(cj_module *m, cj_op *func, cj_op *op, bool *done);
static CJ_MUST_USE cj_status rw_broadcast_of_broadcast(cj_module *m, cj_op *func, cj_op *op, bool *done);

static bool id_same_type(const cj_op *op) { return same_type(op); }

static bool id_iota_attr(const cj_op *op, const char *name) {
  int64_t v[MAXR], n = 0;
  if (!same_type(op) || !cj_op_get_i64s(op, name, v, MAXR, &n)) return false;
  for (int64_t i = 0; i < n; i++)
    if (v[i] != i) return false;
  return true;
}

static bool id_broadcast_in_dim(const cj_op *op) {
  return id_iota_attr(op, "broadcast_dimensions");
}
static bool id_transpose(const cj_op *op) { return id_iota_attr(op, "permutation"); }

static bool id_slice(const cj_op *op) {
  int64_t v[MAXR], n = 0, s[MAXR], ns = 0;
  if (!same_type(op) || !cj_op_get_i64s(op, "start_indices", v, MAXR, &n) ||
      !cj_op_get_i64s(op, "strides", s, MAXR, &ns))
    return false;
  for (int64_t i = 0; i < n; i++)
    if (v[i] != 0) return false;
  return true; /* same type + zero starts: the whole operand */
}

static bool id_reverse(const cj_op *op) {
  int64_t v[MAXR], n = 0;
  return same_type(op) && cj_op_get_i64s(op, "dimensions", v, MAXR, &n) && n == 0;
}

static bool id_pad(const cj_op *op) {
  int64_t a[MAXR], b[MAXR], c[MAXR], na = 0, nb = 0, nc = 0;
  if (!same_type(op) || !cj_op_get_i64s(op, "edge_padding_low", a, MAXR, &na) ||
      !cj_op_get_i64s(op, "edge_padding_high", b, MAXR, &nb) ||
      !cj_op_get_i64s(op, "interior_padding", c, MAXR, &nc))
    return false;
  for (int64_t i = 0; i < na; i++)
    if (a[i] || b[i] || c[i]) return false;
  return true;
}

static bool id_concatenate(const cj_op *op) { return op->nopnds == 1 && same_type(op); }

#define fold_none {NULL, NULL, SPLAT_NO}
#define fold_convert {id_same_type, NULL, SPLAT_CONVERT}
#define fold_reshape {id_same_type, rw_reshape_of_reshape, SPLAT_SAME}
#define fold_broadcast_in_dim {id_broadcast_in_dim, rw_broadcast_of_broadcast, SPLAT_SAME}
#define fold_transpose {id_transpose, rw_transpose_of_dot, SPLAT_SAME}
#define fold_slice {id_slice, NULL, SPLAT_SAME}
#define fold_reverse {id_reverse, NULL, SPLAT_SAME}
#define fold_pad {id_pad, NULL, SPLAT_NO}
#define fold_concatenate {id_concatenate, NULL, SPLAT_NO}
#define fold_dot_general {NULL, rw_dot_of_transposes, SPLAT_NO}
#define fold_scatter {NULL, rw_scatter_add_window, SPLAT_NO}

static const fold_rule fold_rules[CJ_OP_COUNT] = {
#define OPF(id, infer, canon, ev, quant, va, spmd, fold, ...) fold,
#include "ir/opfacts.def"
#undef OPF
};

static bool is_identity(const cj_op *op) {
  identity_fn fn = fold_rules[op->kind].identity;
  return fn && fn(op);
}

static const cj_attr *splat_of(const cj_value *v) {
  if (!v->def || v->def->kind != CJ_OP_CONSTANT) return NULL;
  const cj_attr *a = cj_op_attr(v->def, "value");
  if (!a || a->kind != CJ_ATTR_DENSE) return NULL;
  if (a->dense.splat) return a;
  if (cj_type_is_static(v->type) && v->type->num_elements == 1) return a;
  return NULL;
}

static CJ_MUST_USE cj_status replace_with_splat(cj_module *m, cj_op *func, cj_op *op, const void *elem) {
  const cj_type *rt = op->results[0].type;
  const cj_attr *d = cj_attr_dense(m, rt, elem, (size_t)cj_dtype_bytes(rt->dtype), true);
  if (!d) return cj_oom();
  cj_op *c = cj_build_op(m, op, op, CJ_OP_CONSTANT, 0, NULL, rt);
  if (!c) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, c, "value", d));
  cj_replace_all_uses(func, &op->results[0], &c->results[0]);
  cj_block_remove(op->block, op);
  return NULL;
}

/* a convert of a splat whose value survives exactly (no float -> int) */
static bool convert_value(const cj_type *from, const cj_type *to, const void *src, void *dst) {
  cj_dtype a = from->dtype, b = to->dtype;
  cj_dtype_kind ka = cj_dtype_kindof(a), kb = cj_dtype_kindof(b);
  bool aint = ka == CJ_DK_SINT || ka == CJ_DK_UINT || ka == CJ_DK_BOOL;
  bool bint = kb == CJ_DK_SINT || kb == CJ_DK_UINT || kb == CJ_DK_BOOL;
  memset(dst, 0, 16);
  if (aint && bint) {
    int64_t v = cj_elem_get_i64(a, src, 0);
    if (kb == CJ_DK_BOOL) v = v != 0;
    cj_elem_set_i64(b, dst, 0, v);
    return true;
  }
  if (ka == CJ_DK_FLOAT && kb == CJ_DK_FLOAT) {
    cj_elem_set_f64(b, dst, 0, cj_elem_get_f64(a, src, 0));
    return true;
  }
  if (aint && kb == CJ_DK_FLOAT) {
    int64_t v = cj_elem_get_i64(a, src, 0);
    if (v > (1ll << 53) || v < -(1ll << 53) || ka == CJ_DK_UINT) return false;
    cj_elem_set_f64(b, dst, 0, (double)v);
    return true;
  }
  return false;
}

/* dot_general(transpose(x), y) reads x directly: the dimension numbers are mapped through the
 * permutation. Valid when x's free dimensions keep their relative order (the result layout
 * lists free dimensions in operand order), e.g. any rank-2 transpose. The transpose then often
 * becomes dead. */
static CJ_MUST_USE cj_status fold_dot_transpose(cj_module *m, cj_op *op, uint32_t side) {
  cj_value *v = op->operands[side];
  cj_op *t = v->def;
  if (!t || t->kind != CJ_OP_TRANSPOSE) return NULL;
  int64_t perm[MAXR], np = 0;
  if (!cj_op_get_i64s(t, "permutation", perm, MAXR, &np) || np != v->type->rank) return NULL;
  const cj_attr *dn = cj_op_attr(op, "dot_dimension_numbers");
  if (!dn || dn->kind != CJ_ATTR_STRUCT) return NULL;
  int fb = side == 0 ? CJ_SF_DOT_lhs_batching_dimensions : CJ_SF_DOT_rhs_batching_dimensions;
  int fc = side == 0 ? CJ_SF_DOT_lhs_contracting_dimensions : CJ_SF_DOT_rhs_contracting_dimensions;
  int64_t bd[MAXR], cd[MAXR], nb = 0, nc = 0;
  cj_attr_get_i64s(cj_attr_field(dn, CJ_SK_DOT, fb), bd, MAXR, &nb);
  cj_attr_get_i64s(cj_attr_field(dn, CJ_SK_DOT, fc), cd, MAXR, &nc);
  bool used[MAXR] = {false};
  for (int64_t i = 0; i < nb; i++) {
    if (bd[i] < 0 || bd[i] >= np) return NULL;
    used[bd[i]] = true;
  }
  for (int64_t i = 0; i < nc; i++) {
    if (cd[i] < 0 || cd[i] >= np) return NULL;
    used[cd[i]] = true;
  }
  int64_t last = -1;
  for (int64_t d = 0; d < np; d++) {
    if (used[d]) continue;
    if (perm[d] < last) return NULL; /* free dimensions would change order */
    last = perm[d];
  }
  int64_t nbd[MAXR], ncd[MAXR];
  for (int64_t i = 0; i < nb; i++) nbd[i] = perm[bd[i]];
  for (int64_t i = 0; i < nc; i++) ncd[i] = perm[cd[i]];
  const cj_attr *fields[CJ_SF_DOT__COUNT];
  for (int f = 0; f < CJ_SF_DOT__COUNT; f++) fields[f] = cj_attr_field(dn, CJ_SK_DOT, f);
  fields[fb] = cj_attr_i64_array(m, nb, nbd);
  fields[fc] = cj_attr_i64_array(m, nc, ncd);
  const cj_attr *nd = cj_attr_struct(m, CJ_SK_DOT, fields);
  if (!nd || !fields[fb] || !fields[fc]) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, op, "dot_dimension_numbers", nd));
  cj_op_set_operand(op, side, t->operands[0]);
  return NULL;
}

typedef struct use_count {
  cj_value *v;
  int n;
} use_count;

static CJ_MUST_USE cj_status count_uses_of(cj_op *op, void *ctx) {
  use_count *u = ctx;
  for (uint32_t i = 0; i < op->nopnds; i++)
    if (op->operands[i] == u->v) u->n++;
  return NULL;
}

/* transpose(dot_general(x, y)) with dims [1, 0], no batching and one free dimension per side
 * is dot_general(y, x): the operands swap places and the transpose disappears. */
static CJ_MUST_USE cj_status fold_transpose_dot(cj_module *m, cj_op *func, cj_op *op) {
  int64_t perm[MAXR], np = 0;
  cj_op *d = op->operands[0]->def;
  if (!d || d->kind != CJ_OP_DOT_GENERAL || d->nopnds != 2) return NULL;
  if (!cj_op_get_i64s(op, "permutation", perm, MAXR, &np) || np != 2 || perm[0] != 1 || perm[1] != 0)
    return NULL;
  const cj_attr *dn = cj_op_attr(d, "dot_dimension_numbers");
  if (!dn || dn->kind != CJ_ATTR_STRUCT) return NULL;
  int64_t lb[MAXR], rb[MAXR], lc[MAXR], rc[MAXR], nlb = 0, nrb = 0, nlc = 0, nrc = 0;
  cj_attr_get_i64s(cj_attr_field(dn, CJ_SK_DOT, CJ_SF_DOT_lhs_batching_dimensions), lb, MAXR, &nlb);
  cj_attr_get_i64s(cj_attr_field(dn, CJ_SK_DOT, CJ_SF_DOT_rhs_batching_dimensions), rb, MAXR, &nrb);
  cj_attr_get_i64s(cj_attr_field(dn, CJ_SK_DOT, CJ_SF_DOT_lhs_contracting_dimensions), lc, MAXR, &nlc);
  cj_attr_get_i64s(cj_attr_field(dn, CJ_SK_DOT, CJ_SF_DOT_rhs_contracting_dimensions), rc, MAXR, &nrc);
  if (nlb || nrb || d->operands[0]->type->rank - nlc != 1 || d->operands[1]->type->rank - nrc != 1)
    return NULL;
  use_count u = {&d->results[0], 0};
  cj_block *body = cj_func_body(func);
  if (body) cj_status_ignore(cj_walk_block(body, count_uses_of, &u)); /* count_uses_of never fails */
  if (u.n != 1) return NULL;
  const cj_attr *fields[CJ_SF_DOT__COUNT] = {NULL};
  fields[CJ_SF_DOT_lhs_contracting_dimensions] = cj_attr_i64_array(m, nrc, rc);
  fields[CJ_SF_DOT_rhs_contracting_dimensions] = cj_attr_i64_array(m, nlc, lc);
  fields[CJ_SF_DOT_lhs_batching_dimensions] = cj_attr_i64_array(m, 0, NULL);
  fields[CJ_SF_DOT_rhs_batching_dimensions] = cj_attr_i64_array(m, 0, NULL);
  const cj_attr *nd = cj_attr_struct(m, CJ_SK_DOT, fields);
  cj_value *ops[2] = {d->operands[1], d->operands[0]};
  cj_op *n = cj_build_op(m, op, d, CJ_OP_DOT_GENERAL, 2, ops, op->results[0].type);
  if (!n || !nd) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, n, "dot_dimension_numbers", nd));
  const cj_attr *pc = cj_op_attr(d, "precision_config");
  if (pc) CJ_RETURN_IF_ERROR(cj_op_set_attr(m, n, "precision_config", pc));
  cj_replace_all_uses(func, &op->results[0], &n->results[0]);
  cj_block_remove(op->block, op);
  return NULL;
}

static CJ_MUST_USE cj_status rw_transpose_of_dot(cj_module *m, cj_op *func, cj_op *op, bool *done) {
  if (op->nopnds != 1) return NULL;
  cj_block *blk = op->block;
  CJ_RETURN_IF_ERROR(fold_transpose_dot(m, func, op));
  *done = op->block != blk; /* replaced */
  return NULL;
}

static CJ_MUST_USE cj_status rw_dot_of_transposes(cj_module *m, cj_op *func, cj_op *op, bool *done) {
  if (op->nopnds != 2) return NULL;
  CJ_RETURN_IF_ERROR(fold_dot_transpose(m, op, 0));
  return fold_dot_transpose(m, op, 1);
}

/* reshape(reshape(x)) is reshape(x), and x itself when the types agree */
static CJ_MUST_USE cj_status rw_reshape_of_reshape(cj_module *m, cj_op *func, cj_op *op, bool *done) {
  if (!op->operands[0]->def || op->operands[0]->def->kind != CJ_OP_RESHAPE) return NULL;
  cj_op_set_operand(op, 0, op->operands[0]->def->operands[0]);
  if (is_identity(op)) {
    cj_replace_all_uses(func, &op->results[0], op->operands[0]);
    cj_block_remove(op->block, op);
  }
  *done = true;
  return NULL;
}

/* ---- a scatter-add of one window at constant indices is an add of a padded update ----
 *
 * x.at[:, :-1].add(u) (JAX: a scatter whose indices are a constant and whose updates are one
 * whole window) is add(x, pad(reshape(u), lo = start, hi = rest)), which the backends fuse with
 * the ops around it. Bit-equal: inside the window both compute x + u (the scatter body's
 * argument order); outside, the padding is the additive identity: -0.0 for floats (x + -0.0 is x
 * for every x, -0.0 and NaN included, where +0.0 would turn -0.0 into +0.0), 0 for integers.
 * Only when the whole window lies inside x (else XLA skips the window, and the scatter stays).
 * A negated float update u = -v gives subtract(x, pad(v)) padded with +0.0: x + (-v) and x - v
 * are the same IEEE operation (a NaN's sign aside), and the negate no longer splits the fused group around it. */

/* the body is add(arg0, arg1) in that order */
static bool body_adds_in_order(const cj_op *op) {
  if (op->nregions != 1 || !op->regions[0].first || op->regions[0].first != op->regions[0].last)
    return false;
  const cj_block *b = op->regions[0].first;
  if (b->nargs != 2 || b->nops != 2) return false;
  const cj_op *a = b->first, *r = b->last;
  return a->kind == CJ_OP_ADD && a->nopnds == 2 && a->operands[0] == &b->args[0] &&
         a->operands[1] == &b->args[1] && r->kind == CJ_OP_RETURN && r->nopnds == 1 &&
         r->operands[0] == &a->results[0];
}

/* the padding value: -0.0 for f32/f64, 0 for integers; false for other types */
static bool identity_pad(cj_dtype dt, unsigned char out[8]) {
  memset(out, 0, 8);
  if (dt == CJ_F32) {
    float z = -0.0f;
    memcpy(out, &z, sizeof z);
    return true;
  }
  if (dt == CJ_F64) {
    double z = -0.0;
    memcpy(out, &z, sizeof z);
    return true;
  }
  return cj_dtype_is_int(dt) && cj_dtype_bits(dt) >= 8; /* not sub-byte: stored with zero high bits */
}

/* the window of a one-window scatter: its start and size per operand dim; false if the scatter
 * is not one whole window at constant indices lying inside the operand */
static bool scatter_one_window(const cj_op *op, int64_t *start, int64_t *wsize) {
  const cj_type *xt = op->operands[0]->type, *it = op->operands[1]->type, *ut = op->operands[2]->type;
  const cj_attr *dn = cj_op_attr(op, "scatter_dimension_numbers");
  const cj_attr *ia = op->operands[1]->def && op->operands[1]->def->kind == CJ_OP_CONSTANT
                          ? cj_op_attr(op->operands[1]->def, "value") : NULL;
  if (!dn || dn->kind != CJ_ATTR_STRUCT || !ia || !cj_type_is_static(xt) || !cj_type_is_static(it) ||
      !cj_type_is_static(ut) || xt->rank > MAXR || it->num_elements > MAXR)
    return false;
  int64_t uw[MAXR], ins[MAXR], bat[MAXR], sd[MAXR], idx[MAXR], nuw = -1, nins = 0, nbat = 0, nsd = -1, ni = -1;
  const cj_attr *f;
  if ((f = cj_attr_field(dn, CJ_SK_SCATTER, CJ_SF_SCATTER_update_window_dims)) && !cj_attr_get_i64s(f, uw, MAXR, &nuw)) return false;
  if ((f = cj_attr_field(dn, CJ_SK_SCATTER, CJ_SF_SCATTER_inserted_window_dims)) && !cj_attr_get_i64s(f, ins, MAXR, &nins)) return false;
  if ((f = cj_attr_field(dn, CJ_SK_SCATTER, CJ_SF_SCATTER_input_batching_dims)) && !cj_attr_get_i64s(f, bat, MAXR, &nbat)) return false;
  if ((f = cj_attr_field(dn, CJ_SK_SCATTER, CJ_SF_SCATTER_scatter_dims_to_operand_dims)) && !cj_attr_get_i64s(f, sd, MAXR, &nsd)) return false;
  if (!cj_attr_get_i64s(ia, idx, MAXR, &ni))
    return false;
  /* every update dim a window dim (in order), one index vector, no batching */
  if (nbat != 0 || nuw != ut->rank || nuw + nins != xt->rank || nsd < 0 || nsd > xt->rank || ni != nsd)
    return false;
  for (int64_t i = 0; i < nuw; i++)
    if (uw[i] != i) return false;
  bool inserted[MAXR] = {false};
  for (int64_t i = 0; i < nins; i++) {
    if (ins[i] < 0 || ins[i] >= xt->rank || inserted[ins[i]]) return false;
    inserted[ins[i]] = true;
  }
  for (int32_t d = 0, u = 0; d < xt->rank; d++) {
    start[d] = 0;
    wsize[d] = inserted[d] ? 1 : ut->dims[u++];
  }
  for (int64_t k = 0; k < nsd; k++) {
    if (sd[k] < 0 || sd[k] >= xt->rank) return false;
    start[sd[k]] = idx[k];
  }
  for (int32_t d = 0; d < xt->rank; d++)
    if (start[d] < 0 || wsize[d] > xt->dims[d] || start[d] > xt->dims[d] - wsize[d]) return false;
  return true;
}

/* *out: a constant op of type t holding the splat value `elem`, before `at` */
static CJ_MUST_USE cj_status splat_constant(cj_module *m, cj_op *at, const cj_type *t, const void *elem,
                                            cj_value **out) {
  const cj_attr *d = cj_attr_dense(m, t, elem, (size_t)cj_dtype_bytes(t->dtype), true);
  cj_op *c = d ? cj_build_op(m, at, at, CJ_OP_CONSTANT, 0, NULL, t) : NULL;
  if (!c) return cj_oom();
  *out = &c->results[0];
  return cj_op_set_attr(m, c, "value", d);
}

/* a splat update's padded window up to this many elements is a constant (a pad of a splat
 * whose window's innermost run is one element, gravity on component 1 of [n, m, 3], would be
 * read back element by element) */
enum { SPLAT_WINDOW_MAX = 1 << 16, MIN_WINDOW_RUN = 16 };

/* *out: a constant of type xt holding `elem` inside the window and `pv` elsewhere */
static CJ_MUST_USE cj_status window_constant(cj_module *m, cj_op *at, const cj_type *xt, const int64_t *start,
                                             const int64_t *wsize, const void *elem, const void *pv,
                                             cj_value **out) {
  size_t es = (size_t)cj_dtype_bytes(xt->dtype);
  int64_t n = xt->num_elements;
  unsigned char *data = malloc(es * (size_t)(n > 0 ? n : 1));
  if (!data) return cj_oom();
  for (int64_t e = 0; e < n; e++) {
    bool in = true;
    int64_t q = e;
    for (int32_t d = xt->rank - 1; d >= 0; d--) {
      int64_t i = q % xt->dims[d];
      q /= xt->dims[d];
      if (i < start[d] || i >= start[d] + wsize[d]) in = false;
    }
    memcpy(data + (size_t)e * es, in ? elem : pv, es);
  }
  const cj_attr *d = cj_attr_dense(m, xt, data, es * (size_t)n, false);
  free(data);
  cj_op *c = d ? cj_build_op(m, at, at, CJ_OP_CONSTANT, 0, NULL, xt) : NULL;
  if (!c) return cj_oom();
  *out = &c->results[0];
  return cj_op_set_attr(m, c, "value", d);
}

/* *out: pad(reshape(w) to the window, pv) */
static CJ_MUST_USE cj_status padded_window(cj_module *m, cj_op *op, cj_value *w, const cj_type *wt,
                                           const cj_type *ut, const cj_attr *s, const int64_t *lo,
                                           const int64_t *hi, const void *pv, cj_value **out) {
  const cj_type *xt = op->operands[0]->type;
  const cj_type *st = cj_type_tensor_of(m, xt->dtype, 0, NULL);
  if (!st) return cj_oom();
  if (wt != ut && s) {
    CJ_RETURN_IF_ERROR(splat_constant(m, op, wt, s->dense.data, &w));
  } else if (wt != ut) {
    cj_op *r = cj_build_op(m, op, op, CJ_OP_RESHAPE, 1, &w, wt);
    if (!r) return cj_oom();
    w = &r->results[0];
  }
  cj_value *pv_c = NULL;
  CJ_RETURN_IF_ERROR(splat_constant(m, op, st, pv, &pv_c));
  cj_value *pops[2] = {w, pv_c};
  cj_op *pad = cj_build_op(m, op, op, CJ_OP_PAD, 2, pops, xt);
  int64_t zero[MAXR] = {0};
  const cj_attr *lo_a = cj_attr_i64_array(m, xt->rank, lo), *hi_a = cj_attr_i64_array(m, xt->rank, hi),
                *in_a = cj_attr_i64_array(m, xt->rank, zero);
  if (!pad || !lo_a || !hi_a || !in_a) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, pad, "edge_padding_low", lo_a));
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, pad, "edge_padding_high", hi_a));
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, pad, "interior_padding", in_a));
  *out = &pad->results[0];
  return NULL;
}

/* *out = x + w (x - w when neg) of one element, as the scatter computes it; false for types not
 * computed here */
static bool splat_sum(cj_dtype dt, const void *x, const void *w, bool neg, unsigned char out[8]) {
#define SPLAT_SUM(T)                \
  do {                              \
    T a, b;                         \
    memcpy(&a, x, sizeof a);        \
    memcpy(&b, w, sizeof b);        \
    a = neg ? a - b : a + b;        \
    memcpy(out, &a, sizeof a);      \
    return true;                    \
  } while (0)
  if (dt == CJ_F32) SPLAT_SUM(float);
  if (dt == CJ_F64) SPLAT_SUM(double);
#undef SPLAT_SUM
  if (neg || !cj_dtype_is_int(dt) || cj_dtype_bits(dt) < 8 || cj_dtype_bytes(dt) > 8) return false;
  uint64_t a = 0, b = 0;
  int es = cj_dtype_bytes(dt);
  memcpy(&a, x, (size_t)es); /* little-endian: the low bytes; the sum wraps in the low bytes */
  memcpy(&b, w, (size_t)es);
  a += b;
  memcpy(out, &a, (size_t)es);
  return true;
}

static CJ_MUST_USE cj_status rw_scatter_add_window(cj_module *m, cj_op *func, cj_op *op, bool *done) {
  if (op->nopnds != 3 || op->nresults != 1 || !body_adds_in_order(op)) return NULL;
  const cj_type *xt = op->operands[0]->type, *ut = op->operands[2]->type;
  unsigned char pv[8];
  if (op->results[0].type != xt || cj_type_is_quant(xt) || ut->dtype != xt->dtype ||
      !identity_pad(xt->dtype, pv))
    return NULL;
  int64_t start[MAXR], wsize[MAXR], hi[MAXR];
  if (!scatter_one_window(op, start, wsize)) return NULL;
  for (int32_t d = 0; d < xt->rank; d++) hi[d] = xt->dims[d] - start[d] - wsize[d];
  const cj_type *wt = cj_type_tensor_of(m, xt->dtype, xt->rank, wsize);
  if (!wt) return cj_oom();
  cj_value *w = op->operands[2];
  /* x + (-u) is x - u, and the padding of a subtraction is +0.0 (x - +0.0 is x) */
  bool neg = w->def && w->def->kind == CJ_OP_NEGATE && w->def->nopnds == 1 && cj_dtype_is_float(xt->dtype);
  if (neg) {
    w = w->def->operands[0];
    memset(pv, 0, sizeof pv);
  }
  const cj_attr *s = splat_of(w), *sx = splat_of(op->operands[0]);
  unsigned char sum[8];
  cj_value *padded = NULL;
  bool small = xt->num_elements > 0 && xt->num_elements <= SPLAT_WINDOW_MAX;
  if (s && sx && small && splat_sum(xt->dtype, sx->dense.data, s->dense.data, neg, sum)) {
    /* both splats (jnp.zeros_like(p).at[..., 1].add(-9.81)): the result is a constant */
    CJ_RETURN_IF_ERROR(window_constant(m, op, xt, start, wsize, sum, sx->dense.data, &padded));
    cj_replace_all_uses(func, &op->results[0], padded);
    cj_block_remove(op->block, op);
    *done = true;
    return NULL;
  }
  /* the padded view is read by runs of the window's innermost contiguous extent: under
   * MIN_WINDOW_RUN elements (x.at[..., 1].add(u) on [n, m, 3]) per-run reads cost more than the
   * scatter's combiner, which stays */
  int64_t run = 1;
  for (int32_t d = xt->rank - 1; d >= 0; d--) {
    run *= wsize[d];
    if (wsize[d] != xt->dims[d]) break;
  }
  if (!(s && small) && run < MIN_WINDOW_RUN) return NULL;
  if (s && small) {
    CJ_RETURN_IF_ERROR(window_constant(m, op, xt, start, wsize, s->dense.data, pv, &padded));
  } else {
    CJ_RETURN_IF_ERROR(padded_window(m, op, w, wt, ut, s, start, hi, pv, &padded));
  }
  cj_value *aops[2] = {op->operands[0], padded};
  cj_op *add = cj_build_op(m, op, op, neg ? CJ_OP_SUBTRACT : CJ_OP_ADD, 2, aops, xt);
  if (!add) return cj_oom();
  cj_replace_all_uses(func, &op->results[0], &add->results[0]);
  cj_block_remove(op->block, op);
  *done = true;
  return NULL;
}

/* broadcast_in_dim(broadcast_in_dim(x, a), b) is broadcast_in_dim(x, b[a[i]]) (jnp.where's mask
 * [n] -> [n, 1, 1] -> [n, m, 3]: one virtual view instead of a copy of the middle one) */
static CJ_MUST_USE cj_status rw_broadcast_of_broadcast(cj_module *m, cj_op *func, cj_op *op, bool *done) {
  (void)func;
  cj_op *in = op->operands[0]->def;
  if (!in || in->kind != CJ_OP_BROADCAST_IN_DIM || in->nopnds != 1 || op->nopnds != 1) return NULL;
  int64_t a[MAXR], b[MAXR], c[MAXR], na = 0, nb = 0;
  const cj_type *xt = in->operands[0]->type;
  if (!cj_op_get_i64s(in, "broadcast_dimensions", a, MAXR, &na) ||
      !cj_op_get_i64s(op, "broadcast_dimensions", b, MAXR, &nb) || na != xt->rank ||
      nb != op->operands[0]->type->rank || xt->rank > MAXR || nb > MAXR)
    return NULL;
  for (int64_t i = 0; i < na; i++) {
    if (a[i] < 0 || a[i] >= nb) return NULL;
    c[i] = b[a[i]];
  }
  const cj_attr *ca = cj_attr_i64_array(m, na, c);
  if (!ca) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, op, "broadcast_dimensions", ca));
  cj_op_set_operand(op, 0, in->operands[0]);
  *done = is_identity(op) ? false : true;
  return NULL;
}

static CJ_MUST_USE cj_status fold_block(cj_module *m, cj_op *func, cj_block *b) {
  for (cj_op *op = b->first; op;) {
    cj_op *next = op->next;
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next)
        CJ_RETURN_IF_ERROR(fold_block(m, func, nb));
    if (op->nresults == 1 && op->nopnds >= 1 && is_identity(op)) {
      cj_replace_all_uses(func, &op->results[0], op->operands[0]);
      cj_block_remove(b, op);
      op = next;
      continue;
    }
    rewrite_fn rw = fold_rules[op->kind].rewrite;
    if (rw) {
      bool done = false;
      CJ_RETURN_IF_ERROR(rw(m, func, op, &done));
      if (done) {
        op = next;
        continue;
      }
    }
    const cj_type *rt = op->nresults == 1 ? op->results[0].type : NULL;
    if (rt && cj_type_is_static(rt) && !cj_type_is_quant(rt) && op->nopnds >= 1) {
      const cj_attr *s = splat_of(op->operands[0]);
      if (s && !cj_type_is_quant(op->operands[0]->type)) {
        enum splat_rule rule = fold_rules[op->kind].splat;
        if (rule == SPLAT_SAME && rt->dtype == op->operands[0]->type->dtype) {
          CJ_RETURN_IF_ERROR(replace_with_splat(m, func, op, s->dense.data));
        } else if (rule == SPLAT_CONVERT) {
          unsigned char buf[16];
          if (convert_value(op->operands[0]->type, rt, s->dense.data, buf))
            CJ_RETURN_IF_ERROR(replace_with_splat(m, func, op, buf));
        }
      }
    }
    op = next;
  }
  return NULL;
}

/* ---- loop-invariant values first ----
 *
 * In a while body, the ops computed from constants alone (jnp.where's mask (jnp.arange(n) == 0)
 * of a step function) move to the start of the body, in their order. Left where JAX wrote them,
 * an elementwise op of another shape between two groups of the same shape splits them into
 * separate fused steps; at the start they run first, and the groups join. */

static bool invariant_kind(const cj_op *op) {
  if (op->nregions || op->nresults != 1) return false;
  if (op->kind == CJ_OP_CONSTANT || op->kind == CJ_OP_IOTA || op->kind == CJ_OP_BROADCAST_IN_DIM ||
      op->kind == CJ_OP_RESHAPE)
    return true;
  uint32_t f = cj_op_info_get(op->kind)->flags;
  return (f & CJ_OPF_ELEMENTWISE) && !(f & (CJ_OPF_SIDE_EFFECT | CJ_OPF_TERMINATOR));
}

static void hoist_invariants(cj_block *b) {
  static const char mark;
  cj_op *front = b->first; /* hoisted ops go before it */
  for (cj_op *op = b->first; op;) {
    cj_op *next = op->next;
    bool inv = invariant_kind(op);
    for (uint32_t i = 0; inv && i < op->nopnds; i++) {
      const cj_op *d = op->operands[i]->def;
      inv = d && d->block == b && d->scratch == &mark;
    }
    if (inv) {
      op->scratch = (void *)&mark;
      if (op == front) {
        front = next;
      } else {
        cj_block_remove(b, op);
        cj_block_insert_before(b, front, op);
      }
    }
    op = next;
  }
  for (cj_op *op = b->first; op; op = op->next)
    if (op->scratch == &mark) op->scratch = NULL;
}

static void hoist_in_loops(cj_block *b) {
  for (cj_op *op = b->first; op; op = op->next) {
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next) {
        if (op->kind == CJ_OP_WHILE && r == 1) hoist_invariants(nb);
        hoist_in_loops(nb);
      }
  }
}

cj_status cj_pass_fold(cj_module *m, cj_op *func) {
  cj_block *b = cj_func_body(func);
  if (!b) return NULL;
  CJ_RETURN_IF_ERROR(fold_block(m, func, b));
  hoist_in_loops(b);
  return NULL;
}
