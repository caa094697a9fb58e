/* cjrt: the verifier's core: structural checks of every op against the op table, SSA dominance,
 * region terminators and value types; then each op's spec verifier (ops.def VERIFY column).
 *
 * Deviations from the spec's text, where StableHLO's own verifier (and so the conformance corpus,
 * which must verify) is more permissive, are commented where they are made: compare_type (C3),
 * dot_general's mixed element types (C13), convolution's result element type (C27),
 * rng_bit_generator's state sizes, custom_call's unresolved called_computations, reducer bodies
 * with non-scalar accumulators (reduce/reduce_window), dynamic_conv's window attributes without a
 * constant padding. The module body and the regions of ops we only carry are graph regions.
 *
 * The spec verifiers live beside this file, one file per op family:
 *   verify_misc.c         func/call/return, tuples, tokens, composite, custom_call, check, sdy,
 *                         async_start/done and interpreter.run_parallel (dispatched by kind here,
 *                         as their ops.def rows name cj_verify_none)
 *   verify_elementwise.c  unary/binary elementwise ops, compare, select, clamp, convert, constants
 *   verify_shape.c        broadcast, reshape, transpose, slices, pad, concatenate, gather, scatter
 *   verify_region.c       if, case, while, map, reduce, reduce_window, select_and_scatter, sort
 *   verify_linalg.c       dot, convolution, cholesky, triangular_solve, fft, batch_norm, rng
 *   verify_collective.c   all_gather, all_reduce, ..., send/recv, infeed/outfeed
 *   verify_chlo.c         chlo ops
 *   verify_common.c       the checks they share (shape_check.h)
 *
 * Walking a module keeps the values in scope in a hash table that starts on the stack and moves
 * to the heap only for large modules; nothing is allocated per op. Verifying the conformance
 * corpus takes ~40 ns per op with the module in cache.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "ir/shape_check.h"
#include "ir/verify_fns.h"

#define MAX_REGION_DEPTH 256

/* ======================================================================== attribute kinds */

static const char *attr_kind_noun(const cj_attr *a, char *buf, size_t cap) {
  cjv_tbuf tb;
  switch (a->kind) {
    case CJ_ATTR_UNIT: return "a unit attribute";
    case CJ_ATTR_BOOL: return "a bool";
    case CJ_ATTR_INT:
      snprintf(buf, cap, "an integer of type %s",
               a->i.type ? CJV_T(a->i.type, tb) : "i64 (untyped)");
      return buf;
    case CJ_ATTR_FLOAT:
      snprintf(buf, cap, "a float of type %s", a->f.type ? CJV_T(a->f.type, tb) : "f64 (untyped)");
      return buf;
    case CJ_ATTR_STRING: return "a string";
    case CJ_ATTR_TYPE: return "a type";
    case CJ_ATTR_SYMREF: return "a symbol reference";
    case CJ_ATTR_ARRAY: return "an array";
    case CJ_ATTR_DICT: return "a dictionary";
    case CJ_ATTR_DENSE_ARRAY: {
      const char *m = cj_dtype_get(a->darr.dtype)->mlir;
      snprintf(buf, cap, "array<%s: ...>", m ? m : "?");
      return buf;
    }
    case CJ_ATTR_DENSE:
      snprintf(buf, cap, "dense<...> : %s", CJV_T(a->dense.type, tb));
      return buf;
    case CJ_ATTR_ENUM:
      snprintf(buf, cap, "a #%s<%s> enum", cj_enum_dialect(a->en.ek) ? cj_enum_dialect(a->en.ek) : "?",
               cj_enum_keyword(a->en.ek) ? cj_enum_keyword(a->en.ek) : "?");
      return buf;
    case CJ_ATTR_STRUCT:
      snprintf(buf, cap, "a #%s.%s attribute",
               cj_struct_dialect(a->st.sk) ? cj_struct_dialect(a->st.sk) : "?",
               cj_struct_mnemonic(a->st.sk) ? cj_struct_mnemonic(a->st.sk) : "?");
      return buf;
    case CJ_ATTR_LOC: return "a location";
    case CJ_ATTR_OPAQUE: return "an attribute of another dialect";
  }
  return "an unknown attribute";
}

