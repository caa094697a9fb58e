/* cjrt: shape refinement (see compiler.h).
 *
 * Programs whose shapes become static once the argument shapes are known are made static:
 *   - the entry function's argument types may be replaced by static ones (cj_refine_args), and
 *     arguments known to hold a constant (a dimension variable) by that constant;
 *   - one forward walk infers every op's result shape from its operands' shapes (the spec's
 *     shape functions), through while/if/case bodies and every other region;
 *   - shape operands are evaluated where they are computable at compile time (constants,
 *     get_dimension_size of static dimensions, and integer arithmetic, converts, reshapes,
 *     broadcasts, concatenations and slices of those), on demand: other arithmetic is left
 *     to run;
 *   - dynamic ops with computable shape operands become their static forms: dynamic_broadcast_in_dim,
 *     dynamic_reshape, dynamic_iota, dynamic_pad, real_dynamic_slice, dynamic_gather,
 *     dynamic_conv, get_dimension_size (a constant), set_dimension_size (of the size the
 *     dimension has), and the custom calls stablehlo.shape_refinement_operand_wrapper,
 *     stablehlo.dynamic_top_k, stablehlo.dynamic_rng_bit_generator and
 *     stablehlo.dynamic_reduce_window; @shape_assertion calls whose condition is known true
 *     are dropped (the others are checked when the program runs).
 * What stays dynamic is an error naming the first op whose result shape depends on run-time
 * values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "compiler/compiler.h"

enum { MAXR = 16, MAX_EVAL = 4096, MAX_DEPTH = 64 };

typedef struct rf {
  cj_module *m;
  cj_op *func;
  /* memo of evaluated values */
  struct memo {
    const cj_value *v;
    int64_t *data; /* NULL: not computable */
    int64_t n;
  } *memo;
  int nmemo, capmemo;
} rf;

/* ======================================================================== helpers */

static void type_str(const cj_type *t, char *buf, size_t cap) {
  char *s = NULL;
  size_t n = 0;
  if (!cj_print_type(t, &s, &n) && s) {
    snprintf(buf, cap, "%s", s);
  } else {
    snprintf(buf, cap, "?");
  }
  free(s);
}

static bool str_is(const cj_attr *a, const char *s) {
  const char *v;
  size_t n;
  return cj_attr_get_str(a, &v, &n) && n == strlen(s) && memcmp(v, s, n) == 0;
}

static bool is_target(const cj_op *op, const char *name) {
  return op->kind == CJ_OP_CUSTOM_CALL && str_is(cj_op_attr(op, "call_target_name"), name);
}

static bool int_like(cj_dtype dt) {
  cj_dtype_kind k = cj_dtype_kindof(dt);
  return k == CJ_DK_SINT || k == CJ_DK_UINT || k == CJ_DK_BOOL;
}

static bool is_unsigned(cj_dtype dt) {
  cj_dtype_kind k = cj_dtype_kindof(dt);
  return k == CJ_DK_UINT || k == CJ_DK_BOOL;
}

/* wraps v to the width of dt (sign- or zero-extended back to 64 bits) */
static int64_t wrap(int64_t v, cj_dtype dt) {
  if (dt == CJ_PRED) return v != 0;
  int bits = cj_dtype_bits(dt);
  if (bits >= 64) return v;
  uint64_t mask = (1ull << bits) - 1, u = (uint64_t)v & mask;
  if (!is_unsigned(dt) && (u >> (bits - 1))) u |= ~mask;
  return (int64_t)u;
}

static const cj_type *tensor_like(cj_module *m, const cj_type *declared, int32_t rank,
                                  const int64_t *dims) {
  const cj_type *elem = declared->elem ? declared->elem : cj_type_elem(m, declared->dtype);
  bool stat = true;
  for (int32_t i = 0; i < rank; i++)
    if (dims[i] < 0) stat = false;
  return cj_type_tensor(m, elem, rank, dims, stat ? NULL : declared->bounds,
                        declared->kind == CJ_TYPE_TENSOR ? declared->encoding : NULL);
}

/* Sets the type of value v from inferred dims (CJ_DYN = unknown), keeping what the declared
 * type knows. A static declared dimension that disagrees with the inferred one is an error. */
static CJ_MUST_USE cj_status refine_value(rf *R, const cj_op *op, cj_value *v, int32_t rank, const int64_t *dims) {
  const cj_type *t = v->type;
  if (!t || (t->kind != CJ_TYPE_TENSOR && t->kind != CJ_TYPE_UNRANKED)) return NULL;
  if (t->kind == CJ_TYPE_TENSOR && t->rank != rank)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "result %u has rank %d, its operands give rank %d",
                       v->index, t->rank, rank);
  int64_t nd[MAXR];
  bool changed = t->kind == CJ_TYPE_UNRANKED;
  for (int32_t i = 0; i < rank; i++) {
    int64_t dd = t->kind == CJ_TYPE_TENSOR ? t->dims[i] : CJ_DYN;
    int64_t id = dims[i];
    if (dd >= 0 && id >= 0 && dd != id)
      return cj_op_error(op, CJ_INVALID_ARGUMENT,
                         "result %u dimension %d is %lld, its operands give %lld", v->index, i,
                         (long long)dd, (long long)id);
    nd[i] = dd >= 0 ? dd : id;
    if (nd[i] != dd) changed = true;
  }
  if (!changed) return NULL;
  const cj_type *nt = tensor_like(R->m, t, rank, nd);
  if (!nt) return cj_oom();
  v->type = nt;
  return NULL;
}

static CJ_MUST_USE cj_status refine_like(rf *R, const cj_op *op, cj_value *v, const cj_type *src) {
  if (!src || src->kind != CJ_TYPE_TENSOR) return NULL;
  return refine_value(R, op, v, src->rank, src->dims);
}

/* replaces op's results by `vals` and removes op */
static void replace_op(rf *R, cj_op *op, cj_value *const *vals) {
  for (uint32_t i = 0; i < op->nresults; i++) cj_replace_all_uses(R->func, &op->results[i], vals[i]);
  cj_block_remove(op->block, op);
}

/* a new op of kind k before `at`, taking over at's position; results typed like at's */
static cj_op *new_op_like(rf *R, cj_op *at, cj_op_kind k, uint32_t nopnds, cj_value *const *opnds,
                          uint32_t nres, uint32_t nregions) {
  cj_op *o = cj_op_create(R->m, k, NULL, nopnds, nres, nregions);
  if (!o) return NULL;
  for (uint32_t i = 0; i < nopnds; i++) o->operands[i] = opnds[i];
  for (uint32_t i = 0; i < nres && i < at->nresults; i++) o->results[i].type = at->results[i].type;
  o->pos = at->pos;
  o->loc = at->loc;
  cj_block_insert_before(at->block, at, o);
  return o;
}

static CJ_MUST_USE cj_status copy_attrs(rf *R, cj_op *to, const cj_op *from, const char *const *skip) {
  for (uint32_t i = 0; i < from->nattrs; i++) {
    bool sk = false;
    for (int k = 0; skip && skip[k]; k++)
      if (strcmp(from->attrs[i].name, skip[k]) == 0) sk = true;
    if (sk) continue;
    CJ_RETURN_IF_ERROR(cj_op_set_attr(R->m, to, from->attrs[i].name, from->attrs[i].value));
  }
  return NULL;
}

/* ======================================================================== evaluation */

static bool eval(rf *R, const cj_value *v, int depth, const int64_t **out, int64_t *n);

/* the memo is an open-addressing table of capmemo (a power of two) slots */
static struct memo *memo_slot(rf *R, const cj_value *v) {
  if (!R->capmemo) return NULL;
  uint32_t mask = (uint32_t)R->capmemo - 1;
  for (uint32_t i = cj_hash_ptr(v) & mask;; i = (i + 1) & mask)
    if (R->memo[i].v == v || !R->memo[i].v) return &R->memo[i];
}

static bool memo_get(rf *R, const cj_value *v, const int64_t **out, int64_t *n, bool *known) {
  struct memo *s = memo_slot(R, v);
  if (!s || !s->v) return false;
  *known = s->data != NULL;
  *out = s->data;
  *n = s->n;
  return true;
}

static struct memo *memo_put(rf *R, const cj_value *v, int64_t *data, int64_t n) {
  if (2 * (R->nmemo + 1) > R->capmemo) {
    int cap = R->capmemo ? R->capmemo * 2 : 64;
    struct memo *old = R->memo;
    int oldcap = R->capmemo;
    R->memo = calloc((size_t)cap, sizeof *R->memo);
    if (!R->memo) {
      R->memo = old;
      free(data);
      return NULL;
    }
    R->capmemo = cap;
    for (int i = 0; i < oldcap; i++)
      if (old[i].v) *memo_slot(R, old[i].v) = old[i];
    free(old);
  }
  struct memo *s = memo_slot(R, v);
  s->v = v;
  s->data = data;
  s->n = n;
  R->nmemo++;
  return s;
}

static void memo_free(rf *R) {
  for (int i = 0; i < R->capmemo; i++) free(R->memo[i].data);
  free(R->memo);
  R->memo = NULL;
  R->nmemo = R->capmemo = 0;
}

/* element i of an evaluated operand (scalars broadcast) */
static int64_t at_(const int64_t *d, int64_t n, int64_t i) { return n == 1 ? d[0] : d[i]; }

static int64_t div_int(int64_t a, int64_t b, cj_dtype dt) {
  if (b == 0) return wrap(-1, dt);
  if (is_unsigned(dt)) return (int64_t)((uint64_t)a / (uint64_t)b);
  if (b == -1 && a == wrap(INT64_MIN, dt)) return a;
  if (b == -1) return wrap(-a, dt);
  return a / b;
}

static int64_t rem_int(int64_t a, int64_t b, cj_dtype dt) {
  if (b == 0) return a;
  if (is_unsigned(dt)) return (int64_t)((uint64_t)a % (uint64_t)b);
  if (b == -1) return 0;
  return a % b;
}

static bool compare_int(int64_t a, int64_t b, int32_t dir, bool uns) {
  if (uns) { /* flipping the top bit maps unsigned order onto signed order */
    a = (int64_t)((uint64_t)a ^ (UINT64_C(1) << 63));
    b = (int64_t)((uint64_t)b ^ (UINT64_C(1) << 63));
  }
  switch (dir) {
    case CJ_COMPARISON_DIRECTION_EQ: return a == b;
    case CJ_COMPARISON_DIRECTION_NE: return a != b;
    case CJ_COMPARISON_DIRECTION_GE: return a >= b;
    case CJ_COMPARISON_DIRECTION_GT: return a > b;
    case CJ_COMPARISON_DIRECTION_LE: return a <= b;
    default: return a < b;
  }
}

