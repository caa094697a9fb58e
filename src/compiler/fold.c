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
#define fold_broadcast_in_dim {id_broadcast_in_dim, NULL, SPLAT_SAME}
#define fold_transpose {id_transpose, rw_transpose_of_dot, SPLAT_SAME}
#define fold_slice {id_slice, NULL, SPLAT_SAME}
#define fold_reverse {id_reverse, NULL, SPLAT_SAME}
#define fold_pad {id_pad, NULL, SPLAT_NO}
#define fold_concatenate {id_concatenate, NULL, SPLAT_NO}
#define fold_dot_general {NULL, rw_dot_of_transposes, SPLAT_NO}

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

cj_status cj_pass_fold(cj_module *m, cj_op *func) {
  cj_block *b = cj_func_body(func);
  return b ? fold_block(m, func, b) : NULL;
}