static const char *spec_kind_noun(const cj_attr_spec *s, char *buf, size_t cap) {
  switch (s->kind) {
    case CJ_AK_ANY: return "anything";
    case CJ_AK_BOOL: return "a bool";
    case CJ_AK_UNIT: return "a unit attribute";
    case CJ_AK_I64: return "an integer of type i64";
    case CJ_AK_I32: return "an integer of type i32";
    case CJ_AK_F32: return "a float of type f32";
    case CJ_AK_STR: return "a string";
    case CJ_AK_SYM: return "a symbol reference";
    case CJ_AK_SYMARR: return "an array of symbol references";
    case CJ_AK_I64ARR: return "array<i64: ...>";
    case CJ_AK_BOOLARR: return "array<i1: ...>";
    case CJ_AK_I64DENSE: return "a dense i64 tensor";
    case CJ_AK_ELEMENTS: return "dense elements";
    case CJ_AK_TYPE: return "a type";
    case CJ_AK_DICT: return "a dictionary";
    case CJ_AK_ARRAY: return "an array";
    case CJ_AK_STR_OR_DICT: return "a string or a dictionary";
    case CJ_AK_ENUM:
    case CJ_AK_ENUMARR:
    case CJ_AK_STRUCT:
    case CJ_AK_STRUCTARR: {
      bool is_enum = s->kind == CJ_AK_ENUM || s->kind == CJ_AK_ENUMARR;
      bool one = s->kind == CJ_AK_ENUM || s->kind == CJ_AK_STRUCT;
      const char *d = is_enum ? cj_enum_dialect((cj_enum_kind)s->sub)
                              : cj_struct_dialect((cj_struct_kind)s->sub);
      const char *n = is_enum ? cj_enum_keyword((cj_enum_kind)s->sub)
                              : cj_struct_mnemonic((cj_struct_kind)s->sub);
      if (is_enum)
        snprintf(buf, cap, "%s#%s<%s> enum%s", one ? "a " : "an array of ", d ? d : "?",
                 n ? n : "?", one ? "" : "s");
      else
        snprintf(buf, cap, "%s#%s.%s attribute%s", one ? "a " : "an array of ", d ? d : "?",
                 n ? n : "?", one ? "" : "s");
      return buf;
    }
  }
  return "?";
}

static bool int_attr_of(const cj_attr *a, cj_dtype dt) {
  if (a->kind != CJ_ATTR_INT) return false;
  if (!a->i.type) return dt == CJ_S64; /* untyped integers are i64 */
  return a->i.type->kind == CJ_TYPE_ELEM && a->i.type->dtype == dt;
}

static bool struct_fields_ok(const cj_attr *a, int *bad_field) {
  int n = cj_struct_num_fields(a->st.sk);
  for (int f = 0; f < n; f++) {
    const cj_attr *v = a->st.fields ? a->st.fields[f] : NULL;
    if (!v) continue;
    bool ok = false;
    switch (cj_struct_field_kind(a->st.sk, f)) {
      case CJ_FK_I64: ok = v->kind == CJ_ATTR_INT; break;
      case CJ_FK_I64ARR:
        ok = v->kind == CJ_ATTR_DENSE_ARRAY && cj_dtype_is_int(v->darr.dtype);
        break;
      case CJ_FK_BOOL: ok = v->kind == CJ_ATTR_BOOL; break;
      case CJ_FK_F64: ok = v->kind == CJ_ATTR_FLOAT || v->kind == CJ_ATTR_INT; break;
      case CJ_FK_TYPE: ok = v->kind == CJ_ATTR_TYPE; break;
      case CJ_FK_ENUM_RESULT_ACCURACY_MODE:
        ok = v->kind == CJ_ATTR_ENUM && v->en.ek == CJ_EK_RESULT_ACCURACY_MODE;
        break;
    }
    if (!ok) {
      *bad_field = f;
      return false;
    }
  }
  return true;
}

/* a is an enum attribute of enum kind `sub` (is_enum), or a struct attribute of struct kind `sub` */
static bool enum_or_struct_of(const cj_attr *a, bool is_enum, int sub) {
  if (!a) return false;
  return is_enum ? a->kind == CJ_ATTR_ENUM && (int)a->en.ek == sub
                 : a->kind == CJ_ATTR_STRUCT && (int)a->st.sk == sub;
}