/* computes the value of an op result from its operands' values (NULL data = not computable) */
/* The EVAL column of opfacts.def: r[0..n) of the op's (single) result. Functions that read
 * operands call ev_operands first. */
typedef struct ev_ctx {
  rf *R;
  const cj_op *op;
  int depth;
  const cj_type *rt; /* the result type */
  int64_t n;         /* its element count */
  cj_dtype dt;       /* its element type */
  const cj_type *xt; /* operand 0's type (ev_operands) */
  const int64_t *od[8];
  int64_t on[8];
} ev_ctx;
typedef bool (*ev_fn)(ev_ctx *c, int64_t *r);
#define ev_none NULL

static bool ev_operands(ev_ctx *c) {
  const cj_op *op = c->op;
  if (op->nopnds > 8) return false;
  for (uint32_t i = 0; i < op->nopnds; i++) {
    const cj_type *t = op->operands[i]->type;
    if (!cj_type_is_static(t) || !int_like(t->dtype)) return false;
    if (!eval(c->R, op->operands[i], c->depth + 1, &c->od[i], &c->on[i])) return false;
  }
  c->xt = op->nopnds ? op->operands[0]->type : NULL;
  return true;
}

static bool ev_get_dimension_size(ev_ctx *c, int64_t *r) {
  int64_t d;
  const cj_type *xt = c->op->operands[0]->type;
  if (!cj_op_get_i64(c->op, "dimension", &d) || xt->kind != CJ_TYPE_TENSOR || d < 0 ||
      d >= xt->rank || xt->dims[d] < 0)
    return false;
  r[0] = wrap(xt->dims[d], c->dt);
  return true;
}

static bool ev_iota(ev_ctx *c, int64_t *r) {
  int64_t d;
  const cj_type *rt = c->rt;
  if (!cj_op_get_i64(c->op, "iota_dimension", &d) || d < 0 || d >= rt->rank) return false;
  int64_t inner = 1;
  for (int32_t k = (int32_t)d + 1; k < rt->rank; k++) inner *= rt->dims[k];
  for (int64_t i = 0; i < c->n; i++) r[i] = wrap((i / inner) % rt->dims[d], c->dt);
  return true;
}

static bool ev_convert(ev_ctx *c, int64_t *r) {
  if (!ev_operands(c)) return false;
  for (int64_t i = 0; i < c->n; i++) r[i] = wrap(c->od[0][i], c->dt);
  return true;
}

static bool ev_reshape(ev_ctx *c, int64_t *r) {
  if (!ev_operands(c) || c->on[0] != c->n) return false;
  for (int64_t i = 0; i < c->n; i++) r[i] = c->od[0][i];
  return true;
}

/* The row-major element strides of shape t. */
static void row_major_strides(const cj_type *t, int64_t *strides) {
  int64_t s = 1;
  for (int32_t d = t->rank - 1; d >= 0; d--) {
    strides[d] = s;
    s *= t->dims[d];
  }
}

static bool ev_broadcast_in_dim(ev_ctx *c, int64_t *r) {
  if (!ev_operands(c)) return false;
  const cj_type *xt = c->xt, *rt = c->rt;
  int64_t bd[MAXR], nbd = 0, xs[MAXR], rs[MAXR];
  if (!cj_op_get_i64s(c->op, "broadcast_dimensions", bd, MAXR, &nbd) || nbd != xt->rank)
    return false;
  row_major_strides(xt, xs);
  for (int64_t i = 0; i < c->n; i++) {
    int64_t rem = i, off = 0;
    for (int32_t d = rt->rank - 1; d >= 0; d--) {
      rs[d] = rem % rt->dims[d];
      rem /= rt->dims[d];
    }
    for (int32_t d = 0; d < xt->rank; d++) off += (xt->dims[d] == 1 ? 0 : rs[bd[d]]) * xs[d];
    r[i] = c->od[0][off];
  }
  return true;
}

static bool ev_concatenate(ev_ctx *c, int64_t *r) {
  if (!ev_operands(c)) return false;
  const cj_op *op = c->op;
  const cj_type *rt = c->rt;
  int64_t dim;
  if (!cj_op_get_i64(op, "dimension", &dim) || dim < 0 || dim >= rt->rank) return false;
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < dim; d++) outer *= rt->dims[d];
  for (int32_t d = (int32_t)dim + 1; d < rt->rank; d++) inner *= rt->dims[d];
  int64_t k = 0;
  for (int64_t o = 0; o < outer; o++)
    for (uint32_t i = 0; i < op->nopnds; i++) {
      int64_t len = op->operands[i]->type->dims[dim] * inner;
      for (int64_t j = 0; j < len; j++) r[k++] = c->od[i][o * len + j];
    }
  return k == c->n;
}

static bool ev_slice(ev_ctx *c, int64_t *r) {
  if (!ev_operands(c)) return false;
  const cj_type *xt = c->xt, *rt = c->rt;
  int64_t st[MAXR], sd[MAXR], ns = 0, nd = 0, xs[MAXR];
  if (!cj_op_get_i64s(c->op, "start_indices", st, MAXR, &ns) ||
      !cj_op_get_i64s(c->op, "strides", sd, MAXR, &nd) || ns != xt->rank || nd != xt->rank)
    return false;
  row_major_strides(xt, xs);
  for (int64_t i = 0; i < c->n; i++) {
    int64_t rem = i, off = 0;
    for (int32_t d = rt->rank - 1; d >= 0; d--) {
      off += (st[d] + (rem % rt->dims[d]) * sd[d]) * xs[d];
      rem /= rt->dims[d];
    }
    r[i] = c->od[0][off];
  }
  return true;
}

/* elementwise binary ops on (a, b) of operand element type xd (uns: unsigned) */
#define EV_BINARY(name, expr)                                          \
  static bool ev_##name(ev_ctx *c, int64_t *r) {                       \
    if (!ev_operands(c)) return false;                                 \
    cj_dtype xd = c->xt->dtype;                                        \
    bool uns = is_unsigned(xd);                                        \
    (void)uns;                                                         \
    for (int64_t i = 0; i < c->n; i++) {                               \
      int64_t a = at_(c->od[0], c->on[0], i), b = at_(c->od[1], c->on[1], i); \
      r[i] = wrap((expr), c->dt);                                      \
    }                                                                  \
    return true;                                                       \
  }
EV_BINARY(add, (int64_t)((uint64_t)a + (uint64_t)b))
EV_BINARY(subtract, (int64_t)((uint64_t)a - (uint64_t)b))
EV_BINARY(multiply, (int64_t)((uint64_t)a * (uint64_t)b))
EV_BINARY(divide, div_int(a, b, xd))
EV_BINARY(remainder, rem_int(a, b, xd))
EV_BINARY(maximum, compare_int(a, b, CJ_COMPARISON_DIRECTION_GE, uns) ? a : b)
EV_BINARY(minimum, compare_int(a, b, CJ_COMPARISON_DIRECTION_LE, uns) ? a : b)
EV_BINARY(and, a & b)
EV_BINARY(or, a | b)
EV_BINARY(xor, a ^ b)
#undef EV_BINARY

/* elementwise unary ops on a, of result element type dt */
#define EV_UNARY(name, expr)                           \
  static bool ev_##name(ev_ctx *c, int64_t *r) {       \
    if (!ev_operands(c)) return false;                 \
    cj_dtype dt = c->dt;                               \
    (void)dt;                                          \
    for (int64_t i = 0; i < c->n; i++) {               \
      int64_t a = c->od[0][i];                         \
      r[i] = wrap((expr), dt);                         \
    }                                                  \
    return true;                                       \
  }
EV_UNARY(negate, (int64_t)(0 - (uint64_t)a))
EV_UNARY(abs, a < 0 ? (int64_t)(0 - (uint64_t)a) : a)
EV_UNARY(not, dt == CJ_PRED ? !a : ~a)
EV_UNARY(sign, a > 0 ? 1 : a < 0 ? -1 : 0)
#undef EV_UNARY

static bool ev_compare(ev_ctx *c, int64_t *r) {
  if (!ev_operands(c)) return false;
  int32_t dir = 0;
  if (!cj_op_get_enum(c->op, "comparison_direction", CJ_EK_COMPARISON_DIRECTION, &dir))
    return false;
  bool uns = is_unsigned(c->xt->dtype);
  for (int64_t i = 0; i < c->n; i++)
    r[i] = compare_int(at_(c->od[0], c->on[0], i), at_(c->od[1], c->on[1], i), dir, uns);
  return true;
}

static bool ev_select(ev_ctx *c, int64_t *r) {
  if (!ev_operands(c)) return false;
  for (int64_t i = 0; i < c->n; i++)
    r[i] = at_(c->od[0], c->on[0], i) ? at_(c->od[1], c->on[1], i) : at_(c->od[2], c->on[2], i);
  return true;
}

static bool ev_clamp(ev_ctx *c, int64_t *r) {
  if (!ev_operands(c)) return false;
  bool uns = is_unsigned(c->op->operands[1]->type->dtype);
  for (int64_t i = 0; i < c->n; i++) {
    int64_t lo = at_(c->od[0], c->on[0], i), x = at_(c->od[1], c->on[1], i),
            hi = at_(c->od[2], c->on[2], i);
    if (compare_int(x, lo, CJ_COMPARISON_DIRECTION_LT, uns)) x = lo;
    if (compare_int(x, hi, CJ_COMPARISON_DIRECTION_GT, uns)) x = hi;
    r[i] = x;
  }
  return true;
}

static const ev_fn eval_fns[CJ_OP_COUNT] = {
#define OPF(id, infer, canon, ev, ...) ev,
#include "ir/opfacts.def"
#undef OPF
};

static int64_t *eval_op(rf *R, const cj_op *op, int depth) {
  const cj_type *rt = op->results[0].type;
  if (!cj_type_is_static(rt) || !int_like(rt->dtype) || rt->num_elements > MAX_EVAL) return NULL;
  ev_fn fn = eval_fns[op->kind];
  if (!fn) return NULL;
  ev_ctx c = {.R = R, .op = op, .depth = depth, .rt = rt, .n = rt->num_elements, .dt = rt->dtype};
  int64_t *r = malloc(sizeof(int64_t) * (size_t)(c.n ? c.n : 1));
  if (!r) return NULL;
  if (!fn(&c, r)) {
    free(r);
    return NULL;
  }
  return r;
}

