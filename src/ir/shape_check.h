/* cjrt: checks shared by the op verifiers (src/ir/verify*.c). Private to the verifier.
 *
 * Each check returns NULL when it holds, else a status made by cj_op_error(op, ...) that names
 * the op, its position and what was wrong. `what` names the checked thing the way the spec does
 * ("operand", "lhs", "result #1", "init_values[0]").
 *
 * Nothing here allocates except to build an error. Attribute lists are read into caller stack
 * arrays of CJV_MAX_DIMS entries; longer lists are reported as errors.
 */
#ifndef CJ_IR_SHAPE_CHECK_H
#define CJ_IR_SHAPE_CHECK_H

#include <string.h>

#include "ir/ir.h"
#include "ir/shape_util.h"

#define CJV_MAX_DIMS 128 /* the most dimensions/list entries a verifier reads onto the stack */

#define CJV_FAIL(op, ...) return cj_op_error((op), CJ_INVALID_ARGUMENT, __VA_ARGS__)
#define CJV_TRY(expr) CJ_RETURN_IF_ERROR(expr)

static inline const cj_type *cjv_operand_type(const cj_op *op, uint32_t i) {
  return i < op->nopnds && op->operands[i] ? op->operands[i]->type : NULL;
}
static inline const cj_type *cjv_result_type(const cj_op *op, uint32_t i) {
  return i < op->nresults ? op->results[i].type : NULL;
}

/* cj_op_attr and its readers, with a first-character filter before strcmp (attribute lookup is
 * most of the verifier's time otherwise). */
static inline const cj_attr *cjv_attr(const cj_op *op, const char *name) {
  for (uint32_t i = 0; i < op->nattrs; i++) {
    const char *n = op->attrs[i].name;
    if (n == name || (n[0] == name[0] && strcmp(n, name) == 0)) return op->attrs[i].value;
  }
  return NULL;
}
static inline bool cjv_get_i64(const cj_op *op, const char *name, int64_t *out) {
  return cj_attr_get_i64(cjv_attr(op, name), out);
}
static inline bool cjv_get_bool(const cj_op *op, const char *name, bool *out) {
  return cj_attr_get_bool(cjv_attr(op, name), out);
}
static inline bool cjv_get_enum(const cj_op *op, const char *name, cj_enum_kind ek, int32_t *out) {
  return cj_attr_get_enum(cjv_attr(op, name), ek, out);
}

/* cj_func_type / cj_func_name through cjv_attr */
static inline const cj_type *cjv_func_type(const cj_op *f) {
  const cj_attr *a = cjv_attr(f, "function_type");
  return a && a->kind == CJ_ATTR_TYPE && a->type && a->type->kind == CJ_TYPE_FUNCTION ? a->type
                                                                                       : NULL;
}
static inline const char *cjv_func_name(const cj_op *f) {
  const cj_attr *a = cjv_attr(f, "sym_name");
  return a && a->kind == CJ_ATTR_STRING ? a->str.s : NULL;
}

/* Type text for messages, into a caller buffer. */
typedef struct cjv_tbuf {
  char s[200];
} cjv_tbuf;
#define CJV_T(t, tb) cj_shape_type_str((t), (tb).s, sizeof (tb).s)

/* ---- types ---- */

/* t must be a ranked tensor whose element type is in `mask` (CJ_EC_*). */
CJ_MUST_USE cj_status cj_verify_check_tensor(const cj_op *op, const char *what, const cj_type *t, unsigned mask);
/* cj_verify_check_tensor for each (const char *what, const cj_type *t) pair that follows, all
 * with one mask; the pairs end with a NULL `what`. */
CJ_MUST_USE cj_status cj_verify_check_tensors(const cj_op *op, unsigned mask, ...)
    __attribute__((sentinel));
/* t must be the scalar tensor<dt>; `must` starts the message ("pred must be"). */
CJ_MUST_USE cj_status cj_verify_check_scalar(const cj_op *op, const char *must, const cj_type *t,
                                             cj_dtype dt);
/* ... and of rank `rank`. */
CJ_MUST_USE cj_status cj_verify_check_tensor_rank(const cj_op *op, const char *what, const cj_type *t,
                                unsigned mask, int32_t rank);
/* t must be !stablehlo.token. */
CJ_MUST_USE cj_status cj_verify_check_token(const cj_op *op, const char *what, const cj_type *t);
/* Compatible shapes (dynamic dimensions match anything). */
CJ_MUST_USE cj_status cj_verify_check_same_shape(const cj_op *op, const char *wa, const cj_type *a, const char *wb,
                               const cj_type *b);