static bool attr_matches(const cj_attr *a, const cj_attr_spec *s) {
  switch (s->kind) {
    case CJ_AK_ANY: return true;
    case CJ_AK_BOOL: return a->kind == CJ_ATTR_BOOL;
    case CJ_AK_UNIT: return a->kind == CJ_ATTR_UNIT;
    case CJ_AK_I64: return int_attr_of(a, CJ_S64);
    case CJ_AK_I32: return int_attr_of(a, CJ_S32);
    case CJ_AK_F32:
      return a->kind == CJ_ATTR_FLOAT && a->f.type && a->f.type->kind == CJ_TYPE_ELEM &&
             a->f.type->dtype == CJ_F32;
    case CJ_AK_STR: return a->kind == CJ_ATTR_STRING;
    case CJ_AK_SYM: return a->kind == CJ_ATTR_SYMREF;
    case CJ_AK_SYMARR:
      if (a->kind != CJ_ATTR_ARRAY) return false;
      for (int i = 0; i < a->arr.n; i++)
        if (!a->arr.items[i] || a->arr.items[i]->kind != CJ_ATTR_SYMREF) return false;
      return true;
    case CJ_AK_I64ARR: return a->kind == CJ_ATTR_DENSE_ARRAY && a->darr.dtype == CJ_S64;
    case CJ_AK_BOOLARR: return a->kind == CJ_ATTR_DENSE_ARRAY && a->darr.dtype == CJ_PRED;
    case CJ_AK_I64DENSE:
      if (a->kind == CJ_ATTR_OPAQUE) /* #stablehlo.replica_group_mesh_axes<...> */
        return a->opaque.len >= 18 && memcmp(a->opaque.text, "#stablehlo.replica", 18) == 0;
      return a->kind == CJ_ATTR_DENSE && a->dense.type && a->dense.type->kind == CJ_TYPE_TENSOR &&
             a->dense.type->dtype == CJ_S64;
    case CJ_AK_ELEMENTS: return a->kind == CJ_ATTR_DENSE && a->dense.type;
    case CJ_AK_TYPE: return a->kind == CJ_ATTR_TYPE && a->type;
    case CJ_AK_DICT: return a->kind == CJ_ATTR_DICT;
    case CJ_AK_ARRAY: return a->kind == CJ_ATTR_ARRAY;
    case CJ_AK_STR_OR_DICT: return a->kind == CJ_ATTR_STRING || a->kind == CJ_ATTR_DICT;
    case CJ_AK_ENUM:
    case CJ_AK_STRUCT: return enum_or_struct_of(a, s->kind == CJ_AK_ENUM, s->sub);
    case CJ_AK_ENUMARR:
    case CJ_AK_STRUCTARR:
      if (a->kind != CJ_ATTR_ARRAY) return false;
      for (int i = 0; i < a->arr.n; i++)
        if (!enum_or_struct_of(a->arr.items[i], s->kind == CJ_AK_ENUMARR, s->sub)) return false;
      return true;
  }
  return false;
}

static CJ_MUST_USE cj_status check_struct_fields(const cj_op *op, const char *name, const cj_attr *a) {
  int bad = -1;
  if (a->kind == CJ_ATTR_STRUCT && !struct_fields_ok(a, &bad)) {
    static const char *const fk_names[] = {"an integer", "a list of integers", "a bool",
                                           "a float", "a type", "a #stablehlo<result_accuracy_mode>"};
    cj_field_kind fk = cj_struct_field_kind(a->st.sk, bad);
    char b1[160];
    CJV_FAIL(op, "attribute '%s': field '%s' must be %s, got %s", name,
             cj_struct_field_name(a->st.sk, bad),
             (unsigned)fk < sizeof fk_names / sizeof fk_names[0] ? fk_names[fk] : "?",
             attr_kind_noun(a->st.fields[bad], b1, sizeof b1));
  }
  return NULL;
}

static CJ_MUST_USE cj_status check_attrs(const cj_op *op, const cj_op_info *info) {
  for (const cj_attr_spec *s = info->attrs; s && s->name; s++) {
    const cj_attr *a = cjv_attr(op, s->name);
    if (!a) {
      if (s->flags & CJ_AF_REQUIRED) CJV_FAIL(op, "requires attribute '%s'", s->name);
      continue;
    }
    char b1[160], b2[160];
    if (!attr_matches(a, s))
      CJV_FAIL(op, "attribute '%s' must be %s, got %s", s->name, spec_kind_noun(s, b1, sizeof b1),
               attr_kind_noun(a, b2, sizeof b2));
    if (s->kind == CJ_AK_STRUCT) CJV_TRY(check_struct_fields(op, s->name, a));
    if (s->kind == CJ_AK_STRUCTARR)
      for (int i = 0; i < a->arr.n; i++) CJV_TRY(check_struct_fields(op, s->name, a->arr.items[i]));
  }
  return NULL;
}

/* ======================================================================== value types */