/* The integer value of v if it is computable at compile time (*out borrowed from the memo). */
static bool eval(rf *R, const cj_value *v, int depth, const int64_t **out, int64_t *n) {
  bool known;
  if (memo_get(R, v, out, n, &known)) return known;
  if (depth > MAX_DEPTH || !cj_type_is_static(v->type) || !int_like(v->type->dtype) ||
      v->type->num_elements > MAX_EVAL || !v->def || v->def->nresults != 1)
    return false; /* not memoized: a shallower path may succeed */
  const cj_op *op = v->def;
  int64_t cnt = v->type->num_elements;
  int64_t *data = NULL;
  if (op->kind == CJ_OP_CONSTANT) {
    const cj_attr *a = cj_op_attr(op, "value");
    if (a && a->kind == CJ_ATTR_DENSE) {
      data = malloc(sizeof(int64_t) * (size_t)(cnt ? cnt : 1));
      if (data)
        for (int64_t i = 0; i < cnt; i++) data[i] = wrap(cj_dense_get_i64(a, a->dense.splat ? 0 : i), v->type->dtype);
    }
  } else {
    data = eval_op(R, op, depth);
  }
  struct memo *slot = memo_put(R, v, data, cnt);
  if (!slot || !slot->data) return false;
  *out = slot->data;
  *n = cnt;
  return true;
}

/* a computable 1-D (or scalar) shape operand */
static bool shape_operand(rf *R, const cj_value *v, int64_t *out, int64_t cap, int64_t *n) {
  const int64_t *d;
  int64_t k;
  if (!eval(R, v, 0, &d, &k) || k > cap) return false;
  memcpy(out, d, sizeof(int64_t) * (size_t)k);
  *n = k;
  return true;
}

/* Whether a and b compute the same value: the same value, or the same op kind with equal
 * attributes and result types over operands that compute the same values (no side effects,
 * no regions). */
static bool same_value(const cj_value *a, const cj_value *b, int depth) {
  if (a == b) return true;
  if (depth > 16 || !a->def || !b->def || a->type != b->type || a->index != b->index) return false;
  const cj_op *x = a->def, *y = b->def;
  if (x->kind != y->kind || x->kind == CJ_OP_UNKNOWN || x->nopnds != y->nopnds || x->nregions ||
      y->nregions || x->nattrs != y->nattrs || x->kind == CJ_OP_CUSTOM_CALL)
    return false;
  if (cj_op_info_get(x->kind)->flags & CJ_OPF_SIDE_EFFECT) return false;
  for (uint32_t i = 0; i < x->nattrs; i++) {
    const cj_attr *o = cj_op_attr(y, x->attrs[i].name);
    if (!o || !cj_attr_equal(o, x->attrs[i].value)) return false;
  }
  for (uint32_t i = 0; i < x->nopnds; i++)
    if (!same_value(x->operands[i], y->operands[i], depth + 1)) return false;
  return true;
}

/* real_dynamic_slice whose limit is start + constant sizes and whose strides are 1: the sizes */
static bool rds_sizes(rf *R, const cj_op *op, int64_t *sizes, int64_t *n) {
  const cj_value *start = op->operands[1], *limit = op->operands[2];
  int64_t st[MAXR], ns = 0;
  if (!shape_operand(R, op->operands[3], st, MAXR, &ns)) return false;
  for (int64_t i = 0; i < ns; i++)
    if (st[i] != 1) return false;
  const cj_op *add = limit->def;
  if (!add || add->kind != CJ_OP_ADD) return false;
  for (int k = 0; k < 2; k++) {
    if (same_value(add->operands[k], start, 0) &&
        shape_operand(R, add->operands[1 - k], sizes, MAXR, n) && *n == ns)
      return true;
  }
  return false;
}

/* ======================================================================== inference */

static void dims_of(const cj_type *t, int64_t *out, int32_t *rank) {
  *rank = t->rank;
  for (int32_t i = 0; i < t->rank; i++) out[i] = t->dims[i];
}

static bool ranked(const cj_value *v) { return v->type && v->type->kind == CJ_TYPE_TENSOR; }

/* window output size (reduce_window, convolution): CJ_DYN if the input is */
static int64_t window_out(int64_t n, int64_t lo, int64_t hi, int64_t base_dil, int64_t win,
                          int64_t win_dil, int64_t stride) {
  if (n < 0) return CJ_DYN;
  int64_t dn = n == 0 ? 0 : (n - 1) * base_dil + 1;
  int64_t padded = dn + lo + hi;
  int64_t dw = win == 0 ? 0 : (win - 1) * win_dil + 1;
  if (padded < dw || stride <= 0) return 0;
  return (padded - dw) / stride + 1;
}

static CJ_MUST_USE cj_status infer_elementwise(rf *R, cj_op *op) {
  const cj_type *rt = op->results[0].type;
  if (!rt || rt->kind != CJ_TYPE_TENSOR) {
    /* unranked result: take the first ranked operand of the most rank */
    for (uint32_t i = 0; i < op->nopnds; i++)
      if (ranked(op->operands[i]) && op->operands[i]->type->rank > 0)
        return refine_like(R, op, &op->results[0], op->operands[i]->type);
    return NULL;
  }
  int64_t d[MAXR];
  for (int32_t k = 0; k < rt->rank; k++) d[k] = CJ_DYN;
  for (uint32_t i = 0; i < op->nopnds; i++) {
    const cj_type *t = op->operands[i]->type;
    if (!t || t->kind != CJ_TYPE_TENSOR || t->rank != rt->rank) continue;
    for (int32_t k = 0; k < rt->rank; k++)
      if (d[k] < 0 && t->dims[k] >= 0) d[k] = t->dims[k];
  }
  for (uint32_t i = 0; i < op->nresults; i++) CJ_RETURN_IF_ERROR(refine_value(R, op, &op->results[i], rt->rank, d));
  return NULL;
}

static CJ_MUST_USE cj_status infer_chlo_broadcast(rf *R, cj_op *op) {
  const cj_type *rt = op->results[0].type;
  if (!rt || rt->kind != CJ_TYPE_TENSOR) return NULL;
  int64_t d[MAXR];
  int64_t bd[MAXR], nbd = 0;
  bool have_bd = cj_op_get_i64s(op, "broadcast_dimensions", bd, MAXR, &nbd) && nbd > 0;
  for (int32_t k = 0; k < rt->rank; k++) d[k] = CJ_DYN;
  bool all_known[MAXR];
  for (int32_t k = 0; k < rt->rank; k++) all_known[k] = true;
  int64_t mx[MAXR];
  for (int32_t k = 0; k < rt->rank; k++) mx[k] = 1;
  for (uint32_t i = 0; i < op->nopnds; i++) {
    const cj_type *t = op->operands[i]->type;
    if (!t || t->kind != CJ_TYPE_TENSOR) return NULL;
    for (int32_t k = 0; k < t->rank; k++) {
      int32_t to = have_bd && t->rank < rt->rank && nbd == t->rank ? (int32_t)bd[k]
                                                                    : rt->rank - t->rank + k;
      if (to < 0 || to >= rt->rank) return NULL;
      if (t->dims[k] < 0) all_known[to] = false;
      else if (t->dims[k] != 1) {
        if (mx[to] != 1 && mx[to] != t->dims[k])
          return cj_op_error(op, CJ_INVALID_ARGUMENT, "operand dimensions %lld and %lld do not broadcast",
                             (long long)mx[to], (long long)t->dims[k]);
        mx[to] = t->dims[k];
      }
    }
  }
  for (int32_t k = 0; k < rt->rank; k++)
    if (mx[k] != 1 || all_known[k]) d[k] = mx[k];
  return refine_value(R, op, &op->results[0], rt->rank, d);
}

static CJ_MUST_USE cj_status infer_reduce_window(rf *R, cj_op *op) {
  uint32_t nin = op->nopnds / 2;
  if (!nin || !ranked(op->operands[0])) return NULL;
  const cj_type *xt = op->operands[0]->type;
  int32_t r = xt->rank;
  int64_t wd[MAXR], ws[MAXR], bdl[MAXR], wdl[MAXR], pad[2 * MAXR], n = 0;
  if (!cj_op_get_i64s(op, "window_dimensions", wd, MAXR, &n) || n != r) return NULL;
  for (int32_t i = 0; i < r; i++) ws[i] = bdl[i] = wdl[i] = 1, pad[2 * i] = pad[2 * i + 1] = 0;
  if (cj_op_attr(op, "window_strides") && (!cj_op_get_i64s(op, "window_strides", ws, MAXR, &n) || n != r)) return NULL;
  if (cj_op_attr(op, "base_dilations") && (!cj_op_get_i64s(op, "base_dilations", bdl, MAXR, &n) || n != r)) return NULL;
  if (cj_op_attr(op, "window_dilations") && (!cj_op_get_i64s(op, "window_dilations", wdl, MAXR, &n) || n != r)) return NULL;
  if (cj_op_attr(op, "padding") && (!cj_op_get_i64s(op, "padding", pad, 2 * MAXR, &n) || n != 2 * r)) return NULL;
  int64_t d[MAXR];
  for (int32_t i = 0; i < r; i++)
    d[i] = window_out(xt->dims[i], pad[2 * i], pad[2 * i + 1], bdl[i], wd[i], wdl[i], ws[i]);
  for (uint32_t i = 0; i < op->nresults; i++) CJ_RETURN_IF_ERROR(refine_value(R, op, &op->results[i], r, d));
  return NULL;
}