/* Compatible shapes and equal element types. */
CJ_MUST_USE cj_status cj_verify_check_same_type(const cj_op *op, const char *wa, const cj_type *a, const char *wb,
                              const cj_type *b);
/* Compatible shapes and baseline-equal element types (quantization parameters may differ). */
CJ_MUST_USE cj_status cj_verify_check_same_baseline(const cj_op *op, const char *wa, const cj_type *a,
                                  const char *wb, const cj_type *b);
/* Equal element types. */
CJ_MUST_USE cj_status cj_verify_check_same_elem(const cj_op *op, const char *wa, const cj_type *a, const char *wb,
                              const cj_type *b);
/* Baseline-equal element types. */
CJ_MUST_USE cj_status cj_verify_check_same_baseline_elem(const cj_op *op, const char *wa, const cj_type *a,
                                       const char *wb, const cj_type *b);
/* Exactly equal types (pointer equality), for tokens/tuples/function boundaries. */
CJ_MUST_USE cj_status cj_verify_check_exact_type(const cj_op *op, const char *wa, const cj_type *a, const char *wb,
                               const cj_type *b);
/* Shape of t compatible with the dims in `expect` (CJ_DYN = anything). */
CJ_MUST_USE cj_status cj_verify_check_shape_is(const cj_op *op, const char *what, const cj_type *t,
                             const int64_t *expect, int32_t rank);

/* ---- attributes ---- */

/* Reads an integer-list attribute into buf (cap CJV_MAX_DIMS). A missing attribute gives *n = 0
 * and *present = false (present may be NULL). */
CJ_MUST_USE cj_status cj_verify_get_i64s(const cj_op *op, const char *name, int64_t *buf, int64_t *n,
                       bool *present);
/* Reads an integer-list struct field (missing: *n = 0). */
CJ_MUST_USE cj_status cj_verify_get_field_i64s(const cj_op *op, const cj_attr *st, cj_struct_kind sk, int field,
                             const char *fname, int64_t *buf, int64_t *n);
/* An integer struct field, `dflt` if absent. */
int64_t cj_verify_field_i64(const cj_attr *st, cj_struct_kind sk, int field, int64_t dflt);

/* Every entry of v in [0, limit): else "<what> <entry> is out of range [0, limit)". */
CJ_MUST_USE cj_status cj_verify_check_dims_in_range(const cj_op *op, const char *what, const int64_t *v, int64_t n,
                                  int64_t limit);
/* No entry repeats: else "<what> has duplicate dimension d". */
CJ_MUST_USE cj_status cj_verify_check_unique(const cj_op *op, const char *what, const int64_t *v, int64_t n);
/* No entry of a repeats in b (and vice versa). */
CJ_MUST_USE cj_status cj_verify_check_disjoint(const cj_op *op, const char *wa, const int64_t *a, int64_t na,
                             const char *wb, const int64_t *b, int64_t nb);
/* Dimension ad[i] of a and dimension bd[i] of b have compatible sizes (i < n): else "<an>
 * dimension .. has size .. but <bn> dimension .. has size ..". */
CJ_MUST_USE cj_status cj_verify_check_paired_dims(const cj_op *op, const char *an, const cj_type *a,
                                            const int64_t *ad, const char *bn, const cj_type *b,
                                            const int64_t *bd, int64_t n);
/* Each of a and b has no duplicate, and they are disjoint (cj_verify_check_unique twice, then
 * cj_verify_check_disjoint). */
CJ_MUST_USE cj_status cj_verify_check_unique_disjoint(const cj_op *op, const char *wa, const int64_t *a,
                                                int64_t na, const char *wb, const int64_t *b,
                                                int64_t nb);
/* dot_general's dimension numbers for operands l and r: as many batching and contracting
 * dimensions on both sides, each list unique and in range, batching and contracting disjoint,
 * paired dimensions of compatible sizes (dot_general, chlo.ragged_dot). */
CJ_MUST_USE cj_status cj_verify_check_dot_dims(const cj_op *op, const cj_type *l, const cj_type *r,
                             const int64_t *lb, int64_t nlb, const int64_t *rb, int64_t nrb,
                             const int64_t *lc, int64_t nlc, const int64_t *rc, int64_t nrc);