static bool storage_range(cj_dtype st, int64_t *lo, int64_t *hi) {
  int bits = cj_dtype_bits(st);
  cj_dtype_kind k = cj_dtype_kindof(st);
  if (bits <= 0 || bits > 64 || (k != CJ_DK_SINT && k != CJ_DK_UINT && k != CJ_DK_BOOL))
    return false;
  if (k == CJ_DK_SINT) {
    *lo = bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
    *hi = bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
  } else {
    *lo = 0;
    *hi = bits >= 63 ? INT64_MAX : ((int64_t)1 << bits) - 1;
  }
  return true;
}

/* The smallest positive (subnormal) and the largest finite value of a float dtype. */
static void float_range(cj_dtype dt, double *lo, double *hi) {
  const cj_dtype_info *d = cj_dtype_get(dt);
  int e = d->ebits, m = d->mbits, bias = d->bias;
  *lo = ldexp(1.0, 1 - bias - m);
  switch (d->fflags) {
    case CJ_FF_IEEE: *hi = ldexp(2.0 - ldexp(1.0, -m), (1 << e) - 2 - bias); break;
    case CJ_FF_FN: *hi = ldexp(2.0 - ldexp(1.0, 1 - m), (1 << e) - 1 - bias); break;
    case CJ_FF_E8M0:
      *lo = ldexp(1.0, -bias);
      *hi = ldexp(1.0, 254 - bias);
      break;
    default: *hi = ldexp(2.0 - ldexp(1.0, -m), (1 << e) - 1 - bias); break;
  }
}

/* Checks a value type (a result, a block argument, a function signature entry). `what` names
 * it in the message: "result #0", "argument #1 of region #0". */
static CJ_MUST_USE cj_status check_value_type(const cj_op *op, const char *what, const cj_type *t, int depth) {
  cjv_tbuf tb;
  if (!t) CJV_FAIL(op, "%s has no type", what);
  if (depth > 32) CJV_FAIL(op, "%s has a type nested too deeply", what);
  switch (t->kind) {
    case CJ_TYPE_TENSOR: {
      for (int32_t i = 0; i < t->rank; i++) {
        if (t->dims[i] < 0 && t->dims[i] != CJ_DYN)
          CJV_FAIL(op, "%s has a negative dimension size in %s", what, CJV_T(t, tb));
        if (t->bounds && t->bounds[i] != CJ_DYN) {
          if (t->dims[i] != CJ_DYN)
            CJV_FAIL(op, "%s: static dimension %d cannot have a bound in %s", what, i,
                     CJV_T(t, tb));
          if (t->bounds[i] < 0) CJV_FAIL(op, "%s: negative bound in %s", what, CJV_T(t, tb));
        }
      }
      const cj_type *e = t->elem;
      if (!e || (e->kind != CJ_TYPE_ELEM && e->kind != CJ_TYPE_QUANT))
        CJV_FAIL(op, "%s has an invalid element type in %s", what, CJV_T(t, tb));
      if (e->kind == CJ_TYPE_ELEM &&
          (!cj_dtype_is_valid(e->dtype) || e->dtype == CJ_TOKEN))
        CJV_FAIL(op, "%s has an invalid element type in %s", what, CJV_T(t, tb));
      if (e->kind == CJ_TYPE_QUANT) {
        const cj_quant *q = e->quant;
        if (!q) CJV_FAIL(op, "%s has an invalid quantized type", what);
        int64_t lo, hi;
        if (!storage_range(q->storage, &lo, &hi) || cj_dtype_kindof(q->storage) == CJ_DK_BOOL)
          CJV_FAIL(op, "%s: quantized storage type must be an integer type in %s", what,
                   CJV_T(t, tb));
        if (!cj_dtype_is_float(q->expressed))
          CJV_FAIL(op, "%s: quantized expressed type must be a floating-point type in %s", what,
                   CJV_T(t, tb));
        if (q->storage_min < lo || q->storage_max > hi || q->storage_min >= q->storage_max)
          CJV_FAIL(op,
                   "%s: quantization storage range [%lld, %lld] must lie within [%lld, %lld] "
                   "with min < max in %s",
                   what, (long long)q->storage_min, (long long)q->storage_max, (long long)lo,
                   (long long)hi, CJV_T(t, tb));
        if (q->nscales < 1) CJV_FAIL(op, "%s: quantized type has no scales", what);
        if (q->axis < 0 && q->nscales != 1)
          CJV_FAIL(op, "%s: per-tensor quantization must have exactly one scale in %s", what,
                   CJV_T(t, tb));
        double smin, smax;
        float_range(q->expressed, &smin, &smax);
        for (int32_t i = 0; i < q->nscales; i++) {
          if (!(q->scales[i] > 0) || !isfinite(q->scales[i]))
            CJV_FAIL(op, "%s: quantization scale %g must be positive and finite in %s", what,
                     q->scales[i], CJV_T(t, tb));
          if (q->scales[i] < smin || q->scales[i] > smax)
            CJV_FAIL(op, "%s: quantization scale %g is outside the range [%g, %g] of %s in %s",
                     what, q->scales[i], smin, smax, cj_dtype_get(q->expressed)->mlir,
                     CJV_T(t, tb));
          if (q->zero_points[i] < q->storage_min || q->zero_points[i] > q->storage_max)
            CJV_FAIL(op, "%s: zero point %lld is outside the storage range [%lld, %lld] in %s",
                     what, (long long)q->zero_points[i], (long long)q->storage_min,
                     (long long)q->storage_max, CJV_T(t, tb));
        }
        if (q->axis >= 0) {
          if (q->axis >= t->rank)
            CJV_FAIL(op, "%s: quantization dimension %d must be less than the rank %d of %s", what,
                     q->axis, t->rank, CJV_T(t, tb));
          if (t->dims[q->axis] != CJ_DYN && t->dims[q->axis] != q->nscales)
            CJV_FAIL(op,
                     "%s: quantized dimension %d has size %lld but the type has %d scales in %s",
                     what, q->axis, (long long)t->dims[q->axis], q->nscales, CJV_T(t, tb));
        }
      }
      return NULL;
    }
    case CJ_TYPE_TUPLE:
      for (int32_t i = 0; i < t->rank; i++)
        CJV_TRY(check_value_type(op, what, t->members[i], depth + 1));
      return NULL;
    case CJ_TYPE_UNRANKED:
      if (!t->elem) CJV_FAIL(op, "%s has an invalid element type", what);
      return NULL;
    case CJ_TYPE_TOKEN:
    case CJ_TYPE_OPAQUE:
    case CJ_TYPE_NONE: return NULL;
    case CJ_TYPE_ELEM:
    case CJ_TYPE_QUANT:
      /* bare element types are not values in StableHLO, but other dialects (arith, index) use
       * them; only the spec verifiers of StableHLO ops reject them */
      return NULL;
    case CJ_TYPE_FUNCTION: CJV_FAIL(op, "%s cannot have a function type", what);
  }
  return NULL;
}