static CJ_MUST_USE cj_status infer_conv(rf *R, cj_op *op, const int64_t *pad_override) {
  if (!ranked(op->operands[0]) || !ranked(op->operands[1])) return NULL;
  const cj_type *lt = op->operands[0]->type, *kt = op->operands[1]->type;
  const cj_attr *dn = cj_op_attr(op, "dimension_numbers");
  /* absent fields are 0 (the printer leaves zeros out) */
  int64_t ib = 0, kof = 0, ob = 0, of = 0, is[MAXR], ks[MAXR], os[MAXR], n1 = 0, n2 = 0, n3 = 0;
  if (!dn || dn->kind != CJ_ATTR_STRUCT) return NULL;
  cj_attr_get_i64(cj_attr_field(dn, CJ_SK_CONV, CJ_SF_CONV_input_batch_dimension), &ib);
  cj_attr_get_i64(cj_attr_field(dn, CJ_SK_CONV, CJ_SF_CONV_kernel_output_feature_dimension), &kof);
  cj_attr_get_i64(cj_attr_field(dn, CJ_SK_CONV, CJ_SF_CONV_output_batch_dimension), &ob);
  cj_attr_get_i64(cj_attr_field(dn, CJ_SK_CONV, CJ_SF_CONV_output_feature_dimension), &of);
  cj_attr_get_i64s(cj_attr_field(dn, CJ_SK_CONV, CJ_SF_CONV_input_spatial_dimensions), is, MAXR, &n1);
  cj_attr_get_i64s(cj_attr_field(dn, CJ_SK_CONV, CJ_SF_CONV_kernel_spatial_dimensions), ks, MAXR, &n2);
  cj_attr_get_i64s(cj_attr_field(dn, CJ_SK_CONV, CJ_SF_CONV_output_spatial_dimensions), os, MAXR, &n3);
  if (ib < 0 || ib >= lt->rank || kof < 0 || kof >= kt->rank) return NULL;
  int32_t ns = (int32_t)n1;
  if (n2 != ns || n3 != ns || lt->rank != ns + 2) return NULL;
  int64_t st[MAXR], ld[MAXR], rd[MAXR], pad[2 * MAXR], n = 0, bgc = 1;
  for (int32_t i = 0; i < ns; i++) st[i] = ld[i] = rd[i] = 1, pad[2 * i] = pad[2 * i + 1] = 0;
  static const char *const names[3] = {"window_strides", "lhs_dilation", "rhs_dilation"};
  int64_t *arrs[3] = {st, ld, rd};
  for (int k = 0; k < 3; k++)
    if (cj_op_attr(op, names[k]) && (!cj_op_get_i64s(op, names[k], arrs[k], MAXR, &n) || n != ns))
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "%s has %lld entries for %d spatial dimensions",
                         names[k], (long long)n, ns);
  if (pad_override) memcpy(pad, pad_override, sizeof(int64_t) * 2 * (size_t)ns);
  else if (cj_op_attr(op, "padding") && (!cj_op_get_i64s(op, "padding", pad, 2 * MAXR, &n) || n != 2 * ns))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "padding has %lld entries for %d spatial dimensions",
                       (long long)n, ns);
  cj_op_get_i64(op, "batch_group_count", &bgc);
  int64_t d[MAXR];
  int32_t r = lt->rank;
  for (int32_t i = 0; i < r; i++) d[i] = CJ_DYN;
  if (ob >= 0 && ob < r) d[ob] = lt->dims[ib] < 0 ? CJ_DYN : lt->dims[ib] / (bgc > 0 ? bgc : 1);
  if (of >= 0 && of < r) d[of] = kt->dims[kof];
  for (int32_t i = 0; i < ns; i++) {
    if (os[i] < 0 || os[i] >= r || is[i] < 0 || is[i] >= r || ks[i] < 0 || ks[i] >= kt->rank)
      return NULL;
    d[os[i]] = kt->dims[ks[i]] < 0 ? CJ_DYN
                                   : window_out(lt->dims[is[i]], pad[2 * i], pad[2 * i + 1], ld[i],
                                                kt->dims[ks[i]], rd[i], st[i]);
  }
  return refine_value(R, op, &op->results[0], r, d);
}

static CJ_MUST_USE cj_status infer_gather(rf *R, cj_op *op, const int64_t *ss_override, int64_t nss) {
  if (!ranked(op->operands[0]) || !ranked(op->operands[1])) return NULL;
  const cj_type *it = op->operands[1]->type;
  const cj_attr *dn = cj_op_attr(op, "dimension_numbers");
  int64_t off[MAXR], col[MAXR], obd[MAXR], ss[MAXR], noff = 0, ncol = 0, nob = 0, ivd = 0;
  if (!dn) return NULL;
  const cj_attr *f;
  if ((f = cj_attr_field(dn, CJ_SK_GATHER, CJ_SF_GATHER_offset_dims))) cj_attr_get_i64s(f, off, MAXR, &noff);
  if ((f = cj_attr_field(dn, CJ_SK_GATHER, CJ_SF_GATHER_collapsed_slice_dims))) cj_attr_get_i64s(f, col, MAXR, &ncol);
  if ((f = cj_attr_field(dn, CJ_SK_GATHER, CJ_SF_GATHER_operand_batching_dims))) cj_attr_get_i64s(f, obd, MAXR, &nob);
  if ((f = cj_attr_field(dn, CJ_SK_GATHER, CJ_SF_GATHER_index_vector_dim))) cj_attr_get_i64(f, &ivd);
  if (ss_override) {
    memcpy(ss, ss_override, sizeof(int64_t) * (size_t)nss);
  } else if (!cj_op_get_i64s(op, "slice_sizes", ss, MAXR, &nss)) {
    return NULL;
  }
  int64_t offs[MAXR], no = 0;
  for (int64_t d = 0; d < nss; d++) {
    bool skip = false;
    for (int64_t k = 0; k < ncol; k++)
      if (col[k] == d) skip = true;
    for (int64_t k = 0; k < nob; k++)
      if (obd[k] == d) skip = true;
    if (!skip) offs[no++] = ss[d];
  }
  int64_t bat[MAXR], nbat = 0;
  for (int32_t d = 0; d < it->rank; d++)
    if (d != ivd) bat[nbat++] = it->dims[d];
  int32_t r = (int32_t)(nbat + no);
  if (r > MAXR) return NULL;
  int64_t res[MAXR];
  int64_t oi = 0, bi = 0;
  for (int32_t d = 0; d < r; d++) {
    bool is_off = false;
    for (int64_t k = 0; k < noff; k++)
      if (off[k] == d) is_off = true;
    if (is_off) res[d] = oi < no ? offs[oi++] : CJ_DYN;
    else res[d] = bi < nbat ? bat[bi++] : CJ_DYN;
  }
  return refine_value(R, op, &op->results[0], r, res);
}

static CJ_MUST_USE cj_status infer_dot_general(rf *R, cj_op *op) {
  if (!ranked(op->operands[0]) || !ranked(op->operands[1])) return NULL;
  const cj_type *lt = op->operands[0]->type, *rt = op->operands[1]->type;
  int64_t lb[MAXR], rb[MAXR], lc[MAXR], rc[MAXR], nlb = 0, nrb = 0, nlc = 0, nrc = 0;
  const cj_attr *dn = cj_op_attr(op, "dot_dimension_numbers");
  if (!dn) return NULL;
  const cj_attr *f;
  if ((f = cj_attr_field(dn, CJ_SK_DOT, CJ_SF_DOT_lhs_batching_dimensions))) cj_attr_get_i64s(f, lb, MAXR, &nlb);
  if ((f = cj_attr_field(dn, CJ_SK_DOT, CJ_SF_DOT_rhs_batching_dimensions))) cj_attr_get_i64s(f, rb, MAXR, &nrb);
  if ((f = cj_attr_field(dn, CJ_SK_DOT, CJ_SF_DOT_lhs_contracting_dimensions))) cj_attr_get_i64s(f, lc, MAXR, &nlc);
  if ((f = cj_attr_field(dn, CJ_SK_DOT, CJ_SF_DOT_rhs_contracting_dimensions))) cj_attr_get_i64s(f, rc, MAXR, &nrc);
  int64_t d[MAXR];
  int32_t r = 0;
  for (int64_t i = 0; i < nlb; i++) d[r++] = lb[i] < lt->rank ? lt->dims[lb[i]] : CJ_DYN;
  for (int32_t k = 0; k < lt->rank; k++) {
    bool used = false;
    for (int64_t i = 0; i < nlb; i++) used |= lb[i] == k;
    for (int64_t i = 0; i < nlc; i++) used |= lc[i] == k;
    if (!used && r < MAXR) d[r++] = lt->dims[k];
  }
  for (int32_t k = 0; k < rt->rank; k++) {
    bool used = false;
    for (int64_t i = 0; i < nrb; i++) used |= rb[i] == k;
    for (int64_t i = 0; i < nrc; i++) used |= rc[i] == k;
    if (!used && r < MAXR) d[r++] = rt->dims[k];
  }
  return refine_value(R, op, &op->results[0], r, d);
}

/* ---- the INFER column of opfacts.def: result shapes from the operands ---- */

typedef cj_status (*inf_fn)(rf *R, cj_op *op);
#define inf_none NULL
#define inf_elementwise infer_elementwise
#define inf_chlo_broadcast infer_chlo_broadcast
#define inf_reduce_window infer_reduce_window
#define inf_dot_general infer_dot_general

static CJ_MUST_USE cj_status inf_dot(rf *R, cj_op *op) {
  if (!ranked(op->operands[0]) || !ranked(op->operands[1])) return NULL;
  const cj_type *lt = op->operands[0]->type, *rt = op->operands[1]->type;
  int64_t d[2];
  int32_t r = 0;
  if (lt->rank == 2) d[r++] = lt->dims[0];
  if (rt->rank == 2) d[r++] = rt->dims[1];
  return refine_value(R, op, &op->results[0], r, d);
}

static CJ_MUST_USE cj_status inf_bitcast_convert(rf *R, cj_op *op) {
  cj_value *x = op->nopnds ? op->operands[0] : NULL;
  if (!x || !ranked(x)) return NULL;
  const cj_type *xt = x->type, *rt = op->results[0].type;
  int64_t d[MAXR];
  int32_t r = 0;
  int ib = cj_dtype_bits(xt->dtype), ob = cj_dtype_bits(rt->dtype);
  dims_of(xt, d, &r);
  if (ib == ob) return refine_value(R, op, &op->results[0], r, d);
  if (ib > ob) {
    if (r >= MAXR) return NULL;
    d[r++] = ib / ob;
    return refine_value(R, op, &op->results[0], r, d);
  }
  if (r < 1) return NULL;
  return refine_value(R, op, &op->results[0], r - 1, d);
}

static CJ_MUST_USE cj_status inf_broadcast_in_dim(rf *R, cj_op *op) {
  cj_value *x = op->nopnds ? op->operands[0] : NULL;
  const cj_type *rt = op->results[0].type;
  int64_t d[MAXR], a[MAXR], n = 0;
  if (!x || !ranked(x) || rt->kind != CJ_TYPE_TENSOR) return NULL;
  const cj_type *xt = x->type;
  if (!cj_op_get_i64s(op, "broadcast_dimensions", a, MAXR, &n) || n != xt->rank) return NULL;
  for (int32_t k = 0; k < rt->rank; k++) d[k] = CJ_DYN;
  for (int64_t i = 0; i < n; i++)
    if (a[i] >= 0 && a[i] < rt->rank && xt->dims[i] >= 0 && xt->dims[i] != 1) d[a[i]] = xt->dims[i];
  return refine_value(R, op, &op->results[0], rt->rank, d);
}

/* the result shape is the value of shape operand i */
static CJ_MUST_USE cj_status inf_shape_operand(rf *R, cj_op *op, uint32_t i) {
  int64_t d[MAXR], n = 0;
  if (!shape_operand(R, op->operands[i], d, MAXR, &n)) return NULL;
  return refine_value(R, op, &op->results[0], (int32_t)n, d);
}
static CJ_MUST_USE cj_status inf_shape_operand0(rf *R, cj_op *op) { return inf_shape_operand(R, op, 0); }
static CJ_MUST_USE cj_status inf_shape_operand1(rf *R, cj_op *op) { return inf_shape_operand(R, op, 1); }