/* Strictly increasing. */
CJ_MUST_USE cj_status cj_verify_check_sorted(const cj_op *op, const char *what, const int64_t *v, int64_t n);
static inline bool cjv_contains(const int64_t *v, int64_t n, int64_t x) {
  for (int64_t i = 0; i < n; i++)
    if (v[i] == x) return true;
  return false;
}

/* A 1-D integer-list attribute spelled as "[1, 2]" into buf for messages. */
#define CJV_DIMS(v, n, tb) cj_shape_dims_str((v), (n), (tb).s, sizeof (tb).s)

/* A dense attribute whose stored bytes cover its type (a splat holds one element), so that its
 * elements can be read; integer element type when `integer`. */
bool cj_verify_dense_readable(const cj_attr *a, bool integer);

/* The dense value of operand i if a stablehlo.constant defines it (else NULL): ops whose shape
 * comes from an operand check it against their result type when it is known. */
const cj_attr *cj_verify_constant_operand(const cj_op *op, uint32_t i);
/* Reads up to CJV_MAX_DIMS integers of a constant operand; false if not a constant of an integer
 * type with a static shape. */
bool cj_verify_constant_operand_i64s(const cj_op *op, uint32_t i, int64_t *buf, int64_t *n);

/* A shape operand (dynamic_iota, dynamic_reshape, dynamic_broadcast_in_dim): a 1-D integer
 * tensor with one entry per dimension of `result`; when a constant defines it, its values must
 * fit the result type. */
CJ_MUST_USE cj_status cj_verify_check_shape_operand(const cj_op *op, uint32_t i, const char *what,
                                  const cj_type *result);

/* Results of broadcast_in_dim and reshape: static, or with exactly one dynamic dimension, which
 * has a bound (their dynamic forms are dynamic_broadcast_in_dim and dynamic_reshape). */
CJ_MUST_USE cj_status cj_verify_check_static_or_single_bounded(const cj_op *op, const char *what, const cj_type *t);

/* The `padding` attribute of windowed ops: an integer tensor of shape [rank, 2] (absent or empty
 * = zeros), read into lo[rank] and hi[rank]. */
CJ_MUST_USE cj_status cj_verify_read_padding(const cj_op *op, int32_t rank, int64_t *lo, int64_t *hi);

/* ---- regions ---- */

/* The single block of region r of op (NULL if absent) and its terminator's operands. */
static inline const cj_block *cjv_region_block(const cj_op *op, uint32_t r) {
  return r < op->nregions ? op->regions[r].first : NULL;
}
/* Checks region r has one block ending in a return op and gives it back. */
CJ_MUST_USE cj_status cj_verify_region_return(const cj_op *op, uint32_t r, const char *rname, const cj_block **out_b,
                            const cj_op **out_ret);
/* A region's block must take `n` arguments. */
CJ_MUST_USE cj_status cj_verify_check_region_nargs(const cj_op *op, const char *rname, const cj_block *b,
                                 uint32_t n);
/* Reducer bodies (reduce, reduce_window, scatter, select_and_scatter's scatter, all_reduce,
 * reduce_scatter, collective_reduce): region `r` takes 2N tensors (accumulators, then elements)
 * and returns N tensors with element types Ei; the element types of inputs[i] and promote[i] (may
 * be NULL) promote to Ei. Accumulators are 0-D, except where `allowed` is given (reduce,
 * reduce_window, as StableHLO allows): then their dimensions must be a subsequence compatible
 * with allowed[0..nallowed). If `inits` is given, inits[i] must have the accumulator's shape.
 * Fills out_elems[i] = Ei (may be NULL). */
CJ_MUST_USE cj_status cj_verify_check_reducer(const cj_op *op, uint32_t r, const char *rname, uint32_t n,
                            const cj_type *const *inputs, const cj_type *const *promote,
                            const cj_type *const *inits, const int64_t *allowed,
                            int64_t nallowed, const cj_type **out_elems);

/* ---- symbols ---- */

/* The top-level op named `name` in the module that holds `from`, NULL if none. *in_module tells
 * whether `from` is inside a module at all (a detached op cannot resolve symbols; callers then
 * skip the check). */
const cj_op *cj_verify_lookup_symbol(const cj_op *from, const char *name, bool *in_module);

/* ---- verifiers of ops whose ops.def row names cj_verify_none (dispatched by kind in verify.c) ---- */
CJ_MUST_USE cj_status cj_verify_async_start(const cj_op *op);
CJ_MUST_USE cj_status cj_verify_async_done(const cj_op *op);
CJ_MUST_USE cj_status cj_verify_interp_run_parallel(const cj_op *op);

#endif