/* The common value types (plain tensors, tokens) that need no further checks. */
static bool type_plainly_ok(const cj_type *t) {
  if (!t) return false;
  if (t->kind == CJ_TYPE_TOKEN) return true;
  if (t->kind != CJ_TYPE_TENSOR || t->bounds || !t->elem || t->elem->kind != CJ_TYPE_ELEM)
    return false;
  cj_dtype_kind k = cj_dtype_kindof(t->elem->dtype);
  if (k == CJ_DK_INVALID || k == CJ_DK_TOKEN) return false;
  if (t->num_elements >= 0) return true;
  for (int32_t i = 0; i < t->rank; i++)
    if (t->dims[i] < 0 && t->dims[i] != CJ_DYN) return false;
  return true;
}

/* ======================================================================== local structure */

static const char *terminator_name_for(const cj_op *parent) {
  switch (parent->kind) {
    case CJ_OP_FUNC: return "func.return";
    case CJ_OP_SDY_MANUAL_COMPUTATION: return "sdy.return";
    default: return "stablehlo.return";
  }
}

static bool terminator_ok(const cj_op *parent, const cj_op *t) {
  switch (parent->kind) {
    case CJ_OP_UNKNOWN: return true;
    case CJ_OP_FUNC: return t->kind == CJ_OP_FUNC_RETURN || t->kind == CJ_OP_RETURN;
    case CJ_OP_SDY_MANUAL_COMPUTATION: return t->kind == CJ_OP_SDY_RETURN;
    default: return t->kind == CJ_OP_RETURN;
  }
}

static CJ_MUST_USE cj_status check_count(const cj_op *op, const char *noun, int16_t expect, uint32_t got) {
  if (expect >= 0 && (uint32_t)expect != got)
    CJV_FAIL(op, "expects %d %s%s, got %u", expect, noun, expect == 1 ? "" : "s", got);
  return NULL;
}