static CJ_MUST_USE cj_status inf_reshape(rf *R, cj_op *op) {
  const cj_type *xt = op->nopnds ? op->operands[0]->type : NULL, *rt = op->results[0].type;
  if (!cj_type_is_static(xt) || rt->kind != CJ_TYPE_TENSOR) return NULL;
  int64_t known = 1, d[MAXR];
  int32_t r = 0;
  int unknown = -1, nunk = 0;
  for (int32_t k = 0; k < rt->rank; k++) {
    if (rt->dims[k] < 0) {
      unknown = k;
      nunk++;
    } else {
      known *= rt->dims[k];
    }
  }
  if (nunk != 1 || known == 0) return NULL;
  dims_of(rt, d, &r);
  d[unknown] = xt->num_elements / known;
  return refine_value(R, op, &op->results[0], r, d);
}

static CJ_MUST_USE cj_status inf_transpose(rf *R, cj_op *op) {
  cj_value *x = op->nopnds ? op->operands[0] : NULL;
  int64_t d[MAXR], a[MAXR], n = 0;
  if (!x || !ranked(x) || !cj_op_get_i64s(op, "permutation", a, MAXR, &n) || n != x->type->rank)
    return NULL;
  const cj_type *xt = x->type;
  for (int64_t i = 0; i < n; i++) d[i] = a[i] >= 0 && a[i] < xt->rank ? xt->dims[a[i]] : CJ_DYN;
  return refine_value(R, op, &op->results[0], (int32_t)n, d);
}

/* result 0 has operand i's shape */
static CJ_MUST_USE cj_status inf_like_operand0(rf *R, cj_op *op) {
  return op->nopnds && ranked(op->operands[0])
             ? refine_like(R, op, &op->results[0], op->operands[0]->type)
             : NULL;
}
static CJ_MUST_USE cj_status inf_like_operand1(rf *R, cj_op *op) {
  return op->nopnds > 1 && ranked(op->operands[1])
             ? refine_like(R, op, &op->results[0], op->operands[1]->type)
             : NULL;
}

/* result i has operand i's shape, for the first k results */
static CJ_MUST_USE cj_status inf_like_first(rf *R, cj_op *op, uint32_t k) {
  for (uint32_t i = 0; i < op->nresults && i < k; i++)
    CJ_RETURN_IF_ERROR(refine_like(R, op, &op->results[i], op->operands[i]->type));
  return NULL;
}
static CJ_MUST_USE cj_status inf_like_operands(rf *R, cj_op *op) { return inf_like_first(R, op, op->nopnds); }
static CJ_MUST_USE cj_status inf_scatter(rf *R, cj_op *op) { return inf_like_first(R, op, op->nresults); }

static CJ_MUST_USE cj_status inf_slice(rf *R, cj_op *op) {
  cj_value *x = op->nopnds ? op->operands[0] : NULL;
  int64_t d[MAXR], a[MAXR], b[MAXR], c[MAXR], n = 0, n2 = 0, n3 = 0;
  if (!x || !ranked(x) || !cj_op_get_i64s(op, "start_indices", a, MAXR, &n) ||
      !cj_op_get_i64s(op, "limit_indices", b, MAXR, &n2) ||
      !cj_op_get_i64s(op, "strides", c, MAXR, &n3) || n != x->type->rank || n2 != n || n3 != n)
    return NULL;
  for (int64_t i = 0; i < n; i++) d[i] = c[i] > 0 ? (b[i] - a[i] + c[i] - 1) / c[i] : CJ_DYN;
  return refine_value(R, op, &op->results[0], (int32_t)n, d);
}

static CJ_MUST_USE cj_status inf_real_dynamic_slice(rf *R, cj_op *op) {
  cj_value *x = op->nopnds ? op->operands[0] : NULL;
  int64_t d[MAXR], a[MAXR], b[MAXR], c[MAXR], n = 0, n2 = 0, n3 = 0;
  if (!x || !ranked(x)) return NULL;
  const cj_type *xt = x->type;
  if (rds_sizes(R, op, a, &n) && n == xt->rank) return refine_value(R, op, &op->results[0], (int32_t)n, a);
  if (!shape_operand(R, op->operands[1], a, MAXR, &n) ||
      !shape_operand(R, op->operands[2], b, MAXR, &n2) ||
      !shape_operand(R, op->operands[3], c, MAXR, &n3) || n != xt->rank || n2 != n || n3 != n)
    return NULL;
  for (int64_t i = 0; i < n; i++) d[i] = c[i] > 0 ? (b[i] - a[i] + c[i] - 1) / c[i] : CJ_DYN;
  return refine_value(R, op, &op->results[0], (int32_t)n, d);
}

static CJ_MUST_USE cj_status inf_dynamic_slice(rf *R, cj_op *op) {
  cj_value *x = op->nopnds ? op->operands[0] : NULL;
  int64_t a[MAXR], n = 0;
  if (!x || !ranked(x) || !cj_op_get_i64s(op, "slice_sizes", a, MAXR, &n) || n != x->type->rank)
    return NULL;
  return refine_value(R, op, &op->results[0], (int32_t)n, a);
}

static CJ_MUST_USE cj_status inf_concatenate(rf *R, cj_op *op) {
  cj_value *x = op->nopnds ? op->operands[0] : NULL;
  int64_t dim, d[MAXR];
  int32_t r = 0;
  if (!x || !ranked(x) || !cj_op_get_i64(op, "dimension", &dim) || dim < 0 || dim >= x->type->rank)
    return NULL;
  dims_of(x->type, d, &r);
  d[dim] = 0;
  for (uint32_t i = 0; i < op->nopnds; i++) {
    const cj_type *t = op->operands[i]->type;
    if (!ranked(op->operands[i]) || t->rank != r) return NULL;
    for (int32_t k = 0; k < r; k++)
      if (k != dim && d[k] < 0) d[k] = t->dims[k];
    d[dim] = (d[dim] < 0 || t->dims[dim] < 0) ? CJ_DYN : d[dim] + t->dims[dim];
  }
  return refine_value(R, op, &op->results[0], r, d);
}

/* pad and dynamic_pad: low a, high b, interior c */
static CJ_MUST_USE cj_status pad_result(rf *R, cj_op *op, const int64_t *a, int64_t n, const int64_t *b,
                            int64_t n2, const int64_t *c, int64_t n3) {
  const cj_type *xt = op->operands[0]->type;
  int64_t d[MAXR];
  if (n != xt->rank || n2 != n || n3 != n) return NULL;
  for (int64_t i = 0; i < n; i++) {
    int64_t s = xt->dims[i];
    d[i] = s < 0 ? CJ_DYN : a[i] + b[i] + s + (s > 0 ? (s - 1) * c[i] : 0);
  }
  return refine_value(R, op, &op->results[0], (int32_t)n, d);
}

static CJ_MUST_USE cj_status inf_pad(rf *R, cj_op *op) {
  int64_t a[MAXR], b[MAXR], c[MAXR], n = 0, n2 = 0, n3 = 0;
  if (!op->nopnds || !ranked(op->operands[0])) return NULL;
  if (!cj_op_get_i64s(op, "edge_padding_low", a, MAXR, &n) ||
      !cj_op_get_i64s(op, "edge_padding_high", b, MAXR, &n2) ||
      !cj_op_get_i64s(op, "interior_padding", c, MAXR, &n3))
    return NULL;
  return pad_result(R, op, a, n, b, n2, c, n3);
}

static CJ_MUST_USE cj_status inf_dynamic_pad(rf *R, cj_op *op) {
  int64_t a[MAXR], b[MAXR], c[MAXR], n = 0, n2 = 0, n3 = 0;
  if (!op->nopnds || !ranked(op->operands[0])) return NULL;
  if (!shape_operand(R, op->operands[2], a, MAXR, &n) ||
      !shape_operand(R, op->operands[3], b, MAXR, &n2) ||
      !shape_operand(R, op->operands[4], c, MAXR, &n3))
    return NULL;
  return pad_result(R, op, a, n, b, n2, c, n3);
}

static CJ_MUST_USE cj_status inf_reduce(rf *R, cj_op *op) {
  int64_t a[MAXR], d[MAXR], n = 0;
  if (!cj_op_get_i64s(op, "dimensions", a, MAXR, &n)) return NULL;
  for (uint32_t i = 0; i < op->nresults && i < op->nopnds; i++) {
    const cj_type *t = op->operands[i]->type;
    if (!ranked(op->operands[i])) continue;
    int32_t r = 0;
    for (int32_t k = 0; k < t->rank; k++) {
      bool red = false;
      for (int64_t j = 0; j < n; j++) red |= a[j] == k;
      if (!red) d[r++] = t->dims[k];
    }
    CJ_RETURN_IF_ERROR(refine_value(R, op, &op->results[i], r, d));
  }
  return NULL;
}

static CJ_MUST_USE cj_status inf_convolution(rf *R, cj_op *op) { return infer_conv(R, op, NULL); }

static CJ_MUST_USE cj_status inf_dynamic_conv(rf *R, cj_op *op) {
  if (!ranked(op->operands[0])) return NULL;
  int32_t ns = op->operands[0]->type->rank - 2;
  int64_t p[2 * MAXR], n = 0;
  if (ns < 0 || !shape_operand(R, op->operands[2], p, 2 * MAXR, &n) || n != 2 * ns) return NULL;
  return infer_conv(R, op, p);
}

static CJ_MUST_USE cj_status inf_gather(rf *R, cj_op *op) { return infer_gather(R, op, NULL, 0); }

static CJ_MUST_USE cj_status inf_dynamic_gather(rf *R, cj_op *op) {
  int64_t a[MAXR], n = 0;
  if (!shape_operand(R, op->operands[2], a, MAXR, &n)) return NULL;
  return infer_gather(R, op, a, n);
}

static CJ_MUST_USE cj_status inf_top_k(rf *R, cj_op *op) {
  cj_value *x = op->nopnds ? op->operands[0] : NULL;
  int64_t k, d[MAXR];
  int32_t r = 0;
  if (!x || !ranked(x) || x->type->rank < 1 || !cj_op_get_i64(op, "k", &k)) return NULL;
  dims_of(x->type, d, &r);
  d[r - 1] = k;
  for (uint32_t i = 0; i < op->nresults; i++) CJ_RETURN_IF_ERROR(refine_value(R, op, &op->results[i], r, d));
  return NULL;
}

static CJ_MUST_USE cj_status inf_get_tuple_element(rf *R, cj_op *op) {
  const cj_type *xt = op->nopnds ? op->operands[0]->type : NULL;
  int64_t idx;
  if (!xt || xt->kind != CJ_TYPE_TUPLE || !cj_op_get_i64(op, "index", &idx) || idx < 0 ||
      idx >= xt->rank)
    return NULL;
  op->results[0].type = xt->members[idx];
  return NULL;
}

static CJ_MUST_USE cj_status inf_tuple(rf *R, cj_op *op) {
  const cj_type *mem[64];
  if (op->nopnds > 64) return NULL;
  for (uint32_t i = 0; i < op->nopnds; i++) mem[i] = op->operands[i]->type;
  const cj_type *t = cj_type_tuple(R->m, (int32_t)op->nopnds, mem);
  if (!t) return cj_oom();
  op->results[0].type = t;
  return NULL;
}

static CJ_MUST_USE cj_status inf_custom_call(rf *R, cj_op *op) {
  /* indices_of_shape_operands: result i has the shape operand idx[i] holds */
  const cj_attr *ia = cj_op_attr(op, "indices_of_shape_operands");
  int64_t idx[64], ni = 0, d[MAXR], n = 0;
  if (!ia || !cj_attr_get_i64s(ia, idx, 64, &ni) || ni != op->nresults) return NULL;
  for (int64_t i = 0; i < ni; i++) {
    if (idx[i] < 0 || idx[i] >= op->nopnds) return NULL;
    if (!shape_operand(R, op->operands[idx[i]], d, MAXR, &n)) continue;
    CJ_RETURN_IF_ERROR(refine_value(R, op, &op->results[i], (int32_t)n, d));
  }
  return NULL;
}

static const inf_fn infer_fns[CJ_OP_COUNT] = {
#define OPF(id, infer, canon, ev, ...) infer,
#include "ir/opfacts.def"
#undef OPF
};

/* Infers the result shapes of op from its operands (ops without regions of their own, or whose
 * regions were refined already). Ops without a shape rule keep their declared types. */
static CJ_MUST_USE cj_status infer(rf *R, cj_op *op) {
  inf_fn fn = infer_fns[op->kind];
  if (op->nresults == 0 || !fn) return NULL;
  return fn(R, op);
}

/* ======================================================================== static forms */

static bool all_static(const cj_op *op) {
  for (uint32_t i = 0; i < op->nresults; i++)
    if (op->results[i].type->kind == CJ_TYPE_TENSOR && !cj_type_is_static(op->results[i].type))
      return false;
  return true;
}

static CJ_MUST_USE cj_status set_i64s(rf *R, cj_op *op, const char *name, int64_t n, const int64_t *v) {
  const cj_attr *a = cj_attr_i64_array(R->m, n, v);
  if (!a) return cj_oom();
  return cj_op_set_attr(R->m, op, name, a);
}

static CJ_MUST_USE cj_status make_constant_i(rf *R, cj_op *op, const int64_t *vals, int64_t n) {
  const cj_type *t = op->results[0].type;
  int es = cj_dtype_bytes(t->dtype);
  unsigned char *buf = calloc((size_t)(n ? n : 1), (size_t)es);
  if (!buf) return cj_oom();
  for (int64_t i = 0; i < n; i++) cj_elem_set_i64(t->dtype, buf, (size_t)i, vals[i]);
  const cj_attr *d = cj_attr_dense(R->m, t, buf, (size_t)es * (size_t)n, false);
  free(buf);
  cj_op *c = d ? new_op_like(R, op, CJ_OP_CONSTANT, 0, NULL, 1, 0) : NULL;
  if (!c) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(R->m, c, "value", d));
  cj_value *v = &c->results[0];
  replace_op(R, op, &v);
  return NULL;
}

/* ---- the CANON column of opfacts.def: static forms ----
 * A can_* function either replaces op itself (setting *replaced) or builds its static op *out,
 * which canonicalize puts in op's place. */

typedef cj_status (*can_fn)(rf *R, cj_op *op, cj_op **out, bool *replaced);
#define can_none NULL

static CJ_MUST_USE cj_status can_get_dimension_size(rf *R, cj_op *op, cj_op **out, bool *replaced) {
  const int64_t *v;
  int64_t k;
  if (!eval(R, &op->results[0], 0, &v, &k) || k != 1) return NULL;
  int64_t val = v[0];
  *replaced = true;
  return make_constant_i(R, op, &val, 1);
}

static CJ_MUST_USE cj_status can_set_dimension_size(rf *R, cj_op *op, cj_op **out, bool *replaced) {
  int64_t a[2 * MAXR], n = 0;
  int64_t dim;
  const cj_type *xt = op->operands[0]->type;
  if (!cj_op_get_i64(op, "dimension", &dim) || !ranked(op->operands[0]) || dim < 0 || dim >= xt->rank)
    return NULL;
  if (!shape_operand(R, op->operands[1], a, 1, &n) || n != 1 || xt->dims[dim] < 0) return NULL;
  if (a[0] != xt->dims[dim])
    return cj_op_error(op, CJ_UNIMPLEMENTED,
                       "setting dimension %lld of size %lld to %lld (a padded dynamic "
                       "dimension) is not supported",
                       (long long)dim, (long long)xt->dims[dim], (long long)a[0]);
  if (op->results[0].type != xt) {
    CJ_RETURN_IF_ERROR(refine_like(R, op, &op->results[0], xt));
    if (op->results[0].type != xt) return NULL;
  }
  cj_value *v = op->operands[0];
  replace_op(R, op, &v);
  *replaced = true;
  return NULL;
}

static CJ_MUST_USE cj_status can_dynamic_broadcast_in_dim(rf *R, cj_op *op, cj_op **out, bool *replaced) {
  int64_t a[2 * MAXR], n = 0;
  cj_op *o = NULL;
  if (!all_static(op) || !cj_type_is_static(op->operands[0]->type)) return NULL;
  o = new_op_like(R, op, CJ_OP_BROADCAST_IN_DIM, 1, op->operands, 1, 0);
  if (!o) return cj_oom();
  if (!cj_op_get_i64s(op, "broadcast_dimensions", a, MAXR, &n))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "missing broadcast_dimensions");
  CJ_RETURN_IF_ERROR(set_i64s(R, o, "broadcast_dimensions", n, a));
  *out = o;
  return NULL;
}

static CJ_MUST_USE cj_status can_dynamic_reshape(rf *R, cj_op *op, cj_op **out, bool *replaced) {
  cj_op *o = NULL;
  if (!all_static(op) || !cj_type_is_static(op->operands[0]->type)) return NULL;
  o = new_op_like(R, op, CJ_OP_RESHAPE, 1, op->operands, 1, 0);
  if (!o) return cj_oom();
  *out = o;
  return NULL;
}

static CJ_MUST_USE cj_status can_dynamic_iota(rf *R, cj_op *op, cj_op **out, bool *replaced) {
  cj_op *o = NULL;
  int64_t dim;
  if (!all_static(op) || !cj_op_get_i64(op, "iota_dimension", &dim)) return NULL;
  o = new_op_like(R, op, CJ_OP_IOTA, 0, NULL, 1, 0);
  if (!o) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(R->m, o, "iota_dimension", cj_attr_int(R->m, dim, NULL)));
  *out = o;
  return NULL;
}

/* An op whose operands first .. first + 2 are static shapes (and whose operand 0 has a static
 * type) becomes op `kind` on its first nkeep operands, with those shapes as the i64 list
 * attributes names[0..3). */
static CJ_MUST_USE cj_status shapes_to_attrs(rf *R, cj_op *op, cj_op_kind kind, uint32_t nkeep,
                                             uint32_t first, const char *const names[3],
                                             cj_op **out) {
  int64_t v[3][MAXR], n[3] = {0, 0, 0};
  if (!all_static(op) || !cj_type_is_static(op->operands[0]->type)) return NULL;
  for (int i = 0; i < 3; i++)
    if (!shape_operand(R, op->operands[first + (uint32_t)i], v[i], MAXR, &n[i])) return NULL;
  cj_op *o = new_op_like(R, op, kind, nkeep, op->operands, 1, 0);
  if (!o) return cj_oom();
  for (int i = 0; i < 3; i++) CJ_RETURN_IF_ERROR(set_i64s(R, o, names[i], n[i], v[i]));
  *out = o;
  return NULL;
}

static CJ_MUST_USE cj_status can_dynamic_pad(rf *R, cj_op *op, cj_op **out, bool *replaced) {
  static const char *const names[3] = {"edge_padding_low", "edge_padding_high",
                                       "interior_padding"};
  return shapes_to_attrs(R, op, CJ_OP_PAD, 2, 2, names, out);
}

static CJ_MUST_USE cj_status can_real_dynamic_slice(rf *R, cj_op *op, cj_op **out, bool *replaced) {
  int64_t a[2 * MAXR], n = 0;
  cj_op *o = NULL;
  if (all_static(op) && cj_type_is_static(op->operands[0]->type) &&
      !shape_operand(R, op->operands[1], a, MAXR, &n) && rds_sizes(R, op, a, &n) &&
      n == op->operands[0]->type->rank) {
    /* start + constant sizes: a dynamic_slice at the (run-time) start */
    cj_value *opnds[1 + MAXR];
    opnds[0] = op->operands[0];
    cj_value *start = op->operands[1];
    const cj_type *et = start->type->elem;
    int64_t one1[1] = {1};
    const cj_type *t1 = cj_type_tensor(R->m, et, 1, one1, NULL, NULL);
    const cj_type *t0 = cj_type_tensor(R->m, et, 0, NULL, NULL, NULL);
    if (!t1 || !t0) return cj_oom();
    for (int64_t i = 0; i < n; i++) {
      cj_op *sl = cj_build_op(R->m, op, op, CJ_OP_SLICE, 1, &start, t1);
      if (!sl) return cj_oom();
      int64_t s0 = i, l0 = i + 1, one = 1;
      CJ_RETURN_IF_ERROR(set_i64s(R, sl, "start_indices", 1, &s0));
      CJ_RETURN_IF_ERROR(set_i64s(R, sl, "limit_indices", 1, &l0));
      CJ_RETURN_IF_ERROR(set_i64s(R, sl, "strides", 1, &one));
      cj_value *sv = &sl->results[0];
      cj_op *rs = cj_build_op(R->m, op, op, CJ_OP_RESHAPE, 1, &sv, t0);
      if (!rs) return cj_oom();
      opnds[1 + i] = &rs->results[0];
    }
    o = new_op_like(R, op, CJ_OP_DYNAMIC_SLICE, (uint32_t)(1 + n), opnds, 1, 0);
    if (!o) return cj_oom();
    CJ_RETURN_IF_ERROR(set_i64s(R, o, "slice_sizes", n, a));
    *out = o;
    return NULL;
  }
  static const char *const names[3] = {"start_indices", "limit_indices", "strides"};
  return shapes_to_attrs(R, op, CJ_OP_SLICE, 1, 1, names, out);
}