/* Arity, operands present, attributes, regions and their terminators, result types. */
static CJ_MUST_USE cj_status verify_local(const cj_op *op) {
  if ((unsigned)op->kind >= CJ_OP_COUNT) CJV_FAIL(op, "has an invalid op kind %d", (int)op->kind);
  const cj_op_info *info = cj_op_info_get(op->kind);
  CJV_TRY(check_count(op, "operand", info->nopnds, op->nopnds));
  CJV_TRY(check_count(op, "result", info->nresults, op->nresults));
  CJV_TRY(check_count(op, "region", info->nregions, op->nregions));
  if (op->nsuccessors && op->kind != CJ_OP_UNKNOWN)
    CJV_FAIL(op, "cannot have successor blocks");
  for (uint32_t i = 0; i < op->nopnds; i++)
    if (!op->operands[i]) CJV_FAIL(op, "operand #%u is missing", i);
  char what[64];
  for (uint32_t i = 0; i < op->nresults; i++) {
    if (type_plainly_ok(op->results[i].type)) continue;
    snprintf(what, sizeof what, "result #%u", i);
    CJV_TRY(check_value_type(op, what, op->results[i].type, 0));
  }
  if (op->kind != CJ_OP_UNKNOWN) CJV_TRY(check_attrs(op, info));

  if ((info->flags & CJ_OPF_TERMINATOR) && op->next)
    CJV_FAIL(op, "is a terminator and must be the last op of its block");

  for (uint32_t r = 0; r < op->nregions; r++) {
    const cj_region *reg = &op->regions[r];
    if (op->kind != CJ_OP_UNKNOWN) {
      bool decl_ok = op->kind == CJ_OP_FUNC;
      if (reg->nblocks == 0 && !decl_ok) CJV_FAIL(op, "region #%u is empty", r);
      if (reg->nblocks > 1) CJV_FAIL(op, "region #%u must have exactly one block, got %u", r,
                                     reg->nblocks);
    }
    for (const cj_block *b = reg->first; b; b = b->next) {
      for (uint32_t i = 0; i < b->nargs; i++) {
        if (type_plainly_ok(b->args[i].type)) continue;
        snprintf(what, sizeof what, "argument #%u of region #%u", i, r);
        CJV_TRY(check_value_type(op, what, b->args[i].type, 0));
      }
      if (op->kind == CJ_OP_UNKNOWN) continue;
      const char *tname = terminator_name_for(op);
      const cj_op *t = b->last;
      if (!t) CJV_FAIL(op, "region #%u must end with %s, but its block is empty", r, tname);
      if (!terminator_ok(op, t))
        CJV_FAIL(op, "region #%u must end with %s, got %s", r, tname, t->name);
    }
  }
  return NULL;
}

/* The op's spec verifier (the VERIFY column of ops.def). */
static CJ_MUST_USE cj_status spec_verify(const cj_op *op) {
  const cj_op_info *info = cj_op_info_get(op->kind);
  return info->verify ? info->verify(op) : NULL;
}

/* ======================================================================== scope (dominance) */

#define TOMB ((const cj_value *)(uintptr_t)1)

#define SCOPE_INLINE 128 /* entries kept on the stack before the table moves to the heap */

typedef struct scope {
  const cj_value **keys;
  uint32_t *depth;
  uint32_t cap, used, live;
  const cj_value **stack;
  uint32_t sp, scap;
  const cj_value *ikeys[SCOPE_INLINE]; /* the first table and stack (small modules) */
  uint32_t idepth[SCOPE_INLINE];
  const cj_value *istack[SCOPE_INLINE];
} scope;

static void scope_init(scope *s) {
  memset(s->ikeys, 0, sizeof s->ikeys);
  s->keys = s->ikeys;
  s->depth = s->idepth;
  s->cap = SCOPE_INLINE;
  s->used = s->live = 0;
  s->stack = s->istack;
  s->sp = 0;
  s->scap = SCOPE_INLINE;
}

static bool scope_rehash(scope *s, uint32_t ncap) {
  const cj_value **keys = calloc(ncap, sizeof *keys);
  uint32_t *depth = malloc(sizeof *depth * ncap);
  if (!keys || !depth) {
    free(keys);
    free(depth);
    return false;
  }
  for (uint32_t i = 0; i < s->cap; i++) {
    const cj_value *k = s->keys[i];
    if (!k || k == TOMB) continue;
    uint32_t j = cj_hash_ptr(k) & (ncap - 1);
    while (keys[j]) j = (j + 1) & (ncap - 1);
    keys[j] = k;
    depth[j] = s->depth[i];
  }
  if (s->keys != s->ikeys) {
    free(s->keys);
    free(s->depth);
  }
  s->keys = keys;
  s->depth = depth;
  s->cap = ncap;
  s->used = s->live;
  return true;
}

static void scope_free(scope *s) {
  if (s->keys != s->ikeys) {
    free(s->keys);
    free(s->depth);
  }
  if (s->stack != s->istack) free(s->stack);
  s->keys = NULL;
  s->stack = NULL;
}