static CJ_MUST_USE cj_status can_dynamic_gather(rf *R, cj_op *op, cj_op **out, bool *replaced) {
  int64_t a[2 * MAXR], n = 0;
  cj_op *o = NULL;
  if (!all_static(op) || !shape_operand(R, op->operands[2], a, MAXR, &n)) return NULL;
  o = new_op_like(R, op, CJ_OP_GATHER, 2, op->operands, 1, 0);
  if (!o) return cj_oom();
  CJ_RETURN_IF_ERROR(copy_attrs(R, o, op, NULL));
  CJ_RETURN_IF_ERROR(set_i64s(R, o, "slice_sizes", n, a));
  *out = o;
  return NULL;
}

static CJ_MUST_USE cj_status can_dynamic_conv(rf *R, cj_op *op, cj_op **out, bool *replaced) {
  int64_t a[2 * MAXR], n = 0;
  cj_op *o = NULL;
  if (!all_static(op) || !ranked(op->operands[0])) return NULL;
  int32_t ns = op->operands[0]->type->rank - 2;
  if (ns < 0 || !shape_operand(R, op->operands[2], a, 2 * MAXR, &n) || n != 2 * ns) return NULL;
  o = new_op_like(R, op, CJ_OP_CONVOLUTION, 2, op->operands, 1, 0);
  if (!o) return cj_oom();
  CJ_RETURN_IF_ERROR(copy_attrs(R, o, op, NULL));
  int64_t pd[2] = {ns, 2};
  const cj_type *pt = cj_type_tensor_of(R->m, CJ_S64, 2, pd);
  const cj_attr *pa = pt ? cj_attr_dense(R->m, pt, a, sizeof(int64_t) * (size_t)n, false) : NULL;
  if (!pa) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(R->m, o, "padding", pa));
  *out = o;
  return NULL;
}

static CJ_MUST_USE cj_status can_custom_call(rf *R, cj_op *op, cj_op **out, bool *replaced) {
  int64_t a[2 * MAXR], n = 0;
  cj_op *o = NULL;
  if (is_target(op, "shape_assertion")) {
    const int64_t *v;
    int64_t k;
    if (op->nopnds >= 1 && eval(R, op->operands[0], 0, &v, &k) && k == 1 && v[0]) {
      cj_block_remove(op->block, op);
      *replaced = true;
    }
    return NULL;
  }
  if (is_target(op, "stablehlo.shape_refinement_operand_wrapper")) {
    if (op->nopnds < 1 || op->nresults != 1) return NULL;
    if (op->operands[0]->type != op->results[0].type) return NULL;
    cj_value *v = op->operands[0];
    replace_op(R, op, &v);
    *replaced = true;
    return NULL;
  }
  if (is_target(op, "stablehlo.dynamic_top_k")) {
    if (op->nopnds != 2 || op->nresults != 2) return NULL;
    if (!shape_operand(R, op->operands[1], a, 1, &n) || n != 1) return NULL;
    const cj_type *xt = op->operands[0]->type;
    if (!ranked(op->operands[0]) || xt->rank < 1) return NULL;
    int64_t d[MAXR];
    int32_t r;
    dims_of(xt, d, &r);
    d[r - 1] = a[0];
    CJ_RETURN_IF_ERROR(refine_value(R, op, &op->results[0], r, d));
    CJ_RETURN_IF_ERROR(refine_value(R, op, &op->results[1], r, d));
    o = new_op_like(R, op, CJ_OP_CHLO_TOP_K, 1, op->operands, 2, 0);
    if (!o) return cj_oom();
    CJ_RETURN_IF_ERROR(cj_op_set_attr(R->m, o, "k", cj_attr_int(R->m, a[0], NULL)));
    *out = o;
    return NULL;
  }
  if (is_target(op, "stablehlo.dynamic_rng_bit_generator")) {
    if (op->nopnds != 2 || op->nresults != 2) return NULL;
    if (!shape_operand(R, op->operands[1], a, MAXR, &n)) return NULL;
    CJ_RETURN_IF_ERROR(refine_like(R, op, &op->results[0], op->operands[0]->type));
    CJ_RETURN_IF_ERROR(refine_value(R, op, &op->results[1], (int32_t)n, a));
    const cj_attr *alg = cj_op_attr(op, "rng_algorithm");
    if (!alg) return cj_op_error(op, CJ_INVALID_ARGUMENT, "missing rng_algorithm");
    o = new_op_like(R, op, CJ_OP_RNG_BIT_GENERATOR, 1, op->operands, 2, 0);
    if (!o) return cj_oom();
    CJ_RETURN_IF_ERROR(cj_op_set_attr(R->m, o, "rng_algorithm", alg));
    *out = o;
    return NULL;
  }
  if (is_target(op, "stablehlo.dynamic_reduce_window")) {
    uint32_t nres = op->nresults;
    if (nres == 0 || op->nopnds != 2 * nres + 5) return NULL;
    int64_t wd[MAXR], ws[MAXR], bd[MAXR], wdl[MAXR], pad[2 * MAXR], k1, k2, k3, k4, k5;
    uint32_t base = 2 * nres;
    if (!shape_operand(R, op->operands[base], wd, MAXR, &k1) ||
        !shape_operand(R, op->operands[base + 1], ws, MAXR, &k2) ||
        !shape_operand(R, op->operands[base + 2], bd, MAXR, &k3) ||
        !shape_operand(R, op->operands[base + 3], wdl, MAXR, &k4) ||
        !shape_operand(R, op->operands[base + 4], pad, 2 * MAXR, &k5))
      return NULL;
    const cj_attr *cc = cj_op_attr(op, "called_computations");
    if (!cc || cc->kind != CJ_ATTR_ARRAY || cc->arr.n != 1 || cc->arr.items[0]->kind != CJ_ATTR_SYMREF)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "expects one called computation (the body)");
    cj_op *fn = cj_module_lookup_symbol(R->m, cc->arr.items[0]->sym.root);
    cj_block *fb = fn ? cj_func_body(fn) : NULL;
    if (!fb) return cj_op_error(op, CJ_INVALID_ARGUMENT, "the body function is missing");
    o = new_op_like(R, op, CJ_OP_REDUCE_WINDOW, base, op->operands, nres, 1);
    if (!o) return cj_oom();
    CJ_RETURN_IF_ERROR(set_i64s(R, o, "window_dimensions", k1, wd));
    CJ_RETURN_IF_ERROR(set_i64s(R, o, "window_strides", k2, ws));
    CJ_RETURN_IF_ERROR(set_i64s(R, o, "base_dilations", k3, bd));
    CJ_RETURN_IF_ERROR(set_i64s(R, o, "window_dilations", k4, wdl));
    int64_t pd[2] = {k5 / 2, 2};
    const cj_type *pt = cj_type_tensor_of(R->m, CJ_S64, 2, pd);
    const cj_attr *pa = pt ? cj_attr_dense(R->m, pt, pad, sizeof(int64_t) * (size_t)k5, false) : NULL;
    if (!pa) return cj_oom();
    CJ_RETURN_IF_ERROR(cj_op_set_attr(R->m, o, "padding", pa));
    /* the body: a copy of the function's block, its func.return turned into stablehlo.return */
    const cj_type *at[64];
    if (fb->nargs > 64) return cj_op_error(op, CJ_UNIMPLEMENTED, "too many body arguments");
    for (uint32_t i = 0; i < fb->nargs; i++) at[i] = fb->args[i].type;
    cj_block *nb = cj_region_add_block(R->m, &o->regions[0], fb->nargs, at);
    if (!nb) return cj_oom();
    cj_value *from[256], *to[256];
    uint32_t nm = 0;
    for (uint32_t i = 0; i < fb->nargs && nm < 256; i++) {
      from[nm] = &fb->args[i];
      to[nm++] = &nb->args[i];
    }
    for (cj_op *fo = fb->first; fo; fo = fo->next) {
      if (fo->kind == CJ_OP_FUNC_RETURN) {
        cj_op *ret = cj_op_create(R->m, CJ_OP_RETURN, NULL, fo->nopnds, 0, 0);
        if (!ret) return cj_oom();
        for (uint32_t i = 0; i < fo->nopnds; i++) {
          cj_value *v = fo->operands[i];
          for (uint32_t k = 0; k < nm; k++)
            if (from[k] == v) v = to[k];
          ret->operands[i] = v;
        }
        cj_block_append(nb, ret);
        break;
      }
      cj_op *cl = cj_op_clone(R->m, fo, nm, from, to);
      if (!cl) return cj_oom();
      cj_block_append(nb, cl);
      for (uint32_t i = 0; i < fo->nresults && nm < 256; i++) {
        from[nm] = &fo->results[i];
        to[nm++] = &cl->results[i];
      }
    }
    CJ_RETURN_IF_ERROR(infer_reduce_window(R, o));
    *out = o;
    return NULL;
  }
  return NULL;
}

static const can_fn canon_fns[CJ_OP_COUNT] = {
#define OPF(id, infer, canon, ...) canon,
#include "ir/opfacts.def"
#undef OPF
};

/* Replaces dynamic ops whose shape operands are known by their static forms. *replaced is set
 * when op was removed. */
static CJ_MUST_USE cj_status canonicalize(rf *R, cj_op *op, bool *replaced) {
  *replaced = false;
  can_fn fn = canon_fns[op->kind];
  cj_op *o = NULL;
  if (!fn) return NULL;
  CJ_RETURN_IF_ERROR(fn(R, op, &o, replaced));
  if (!o) return NULL;
  /* o replaces op; the static op's result types are the refined ones */
  for (uint32_t i = 0; i < op->nresults && i < o->nresults; i++) o->results[i].type = op->results[i].type;
  cj_value *vals[64];
  if (op->nresults > 64) return cj_op_error(op, CJ_UNIMPLEMENTED, "too many results");
  for (uint32_t i = 0; i < op->nresults; i++) vals[i] = &o->results[i];
  replace_op(R, op, vals);
  *replaced = true;
  return NULL;
}

/* ======================================================================== the walk */

static CJ_MUST_USE cj_status refine_block(rf *R, cj_block *b);

/* The terminator's operand types of a region's block. */
static cj_op *terminator(cj_region *r) {
  cj_block *b = r->first;
  return b ? b->last : NULL;
}