/* false on out-of-memory */
static bool scope_add(scope *s, const cj_value *v, uint32_t depth) {
  if ((s->used + 1) * 2 > s->cap) {
    uint32_t ncap = s->cap;
    while ((s->live + 1) * 4 > ncap) ncap *= 2;
    if (!scope_rehash(s, ncap)) return false;
  }
  if (s->sp == s->scap) {
    uint32_t n = s->scap * 2;
    const cj_value **st = malloc(sizeof *st * n);
    if (!st) return false;
    memcpy(st, s->stack, sizeof *st * s->sp);
    if (s->stack != s->istack) free(s->stack);
    s->stack = st;
    s->scap = n;
  }
  uint32_t j = cj_hash_ptr(v) & (s->cap - 1);
  uint32_t tomb = UINT32_MAX;
  while (s->keys[j]) {
    if (s->keys[j] == v) {
      s->depth[j] = depth; /* defined twice: cannot happen in a well-formed IR */
      return true;
    }
    if (s->keys[j] == TOMB && tomb == UINT32_MAX) tomb = j;
    j = (j + 1) & (s->cap - 1);
  }
  if (tomb != UINT32_MAX)
    j = tomb;
  else
    s->used++;
  s->keys[j] = v;
  s->depth[j] = depth;
  s->live++;
  s->stack[s->sp++] = v;
  return true;
}

/* The depth v was defined at, or -1 if it is not in scope. */
static int64_t scope_find(const scope *s, const cj_value *v) {
  uint32_t j = cj_hash_ptr(v) & (s->cap - 1);
  while (s->keys[j]) {
    if (s->keys[j] == v) return s->depth[j];
    j = (j + 1) & (s->cap - 1);
  }
  return -1;
}

static void scope_pop_to(scope *s, uint32_t mark) {
  while (s->sp > mark) {
    const cj_value *v = s->stack[--s->sp];
    uint32_t j = cj_hash_ptr(v) & (s->cap - 1);
    while (s->keys[j]) {
      if (s->keys[j] == v) {
        s->keys[j] = TOMB;
        s->live--;
        break;
      }
      j = (j + 1) & (s->cap - 1);
    }
  }
}

/* ======================================================================== the walk */

typedef struct walker {
  scope sc;
  uint32_t depth;     /* regions enclosing the block being walked (module body = 0) */
  uint32_t iso_floor; /* values defined at a smaller depth are outside the isolated region */
  const cj_op *iso_op;
} walker;

static CJ_MUST_USE cj_status walk_block(walker *w, const cj_block *b);

/* Graph regions (the module body, and the regions of ops we only carry, as MLIR treats
 * unregistered ops) allow uses before definitions: every value of the region's blocks is put in
 * scope before the ops are walked. */
static CJ_MUST_USE cj_status declare_graph_block(walker *w, const cj_block *b) {
  for (uint32_t i = 0; i < b->nargs; i++)
    if (!scope_add(&w->sc, &b->args[i], w->depth)) return cj_oom();
  for (const cj_op *op = b->first; op; op = op->next)
    for (uint32_t i = 0; i < op->nresults; i++)
      if (!scope_add(&w->sc, &op->results[i], w->depth)) return cj_oom();
  return NULL;
}

static void value_label(const cj_value *v, char *buf, size_t cap) {
  if (v->name)
    snprintf(buf, cap, " (%%%s)", v->name);
  else
    buf[0] = 0;
}

static CJ_MUST_USE cj_status check_operands_in_scope(walker *w, const cj_op *op) {
  for (uint32_t i = 0; i < op->nopnds; i++) {
    const cj_value *v = op->operands[i];
    int64_t d = scope_find(&w->sc, v);
    if (d >= 0 && (uint32_t)d >= w->iso_floor) continue;
    char label[96];
    value_label(v, label, sizeof label);
    if (d >= 0)
      CJV_FAIL(op, "operand #%u%s is defined outside the region of %s, which is isolated from "
                   "above",
               i, label, w->iso_op ? w->iso_op->name : "its parent");
    if (v->def && v->def->block == op->block)
      CJV_FAIL(op, "operand #%u%s is used before its definition", i, label);
    CJV_FAIL(op, "operand #%u%s does not dominate this use (it is not defined in an enclosing "
                 "scope)",
             i, label);
  }
  return NULL;
}

static CJ_MUST_USE cj_status walk_op(walker *w, const cj_op *op) {
  const cj_op_info *info = cj_op_info_get(op->kind);
  CJV_TRY(verify_local(op));
  CJV_TRY(check_operands_in_scope(w, op));

  if (op->nregions) {
    if (w->depth >= MAX_REGION_DEPTH)
      CJV_FAIL(op, "regions are nested more than %d deep", MAX_REGION_DEPTH);
    uint32_t saved_floor = w->iso_floor;
    const cj_op *saved_iso = w->iso_op;
    if (info->flags & CJ_OPF_ISOLATED) {
      w->iso_floor = w->depth + 1;
      w->iso_op = op;
    }
    w->depth++;
    for (uint32_t r = 0; r < op->nregions; r++) {
      uint32_t mark = w->sc.sp;
      cj_status st = NULL;
      if (op->kind == CJ_OP_UNKNOWN)
        for (const cj_block *b = op->regions[r].first; b && !st; b = b->next)
          st = declare_graph_block(w, b);
      /* blocks of a multi-block region (only in ops we carry) see the values of the blocks
       * before them; StableHLO regions have one block */
      for (const cj_block *b = op->regions[r].first; b && !st; b = b->next) st = walk_block(w, b);
      if (st) {
        w->depth--;
        w->iso_floor = saved_floor;
        w->iso_op = saved_iso;
        return st;
      }
      scope_pop_to(&w->sc, mark);
    }
    w->depth--;
    w->iso_floor = saved_floor;
    w->iso_op = saved_iso;
  }

  CJV_TRY(spec_verify(op));
  for (uint32_t i = 0; i < op->nresults; i++)
    if (!scope_add(&w->sc, &op->results[i], w->depth)) return cj_oom();
  return NULL;
}

static CJ_MUST_USE cj_status walk_block(walker *w, const cj_block *b) {
  for (uint32_t i = 0; i < b->nargs; i++)
    if (!scope_add(&w->sc, &b->args[i], w->depth)) return cj_oom();
  for (const cj_op *op = b->first; op; op = op->next) CJV_TRY(walk_op(w, op));
  return NULL;
}

static CJ_MUST_USE cj_status check_symbols_unique(const cj_block *top) {
  /* the symbols' names, gathered once (top-level blocks hold a few functions) */
  const cj_attr *small[64];
  const cj_op *small_ops[64];
  const cj_attr **names = small;
  const cj_op **ops = small_ops;
  uint32_t n = 0, cap = 64;
  cj_status st = NULL;
  for (const cj_op *a = top->first; a && !st; a = a->next) {
    const cj_attr *na = cjv_attr(a, "sym_name");
    if (!na || na->kind != CJ_ATTR_STRING) continue;
    for (uint32_t j = 0; j < n; j++) {
      const cj_attr *nb = names[j];
      if (nb->str.len == na->str.len && memcmp(nb->str.s, na->str.s, na->str.len) == 0) {
        char where[128];
        cj_op_where(ops[j], where, sizeof where);
        st = cj_op_error(a, CJ_INVALID_ARGUMENT, "redefinition of symbol '%s' (first defined at %s)",
                         na->str.s, where);
        break;
      }
    }
    if (st) break;
    if (n == cap) {
      uint32_t ncap = cap * 2;
      const cj_attr **nn = malloc(sizeof *nn * ncap);
      const cj_op **no = malloc(sizeof *no * ncap);
      if (!nn || !no) {
        free(nn);
        free(no);
        st = cj_oom();
        break;
      }
      memcpy(nn, names, sizeof *nn * n);
      memcpy(no, ops, sizeof *no * n);
      if (names != small) {
        free(names);
        free(ops);
      }
      names = nn;
      ops = no;
      cap = ncap;
    }
    names[n] = na;
    ops[n++] = a;
  }
  if (names != small) {
    free(names);
    free(ops);
  }
  return st;
}

cj_status cj_verify_op(const cj_op *op) {
  if (!op) return cj_invalid("cj_verify_op: no op");
  CJV_TRY(verify_local(op));
  return spec_verify(op);
}

cj_status cj_verify_module(const cj_module *m) {
  if (!m) return cj_invalid("cj_verify_module: no module");
  if (m->body.nblocks > 1) return cj_invalid("module body must have exactly one block");
  const cj_block *top = m->body.first;
  if (!top) return NULL;
  CJV_TRY(check_symbols_unique(top));
  walker w;
  w.depth = w.iso_floor = 0;
  w.iso_op = NULL;
  scope_init(&w.sc);
  cj_status st = declare_graph_block(&w, top); /* the module body is a graph region */
  if (!st) st = walk_block(&w, top);
  scope_free(&w.sc);
  return st;
}