static CJ_MUST_USE cj_status refine_region_op(rf *R, cj_op *op) {
  if (op->kind == CJ_OP_WHILE) {
    for (uint32_t r = 0; r < op->nregions; r++) {
      cj_block *b = op->regions[r].first;
      if (!b) continue;
      for (uint32_t i = 0; i < b->nargs && i < op->nopnds; i++) {
        const cj_type *ot = op->operands[i]->type;
        if (b->args[i].type != ot) {
          if (ot->kind == CJ_TYPE_TENSOR && b->args[i].type->kind == CJ_TYPE_TENSOR &&
              ot->rank == b->args[i].type->rank)
            b->args[i].type = ot;
        }
      }
      CJ_RETURN_IF_ERROR(refine_block(R, b));
    }
    cj_op *ret = op->nregions > 1 ? terminator(&op->regions[1]) : NULL;
    for (uint32_t i = 0; i < op->nresults && i < op->nopnds; i++) {
      const cj_type *ot = op->operands[i]->type;
      if (ret && i < ret->nopnds) {
        const cj_type *bt = ret->operands[i]->type;
        if (cj_type_is_static(ot) && cj_type_is_static(bt) && ot != bt) {
          char s1[128], s2[128];
          type_str(ot, s1, sizeof s1);
          type_str(bt, s2, sizeof s2);
          return cj_op_error(op, CJ_UNIMPLEMENTED,
                             "loop-carried value %u enters as %s and leaves the body as %s (a "
                             "shape that changes across iterations)",
                             i, s1, s2);
        }
      }
      CJ_RETURN_IF_ERROR(refine_like(R, op, &op->results[i], ot));
    }
    return NULL;
  }
  for (uint32_t r = 0; r < op->nregions; r++)
    for (cj_block *b = op->regions[r].first; b; b = b->next) CJ_RETURN_IF_ERROR(refine_block(R, b));
  if (op->kind == CJ_OP_IF || op->kind == CJ_OP_CASE) {
    for (uint32_t i = 0; i < op->nresults; i++) {
      const cj_type *common = NULL;
      bool agree = true;
      for (uint32_t r = 0; r < op->nregions; r++) {
        cj_op *ret = terminator(&op->regions[r]);
        if (!ret || i >= ret->nopnds) {
          agree = false;
          continue;
        }
        const cj_type *t = ret->operands[i]->type;
        if (!common) common = t;
        else if (common != t) agree = false;
      }
      if (agree && common) CJ_RETURN_IF_ERROR(refine_like(R, op, &op->results[i], common));
    }
  }
  return NULL;
}

static CJ_MUST_USE cj_status refine_block(rf *R, cj_block *b) {
  for (cj_op *op = b->first; op;) {
    cj_op *next = op->next;
    if (op->nregions) CJ_RETURN_IF_ERROR(refine_region_op(R, op));
    CJ_RETURN_IF_ERROR(infer(R, op));
    /* small integer values are evaluated in program order, so that evaluating a shape operand
     * later never recurses deeply */
    if (op->nresults == 1 && cj_type_is_static(op->results[0].type) &&
        int_like(op->results[0].type->dtype) && op->results[0].type->num_elements <= MAX_EVAL) {
      const int64_t *d;
      int64_t k;
      (void)eval(R, &op->results[0], 0, &d, &k);
    }
    bool replaced = false;
    CJ_RETURN_IF_ERROR(canonicalize(R, op, &replaced));
    op = next;
  }
  return NULL;
}

static bool needs_refine(cj_block *b) {
  for (uint32_t i = 0; i < b->nargs; i++)
    if (b->args[i].type->kind == CJ_TYPE_TENSOR && !cj_type_is_static(b->args[i].type)) return true;
  for (cj_op *op = b->first; op; op = op->next) {
    can_fn fn = canon_fns[op->kind];
    if (fn == can_custom_call) {
      if (is_target(op, "shape_assertion") || cj_op_attr(op, "indices_of_shape_operands") ||
          is_target(op, "stablehlo.dynamic_top_k") ||
          is_target(op, "stablehlo.dynamic_rng_bit_generator") ||
          is_target(op, "stablehlo.dynamic_reduce_window"))
        return true;
    } else if (fn) {
      return true; /* a dynamic op with a static form */
    }
    for (uint32_t i = 0; i < op->nresults; i++) {
      const cj_type *t = op->results[i].type;
      if (t && (t->kind == CJ_TYPE_UNRANKED || (t->kind == CJ_TYPE_TENSOR && !cj_type_is_static(t))))
        return true;
    }
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next)
        if (needs_refine(nb)) return true;
  }
  return false;
}

static bool is_dynamic(const cj_type *t) {
  return t->kind == CJ_TYPE_UNRANKED || (t->kind == CJ_TYPE_TENSOR && !cj_type_is_static(t));
}

/* Whether block b has an argument of a dynamic type: the first one's index and type text. */
static bool dynamic_arg(const cj_block *b, uint32_t *i, char *s, size_t cap) {
  for (*i = 0; *i < b->nargs; (*i)++)
    if (is_dynamic(b->args[*i].type)) {
      type_str(b->args[*i].type, s, cap);
      return true;
    }
  return false;
}

/* the first op (or block argument) still of a dynamic type */
static CJ_MUST_USE cj_status check_static(cj_block *b) {
  for (cj_op *op = b->first; op; op = op->next) {
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next) {
        uint32_t i;
        char s[128];
        if (dynamic_arg(nb, &i, s, sizeof s))
          return cj_op_error(op, CJ_UNIMPLEMENTED,
                             "region argument %u keeps the dynamic type %s: its shape depends on "
                             "values known only at run time",
                             i, s);
        CJ_RETURN_IF_ERROR(check_static(nb));
      }
    for (uint32_t i = 0; i < op->nresults; i++) {
      const cj_type *t = op->results[i].type;
      if (t && is_dynamic(t)) {
        char s[128];
        type_str(t, s, sizeof s);
        return cj_op_error(op, CJ_UNIMPLEMENTED,
                           "result %u keeps the dynamic type %s: its shape depends on values "
                           "known only at run time (only programs whose shapes are static once "
                           "the argument shapes are known can be compiled)",
                           i, s);
      }
    }
  }
  return NULL;
}

cj_status cj_pass_refine(cj_module *m, cj_op *func, const cj_refine_args *args) {
  cj_block *body = cj_func_body(func);
  if (!body) return NULL;
  const cj_type *ft = cj_func_type(func);
  rf R = {m, func, NULL, 0, 0};
  bool sig_changed = false;
  /* the arguments */
  if (args) {
    if (args->nargs != (int32_t)body->nargs)
      return cj_op_error(func, CJ_INVALID_ARGUMENT, "%d argument types given for %u arguments",
                         args->nargs, body->nargs);
    for (int32_t i = 0; i < args->nargs; i++) {
      const cj_type *nt = args->types ? args->types[i] : NULL;
      cj_value *a = &body->args[i];
      if (nt && nt != a->type) {
        const cj_type *ot = a->type;
        bool ok = nt->kind == CJ_TYPE_TENSOR &&
                  (ot->kind == CJ_TYPE_UNRANKED || (ot->kind == CJ_TYPE_TENSOR && ot->rank == nt->rank)) &&
                  ot->dtype == nt->dtype;
        for (int32_t k = 0; ok && ot->kind == CJ_TYPE_TENSOR && k < ot->rank; k++)
          if (ot->dims[k] >= 0 && ot->dims[k] != nt->dims[k]) ok = false;
        if (!ok) {
          char s1[128], s2[128];
          type_str(ot, s1, sizeof s1);
          type_str(nt, s2, sizeof s2);
          return cj_op_error(func, CJ_INVALID_ARGUMENT, "argument %d of type %s cannot be refined to %s",
                             i, s1, s2);
        }
        a->type = nt;
        sig_changed = true;
      }
      const cj_attr *val = args->values ? args->values[i] : NULL;
      if (val) {
        if (val->kind != CJ_ATTR_DENSE || !cj_type_is_static(a->type))
          return cj_op_error(func, CJ_INVALID_ARGUMENT, "argument %d: the known value must be a dense constant of a static type", i);
        cj_op *c = cj_op_create(m, CJ_OP_CONSTANT, NULL, 0, 1, 0);
        if (!c) return cj_oom();
        c->results[0].type = a->type;
        c->pos = func->pos;
        const cj_attr *d = cj_attr_dense(m, a->type, val->dense.data, val->dense.nbytes, val->dense.splat);
        if (!d) return cj_oom();
        CJ_RETURN_IF_ERROR(cj_op_set_attr(m, c, "value", d));
        cj_block_insert_before(body, body->first, c);
        cj_replace_all_uses(func, a, &c->results[0]);
      }
    }
  }
  /* the entry function's arguments must be static now */
  uint32_t darg;
  char dtype_s[128];
  if (dynamic_arg(body, &darg, dtype_s, sizeof dtype_s))
    return cj_op_error(func, CJ_UNIMPLEMENTED,
                       "argument %u of the entry function has the dynamic type %s: a "
                       "shape-polymorphic program must be given static argument shapes before "
                       "it is compiled (jax.export refines them when the exported function is "
                       "called on concrete arrays)",
                       darg, dtype_s);
  if (!sig_changed && !needs_refine(body)) return NULL;
  cj_status st = refine_block(&R, body);
  memo_free(&R);
  if (st) return st;
  CJ_RETURN_IF_ERROR(check_static(body));
  /* the signature: argument types, and results from what the function returns */
  cj_op *ret = body->last;
  if (ft && ret && ret->kind == CJ_OP_FUNC_RETURN && ret->nopnds == (uint32_t)ft->nresults) {
    int32_t n = ft->rank + ft->nresults;
    const cj_type **mem = malloc(sizeof(cj_type *) * (size_t)(n ? n : 1));
    if (!mem) return cj_oom();
    bool changed = false;
    for (int32_t i = 0; i < ft->rank; i++) {
      mem[i] = i < (int32_t)body->nargs ? body->args[i].type : ft->members[i];
      if (mem[i] != ft->members[i]) changed = true;
    }
    for (int32_t i = 0; i < ft->nresults; i++) {
      mem[ft->rank + i] = ret->operands[i]->type;
      if (mem[ft->rank + i] != ft->members[ft->rank + i]) changed = true;
    }
    const cj_type *nt = changed ? cj_type_function(m, ft->rank, mem, ft->nresults, mem + ft->rank) : ft;
    free(mem);
    if (!nt) return cj_oom();
    if (changed) CJ_RETURN_IF_ERROR(cj_op_set_attr(m, func, "function_type", cj_attr_type(m, nt)));
  }
  return NULL;
}
